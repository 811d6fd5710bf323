import BeaconModel

/// Writing a plan as a venue file (docs/venue.md), in the flow style of the shipped venues.
extension RandomVenue.Plan {
    func yaml(seed: UInt64, family: RandomVenue.Family) -> String {
        let site = "random-\(family.rawValue)-\(seed)"
        let outsideGateways = gateways.filter { $0.zone == nil }.count
        let covered = Set(gateways.compactMap(\.zone))
        let uncovered = zones.filter { !covered.contains($0.id) }.count
        var lines = [
            "# Random venue, family \(family.rawValue), seed \(seed): beacon-sim venue --random --seed \(seed)"
                + " --family \(family.rawValue)\(radio.foreign == nil ? "" : " --radio foreign") (docs/simulator.md).",
            "# \(zones.count) zones, \(doors.count) doors, \(walls.count) walls, \(gateways.count) gateways"
                + " (\(outsideGateways) outside every zone; zones without one: \(uncovered)),"
                + " \(tags.reduce(0) { $0 + $1.count }) tags. Format: docs/venue.md.",
            "site: \(site)",
            "name: \"\(name) (seed \(seed)\(radio.foreign == nil ? "" : ", foreign radio"))\"",
            "zones:",
        ]
        for zone in zones {
            let rect = zone.rect
            lines.append(
                "  - { id: \(zone.id), name: \"\(zone.name)\", rect: { x: \(n(rect.x)), y: \(n(rect.y)),"
                    + " width: \(n(rect.width)), height: \(n(rect.height)) } }")
        }
        lines.append("doors:")
        for door in doors {
            lines.append(
                "  - { between: [\(door.between.0), \(door.between.1)], at: \(point(door.at)), width: \(n(door.width)) }"
            )
        }
        lines.append("gateways:")
        for gateway in gateways {
            let zone = gateway.zone.map { "zone: \($0), " } ?? ""
            let antenna = gateway.antenna.map {
                ", antenna: { facing: \(n($0.facing)), frontToBackDB: \(n($0.frontToBackDB)) }"
            }
            lines.append(
                "  - { id: \(gateway.id), \(zone)position: \(point(gateway.position)), height: \(n(gateway.height)),"
                    + " gainOffset: \(n(gateway.gain))\(antenna ?? "") }")
        }
        lines.append("walls:")
        for wall in walls {
            lines.append(
                "  - { from: \(point(wall.from)), to: \(point(wall.to)), material: \(material(wall.attenuation)),"
                    + " attenuation: \(n(wall.attenuation)) }")
        }
        lines.append("tags:")
        for tag in tags {
            let txPower = tag.txPower.map { " txPower: \($0)," } ?? ""
            let silent = tag.advertisesPower ? "" : " advertisesPower: false,"
            lines.append(
                "  - { id: \(tag.id), beacon: \"\(tag.beacon)\", carrier: \(tag.carrier.rawValue),"
                    + " interval: \(n(tag.interval)),\(txPower)\(silent) start: \(tag.start), count: \(tag.count) }")
        }
        lines += [
            "radio:",
            "  p0Spread: \(n(radio.p0Spread))",
            "  pathLossExponent: \(n(radio.pathLossExponent))",
            "  shadowingSigma: \(n(radio.shadowingSigma))",
            "  shadowingCorrelationMetres: \(n(radio.shadowingCorrelationMetres))",
            "  noiseSigma: \(n(radio.noiseSigma))",
            "  deepFadeShare: \(n(radio.deepFadeShare))",
            "  deepFadeDB: \(n(radio.deepFadeDB))",
            "  fadingSigma: \(n(radio.fadingSigma))",
            "  fadingTauSeconds: \(n(radio.fadingTauSeconds))",
            "  bodyLossDB: \(n(radio.bodyLossDB))",
            "  packetLoss: \(n(radio.packetLoss))",
        ]
        if let twoSlopes = radio.twoSlopes {
            lines += [
                "  breakpointMetres: \(n(twoSlopes.breakpointMetres))",
                "  farPathLossExponent: \(n(twoSlopes.farPathLossExponent))",
            ]
        }
        if let interference = radio.interference {
            lines += [
                "  interferenceBurstsPerHour: \(n(interference.perHour))",
                "  interferenceBurstSeconds: \(n(interference.seconds))",
                "  interferencePacketLoss: \(n(interference.packetLoss))",
                "  interferenceNoiseDB: \(n(interference.noiseDB))",
            ]
        }
        lines += [
            "  clockOffsetSigmaSeconds: \(n(radio.clockOffsetSigmaSeconds, places: 3))",
            "  clockJitterSeconds: \(n(radio.clockJitterSeconds, places: 3))",
        ]
        if let foreign = radio.foreign {
            lines += [
                "  foreign:",
                "    nakagamiM: \(n(foreign.nakagamiM))",
                "    coarseShadowingSigma: \(n(foreign.coarseShadowingSigma))",
                "    coarseShadowingMetres: \(n(foreign.coarseShadowingMetres))",
                "    channelSigma: \(n(foreign.channelSigma))",
                "    channelCorrelationMetres: \(n(foreign.channelCorrelationMetres))",
                "    sensitivitySpreadDB: \(n(foreign.sensitivitySpreadDB))",
                "    quantisedShare: \(n(foreign.quantisedShare))",
                "    quantisationDB: \(n(foreign.quantisationDB))",
                "    saturatedShare: \(n(foreign.saturatedShare))",
                "    saturationDBm: \(n(foreign.saturationDBm))",
                "    fadeBurstsPerMinute: \(n(foreign.fadeBurstsPerMinute))",
                "    fadeBurstSeconds: \(n(foreign.fadeBurstSeconds))",
                "    fadeBurstDB: \(n(foreign.fadeBurstDB))",
                "    crowdedShare: \(n(foreign.crowdedShare))",
                "    crowdPeriodMinutes: \(n(foreign.crowdPeriodMinutes))",
                "    crowdLossDB: \(n(foreign.crowdLossDB))",
            ]
        }
        return lines.joined(separator: "\n") + "\n"
    }

    /// The material whose published range the loss falls in (the loss itself is written too).
    private func material(_ attenuation: Double) -> String {
        attenuation < 6 ? "light" : attenuation < 10.5 ? "heavy" : "concrete"
    }

    private func point(_ p: Point) -> String { "[\(n(p.x)), \(n(p.y))]" }

    /// A number rounded to the centimetre (or hundredth of a dB; `places` for finer), without a trailing ".0".
    private func n(_ value: Double, places: Int = 2) -> String {
        let scale = (0..<places).reduce(1.0) { scale, _ in scale * 10 }
        let rounded = (value * scale).rounded() / scale
        if rounded == rounded.rounded() { return String(Int(rounded)) }
        return "\(rounded)"
    }
}
