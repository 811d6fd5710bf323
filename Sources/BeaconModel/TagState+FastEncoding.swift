/// The hub publishes a tag's retained state on every tick that changed it (10,000 tags: thousands a second), and
/// Foundation's JSONEncoder took 8 % of a loaded hub's CPU under the core's lock. This writes the same bytes
/// (sorted keys, `zone` as an explicit null, numbers as JSONEncoder prints them) directly; a test compares both on
/// random states.
extension TagState {
    /// The state as `ContractCoding.encode` gives it; nil when a number is not finite (which that refuses).
    public func fastEncoded() -> [UInt8]? {
        var out = JSONOutput()
        out.bytes.reserveCapacity(192 + gateways.count * 110)
        out.raw("{")
        if let adverts {
            if let expected = adverts.expectedPerMinute {
                out.raw("\"adverts\":{\"expectedPerMinute\":")
                guard out.number(expected) else { return nil }
                out.raw(",\"seenPerMinute\":")
            } else {
                out.raw("\"adverts\":{\"seenPerMinute\":")
            }
            guard out.number(adverts.seenPerMinute) else { return nil }
            out.raw(",\"t\":")
            guard out.number(adverts.t) else { return nil }
            out.raw("},")
        }
        if let battery {
            out.raw("\"battery\":{\"level\":")
            out.string(battery.level.rawValue)
            out.raw(",\"milliVolts\":")
            out.raw(String(battery.milliVolts))
            out.raw(",\"t\":")
            guard out.number(battery.t) else { return nil }
            if let trend = battery.trendPerWeek {
                out.raw(",\"trendPerWeek\":")
                guard out.number(trend) else { return nil }
            }
            out.raw("},")
        }
        out.raw("\"beacon\":")
        out.string(beacon)
        out.raw(",\"confidence\":")
        guard out.number(confidence) else { return nil }
        out.raw(",\"gateways\":[")
        for (index, reading) in gateways.enumerated() {
            if index > 0 { out.raw(",") }
            out.raw("{")
            if let distance = reading.distance {
                out.raw("\"distance\":")
                guard out.number(distance) else { return nil }
                out.raw(",")
            }
            out.raw("\"gateway\":")
            out.string(reading.gateway.rawValue)
            out.raw(",\"lastSeen\":")
            guard out.number(reading.lastSeen) else { return nil }
            out.raw(",\"proximity\":")
            out.string(reading.proximity.rawValue)
            out.raw(",\"rssi\":")
            out.raw(String(reading.rssi))
            out.raw("}")
        }
        out.raw("]")
        if let lastSeen {
            out.raw(",\"lastSeen\":")
            guard out.number(lastSeen) else { return nil }
        }
        if let lastSeenGateway {
            out.raw(",\"lastSeenGateway\":")
            out.string(lastSeenGateway.rawValue)
        }
        if let lastSeenZone {
            out.raw(",\"lastSeenZone\":")
            out.string(lastSeenZone.rawValue)
        }
        if let missing {
            out.raw(missing ? ",\"missing\":true" : ",\"missing\":false")
        }
        if let position {
            out.raw(",\"position\":{\"radius\":")
            guard out.number(position.radius) else { return nil }
            out.raw(",\"x\":")
            guard out.number(position.x) else { return nil }
            out.raw(",\"y\":")
            guard out.number(position.y) else { return nil }
            out.raw("}")
        }
        out.raw(",\"since\":")
        guard out.number(since) else { return nil }
        out.raw(",\"state\":")
        out.string(state.rawValue)
        out.raw(",\"tag\":")
        out.string(tag.rawValue)
        if let telemetry {
            out.raw(",\"telemetry\":{")
            var first = true
            func key(_ name: String) {
                out.raw(first ? "\"\(name)\":" : ",\"\(name)\":")
                first = false
            }
            if let count = telemetry.advertisingCount {
                key("advertisingCount")
                out.raw(String(count))
            }
            if let uptime = telemetry.secondsSinceBoot {
                key("secondsSinceBoot")
                guard out.number(uptime) else { return nil }
            }
            key("t")
            guard out.number(telemetry.t) else { return nil }
            if let temperature = telemetry.temperatureCelsius {
                key("temperatureCelsius")
                guard out.number(temperature) else { return nil }
            }
            out.raw("}")
        }
        out.raw(",\"version\":")
        out.raw(String(version))
        out.raw(",\"zone\":")
        if let zone {
            out.string(zone.rawValue)
        } else {
            out.raw("null")
        }
        out.raw("}")
        return out.bytes
    }
}
