import BeaconModel
import Foundation
import ZoneInference

/// `beacon-hub replay`: the zone engine run offline on recorded sightings, with the clock taken from their scan
/// times — deterministic and as fast as the CPU allows. Writes the contract's event lines.
public enum ReplayTool {
    /// What a replay did.
    public struct Summary: Sendable {
        public var input: SightingInput.Summary
        public var counters: ZoneEngine.Counters
        public var events: Int
        public var wallSeconds: Double
        /// Scan time covered.
        public var from: Double?
        public var to: Double?
    }

    /// Replays `inputPath` through the configuration's engine, writing one event line per event to `eventsPath`.
    public static func run(
        configuration: HubConfiguration, inputPath: String, eventsPath: String,
        progress: ((Double?, Double) -> Void)? = nil
    ) throws -> Summary {
        try run(engine: configuration.makeEngine(), inputPath: inputPath, eventsPath: eventsPath, progress: progress)
    }

    /// Replays `inputPath` through `engine`, writing one event line per event to `eventsPath`.
    public static func run(
        engine: ZoneEngine, inputPath: String, eventsPath: String, progress: ((Double?, Double) -> Void)? = nil
    ) throws -> Summary {
        var engine = engine
        let writer = try LineFileWriter(path: eventsPath)
        let began = ContinuousClock.now
        var events: [ZoneEvent] = []
        var written = 0
        var first: Double?
        var last: Double?
        func flush() throws {
            for event in events { writer.write(try ContractCoding.encodeLine(event)) }
            written += events.count
            events.removeAll(keepingCapacity: true)
        }
        let input = try SightingInput.read(
            inputPath, hold: min(engine.settings.reorderWindowSeconds, 5), progress: progress
        ) { sighting in
            if first == nil { first = sighting.t }
            last = max(last ?? sighting.t, sighting.t)
            engine.ingest(sighting, events: &events)
            if events.count > 1000 { try flush() }
        }
        // Decisions due by the last scan time; the recording's end is not the tags' departure.
        if let last { engine.advance(to: last, events: &events) }
        try flush()
        try writer.close()
        let elapsed = (ContinuousClock.now - began).components
        return Summary(
            input: input, counters: engine.counters, events: written,
            wallSeconds: Double(elapsed.seconds) + Double(elapsed.attoseconds) / 1e18, from: first, to: last)
    }
}

extension ReplayTool {
    /// One carriage-return-led progress line for a terminal: a bar when the share is known, and the scan time reached.
    public static func progressLine(share: Double?, t: Double) -> String {
        let bar = share.map { share in
            let filled = Int(min(max(share, 0), 1) * 30)
            return "[" + String(repeating: "#", count: filled) + String(repeating: ".", count: 30 - filled) + "] "
                + "\(Int(min(max(share, 0), 1) * 100)) % "
        }
        return "\r\(bar ?? "")scan time \(Date(timeIntervalSince1970: t).formatted(.iso8601))   "
    }

    /// The summary a person reads after a replay.
    public static func report(_ summary: Summary) -> String {
        let counters = summary.counters
        let rate = Double(summary.input.sightings) / max(summary.wallSeconds, 1e-9)
        var lines = [
            "beacon-hub replay: \(summary.input.sightings) sightings (\(summary.input.batches) batches, "
                + "\(summary.input.lines) lines) in \(String(format: "%.1f", summary.wallSeconds)) s "
                + "(\(Int(rate)) sightings/s)",
            "  applied \(counters.applied), late \(counters.late) (kept, not applied), untracked beacons "
                + "\(counters.untracked), unknown gateways \(counters.unknownGateway)",
            "  \(summary.events) events: "
                + counters.events.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", "),
        ]
        if !summary.input.skipped.isEmpty {
            lines.append(
                "  skipped \(summary.input.skipped.count) unreadable lines; first: \(summary.input.skipped[0])")
        }
        return lines.joined(separator: "\n")
    }
}
