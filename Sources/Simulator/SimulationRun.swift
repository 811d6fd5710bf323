import BeaconModel
import Foundation

/// `beacon-sim run VENUE --out DIR`: a seeded run written as `sightings.jsonl` (the contract's sighting lines),
/// `truth.jsonl` (one true interval per line) and `near-boundary.jsonl` (when each tag was near a zone boundary),
/// optionally gzip-compressed; unless told not to, also the decisions of the position oracle (`oracle.jsonl`, exact
/// map) and of the nominal-model reference (`nominal.jsonl`) as event lines; on request the oracle that knows all but
/// the shadowing field (`unshadowed.jsonl`).
public enum SimulationRun {
    /// What a run produced.
    public struct Summary: Sendable {
        public var sightings: Int
        public var truthIntervals: Int
        public var tags: Int
        public var gateways: Int
        public var wallSeconds: Double
        /// Of `wallSeconds`, the time the oracle and the references took (0 without them).
        public var oracleSeconds: Double = 0
        /// The oracle's grid: cells and their side, metres (nil without an oracle).
        public var oracleCells: (count: Int, size: Double)?
        /// Lines of `near-boundary.jsonl`, and the seconds of `wallSeconds` spent finding them.
        public var nearBoundaryIntervals = 0
        public var nearBoundarySeconds = 0.0
        /// Of `sightings`, the gateways' sightings of each other's own beacons (`gatewayBeacons`).
        public var gatewayBeaconSightings = 0
    }

