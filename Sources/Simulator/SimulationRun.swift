import BeaconModel
import Foundation

/// `beacon-sim run VENUE --out DIR`: a seeded run written as `sightings.jsonl` (the contract's sighting lines) and
/// `truth.jsonl` (one true interval per line), optionally gzip-compressed.
public enum SimulationRun {
    /// What a run produced.
    public struct Summary: Sendable {
        public var sightings: Int
        public var truthIntervals: Int
        public var tags: Int
        public var gateways: Int
        public var wallSeconds: Double
    }

    public static func writeFiles(
        venue: Venue, seed: UInt64, start: Double, duration: Double, directory: String, gzip: Bool
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
        simulation.run(
            until: start + duration,
            sighting: { sightings.write(line(for: $0)) },
            truth: { interval in
                if let data = try? encoder.encode(interval) { truth.write(String(decoding: data, as: UTF8.self)) }
            })
        try sightings.close()
        try truth.close()
        let elapsed = clock.now - began
        let (seconds, attoseconds) = elapsed.components
        return Summary(
            sightings: sightings.lines, truthIntervals: truth.lines, tags: simulation.tags.count,
            gateways: venue.gateways.count, wallSeconds: Double(seconds) + Double(attoseconds) / 1e18)
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
        return text + "}"
    }
}
