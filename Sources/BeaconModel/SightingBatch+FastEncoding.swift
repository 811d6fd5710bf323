/// The agent writes a batch for every second of every gateway: `ContractCoding.encode` (Foundation's JSONEncoder) took
/// a sixth of the agent's time. This writes the same bytes — sorted keys, no escaped slashes, numbers as JSONEncoder
/// prints them — directly; a test compares both on random batches.
extension SightingBatch {
    /// The batch as `ContractCoding.encode` gives it; nil when a number is not finite (which that refuses).
    public func fastEncoded() -> [UInt8]? {
        var out = JSONOutput()
        out.bytes.reserveCapacity(64 + sightings.count * 150)
        out.raw("{\"boot\":")
        out.string(boot)
        out.raw(",\"clockSynced\":")
        out.raw(clockSynced ? "true" : "false")
        out.raw(",\"gateway\":")
        out.string(gateway.rawValue)
        out.raw(",\"sent\":")
        guard out.number(sent) else { return nil }
        out.raw(",\"seq\":")
        out.raw(String(seq))
        out.raw(",\"sightings\":[")
        for (index, sighting) in sightings.enumerated() {
            if index > 0 { out.raw(",") }
            guard out.sighting(sighting) else { return nil }
        }
        out.raw("],\"version\":")
        out.raw(String(version))
        out.raw("}")
        return out.bytes
    }
}

/// Bytes of JSON being written, as JSONEncoder writes them.
struct JSONOutput {
    static let hexDigits = Array("0123456789abcdef".utf8)
    var bytes: [UInt8] = []

    mutating func raw(_ text: StaticString) {
        text.withUTF8Buffer { bytes.append(contentsOf: $0) }
    }

    mutating func raw(_ text: String) {
        bytes.append(contentsOf: text.utf8)
    }

    /// A number as JSONEncoder prints it: Swift's shortest form without a trailing ".0".
    mutating func number(_ value: Double) -> Bool {
        guard value.isFinite else { return false }
        var text = value.description
        if text.hasSuffix(".0") { text.removeLast(2) }
        raw(text)
        return true
    }

    mutating func string(_ value: String) {
        bytes.append(UInt8(ascii: "\""))
        // Identifiers and addresses need no escaping: copied whole, not byte by byte.
        let plain = value.utf8.withContiguousStorageIfAvailable { utf8 in
            !utf8.contains { $0 < 0x20 || $0 == UInt8(ascii: "\"") || $0 == UInt8(ascii: "\\") }
        }
        if plain == true {
            bytes.append(contentsOf: value.utf8)
            bytes.append(UInt8(ascii: "\""))
            return
        }
        for byte in value.utf8 {
            switch byte {
            case UInt8(ascii: "\""): raw("\\\"")
            case UInt8(ascii: "\\"): raw("\\\\")
            case 0x08: raw("\\b")
            case 0x0C: raw("\\f")
            case 0x0A: raw("\\n")
            case 0x0D: raw("\\r")
            case 0x09: raw("\\t")
            case 0x00..<0x20:
                raw("\\u00")
                bytes.append(Self.hexDigits[Int(byte >> 4)])
                bytes.append(Self.hexDigits[Int(byte & 0x0F)])
            default: bytes.append(byte)
            }
        }
        bytes.append(UInt8(ascii: "\""))
    }

    mutating func sighting(_ sighting: Sighting) -> Bool {
        raw("{")
        if let address = sighting.address {
            raw("\"address\":")
            string(address)
            raw(",")
        }
        raw("\"beacon\":")
        string(sighting.beacon)
        if let extras = sighting.extras {
            raw(",\"extras\":{")
            var first = true
            if let tlm = extras.tlm {
                raw("\"tlm\":")
                guard telemetry(tlm) else { return false }
                first = false
            }
            if let url = extras.url {
                if !first { raw(",") }
                raw("\"url\":")
                string(url)
            }
            raw("}")
        }
        if let kind = sighting.kind {
            raw(",\"kind\":")
            string(kind.rawValue)
        }
        raw(",\"rssi\":")
        raw(String(sighting.rssi))
        raw(",\"t\":")
        guard number(sighting.t) else { return false }
        if let txPower = sighting.txPower {
            raw(",\"txPower\":")
            raw(String(txPower))
        }
        raw("}")
        return true
    }

    mutating func telemetry(_ tlm: Telemetry) -> Bool {
        raw("{")
        if let count = tlm.advertisingCount {
            raw("\"advertisingCount\":")
            raw(String(count))
            raw(",")
        }
        if let battery = tlm.batteryMilliVolts {
            raw("\"batteryMilliVolts\":")
            raw(String(battery))
            raw(",")
        }
        if let text = tlm.raw {
            raw("\"raw\":")
            string(text)
            raw(",")
        }
        if let seconds = tlm.secondsSinceBoot {
            raw("\"secondsSinceBoot\":")
            guard number(seconds) else { return false }
            raw(",")
        }
        if let temperature = tlm.temperatureCelsius {
            raw("\"temperatureCelsius\":")
            guard number(temperature) else { return false }
            raw(",")
        }
        raw("\"version\":")
        raw(String(tlm.version))
        raw("}")
        return true
    }
}