    public static func writeFiles(
        venue: Venue, seed: UInt64, start: Double, duration: Double, directory: String, gzip: Bool,
        oracle: Bool = false, gatewayBeacons: Bool = false, unshadowedOracle: Bool = false,
        gatewayBeaconInterval: Double = 0.2
    ) throws -> Summary {
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let suffix = gzip ? ".jsonl.gz" : ".jsonl"
        let sightings = try LineFileWriter(path: "\(directory)/sightings\(suffix)", gzip: gzip)
        let truth = try LineFileWriter(path: "\(directory)/truth\(suffix)", gzip: gzip)
        let clock = ContinuousClock()
        let began = clock.now
        var simulation = VenueSimulation(venue: venue, seed: seed, start: start)
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        // Positions from copies of the walkers, before the run moves them.
        let nearStarted = clock.now
        let near = simulation.nearBoundaryIntervals(until: start + duration, boundaries: ZoneBoundaries(venue: venue))
        let nearWriter = try LineFileWriter(path: "\(directory)/near-boundary\(suffix)", gzip: gzip)
        for interval in near {
            if let data = try? encoder.encode(interval) { nearWriter.write(String(decoding: data, as: UTF8.self)) }
        }
        try nearWriter.close()
        let nearTime = clock.now - nearStarted
        // The oracles see every sighting as it is made, with the run's own radio model and tags.
        var oracles: [(filter: PositionOracle, writer: LineFileWriter)] = []
        let building = clock.now
        let references: [(PositionOracle.Knowledge, String)] =
            (oracle ? [(.exact, "oracle"), (.nominal, "nominal")] : [])
            + (unshadowedOracle ? [(.unshadowed, "unshadowed")] : [])
        for (knowledge, name) in references {
            let filter = PositionOracle(
                venue: venue, radio: simulation.radio, tags: simulation.tags, knowledge: knowledge)
            oracles.append((filter, try LineFileWriter(path: "\(directory)/\(name)\(suffix)", gzip: gzip)))
        }
        var oracleTime = clock.now - building
        // The gateways' own beacons, in the same radio, with seeds of their own (the tags' draws stay as
        // they were): written in time order among the tags' sightings, each as its hearer's sighting of the beacon
        // the venue file names for the gateway (`beacon:`), or the simulator's own id.
        let beacons =
            gatewayBeacons
            ? GatewayBeacons(
                venue: venue, radio: simulation.radio, intervalSeconds: gatewayBeaconInterval, seed: seed &+ 0x6A7E)
            : nil
        var air = beacons.map { GatewayBeacons.Air($0, start: start, seed: seed &+ 0x6A7F) }
        let beaconIDs = GatewayBeacons.beaconIDs(of: venue)
        let beaconPower = beacons.map { Int($0.measuredPower) }
        var airHorizon = start
        var onAir: [GatewayBeacons.Reception] = []
        var onAirNext = 0
        var gatewaySightings = 0
        func writeAir(through t: Double) {
            guard air != nil else { return }
            while airHorizon <= t {
                airHorizon += 1
                onAir.removeFirst(onAirNext)
                onAirNext = 0
                onAir += air!.advance(until: airHorizon)
                onAir.sort { $0.t < $1.t }
            }
            while onAirNext < onAir.count && onAir[onAirNext].t <= t {
                let heard = onAir[onAirNext]
                onAirNext += 1
                gatewaySightings += 1
                sightings.write(
                    line(
                        for: SightingLine(
                            t: heard.t, gateway: heard.rx, beacon: beaconIDs[heard.tx] ?? "", rssi: heard.rssi,
                            txPower: beaconPower)))
            }
        }
        var events: [ZoneEvent] = []
        func writeEvents(_ writer: LineFileWriter) {
            for event in events {
                if let data = try? encoder.encode(event) { writer.write(String(decoding: data, as: UTF8.self)) }
            }
            events.removeAll(keepingCapacity: true)
        }
        simulation.run(
            until: start + duration,
            sighting: { sighting in
                writeAir(through: sighting.t)
                sightings.write(line(for: sighting))
                guard !oracles.isEmpty else { return }
                let before = clock.now
                for index in oracles.indices {
                    oracles[index].filter.ingest(sighting, events: &events)
                    writeEvents(oracles[index].writer)
                }
                oracleTime += clock.now - before
            },
            truth: { interval in
                if let data = try? encoder.encode(interval) { truth.write(String(decoding: data, as: UTF8.self)) }
            })
        writeAir(through: start + duration - 1e-9)
        for index in oracles.indices {
            oracles[index].filter.finish(at: start + duration, events: &events)
            writeEvents(oracles[index].writer)
            try oracles[index].writer.close()
        }
        try sightings.close()
        try truth.close()
        return Summary(
            sightings: sightings.lines, truthIntervals: truth.lines, tags: simulation.tags.count,
            gateways: venue.gateways.count, wallSeconds: seconds(clock.now - began), oracleSeconds: seconds(oracleTime),
            oracleCells: oracles.first?.filter.cells, nearBoundaryIntervals: near.count,
            nearBoundarySeconds: seconds(nearTime), gatewayBeaconSightings: gatewaySightings)
    }

    private static func seconds(_ duration: Duration) -> Double {
        let (seconds, attoseconds) = duration.components
        return Double(seconds) + Double(attoseconds) / 1e18
    }

    /// A sighting line, formatted by hand: JSONEncoder would dominate the run time for millions of lines.
    /// Ids are restricted to characters that need no escaping (docs/mqtt.md).
    public static func line(for sighting: SightingLine) -> String {
        let milliseconds = Int64((sighting.t * 1000).rounded())
        let fraction = String(milliseconds % 1000)
        var text = "{\"t\":\(milliseconds / 1000).\(String(repeating: "0", count: 3 - fraction.count))\(fraction)"
        text +=
            ",\"gateway\":\"\(sighting.gateway.rawValue)\",\"beacon\":\"\(sighting.beacon)\",\"rssi\":\(sighting.rssi)"
        if let txPower = sighting.txPower { text += ",\"txPower\":\(txPower)" }
        if let kind = sighting.kind { text += ",\"kind\":\"\(kind.rawValue)\"" }
        if let extras = sighting.extras, let json = try? ContractCoding.encode(extras) {
            text += ",\"extras\":" + String(decoding: json, as: UTF8.self)
        }
        return text + "}"
    }
}
