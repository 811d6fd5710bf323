import ArgumentParser
import BeaconConfig
import BeaconModel
import Foundation
import ZoneInference

#if canImport(Glibc)
    import Glibc
#endif

/// The zone engine at venue scale: a 10 × 10 grid of rooms with a gateway each, tags walking between them and heard
/// by their nearest gateways, on one core. Throughput of the HMM engine beside the strongest-gateway method on the
/// same stream (the same run, the same machine), and the memory each tracked (tag, gateway) pair costs.
struct EngineBench: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "engine",
        abstract: "Zone engine throughput (sightings/s, one core) and memory per tracked (tag, gateway) pair.")

    @Option(help: "Tags.")
    var tags = 10_000

    @Option(help: "Gateways (a square grid of rooms, one gateway each).")
    var gateways = 100

    @Option(help: "Gateways that hear each advertisement.")
    var heardBy = 6

    @Option(help: "Simulated seconds of advertising at 1 Hz per tag.")
    var seconds = 30

    @Option(help: "Timed rounds per method (alternating; the best counts).")
    var rounds = 3

    func run() throws {
        let side = Int(Double(gateways).squareRoot().rounded(.up))
        let venue = try Self.grid(side: side, count: gateways)
        let beacons = (0..<tags).map { "ibeacon:e2c56db5-dffb-48d2-b060-d0f5a71096e0:\($0 / 65536 + 1):\($0 % 65536)" }
        let named = beacons.enumerated().map { (beacon: $1, tag: TagID(unchecked: "tag-\($0)")) }
        let stream = Self.sightings(venue: venue, beacons: beacons, side: side, heardBy: heardBy, seconds: seconds)
        print(
            "beacon-bench engine: \(tags) tags × \(gateways) gateways (rooms \(side)×\(side)), each advertisement heard by"
                + " \(heardBy), \(seconds) s at 1 Hz: \(stream.count) sightings, one core")

        do {
            // Memory first, while the heap is fresh: every tag heard by every gateway once, measured as growth of resident
            // memory.
            let directory = TagDirectory(named: named, regions: [])
            let before = Self.heapBytes()
            var engine = ZoneEngine(venue: venue, settings: InferenceSettings(), directory: directory)
            let afterEmpty = Self.heapBytes()
            var events: [ZoneEvent] = []
            for (index, beacon) in beacons.enumerated() {
                let t = 1_763_812_800 + Double(index) / Double(tags)
                for gateway in venue.gateways {
                    engine.ingest(SightingLine(t: t, gateway: gateway.id, beacon: beacon, rssi: -80, txPower: -59))
                }
            }
            engine.advance(to: 1_763_812_802, events: &events)
            let afterFull = Self.heapBytes()
            let pairs = tags * venue.gateways.count
            print(
                String(
                    format: "  memory: %d pairs: %.1f MiB, %.1f bytes per (tag, gateway) pair (a filter is %d bytes);"
                        + " %.1f MiB for %d tags before any sighting (%.0f bytes per tag, posterior and index included)",
                    pairs, Double(afterFull - afterEmpty) / 1_048_576, Double(afterFull - afterEmpty) / Double(pairs),
                    MemoryLayout<RSSIFilter>.stride, Double(afterEmpty - before) / 1_048_576, tags,
                    Double(afterEmpty - before) / Double(tags)))
            withExtendedLifetime(engine) {}
        }
        do {
            // The position method's memory: its maps (per venue) when made, then its per-tag state after ten seconds
            // of the stream (each tag's belief, probes, pending readings), as growth of resident memory.
            var settings = InferenceSettings()
            settings.method = .position
            settings.boundaryLossDB = 6
            let before = Self.heapBytes()
            var engine = ZoneEngine(
                venue: venue, settings: settings, directory: TagDirectory(named: named, regions: []))
            let afterEmpty = Self.heapBytes()
            var events: [ZoneEvent] = []
            let end = (stream.first?.t ?? 0) + 10
            for sighting in stream where sighting.t < end { engine.ingest(sighting, events: &events) }
            engine.advance(to: end, events: &events)
            let afterFull = Self.heapBytes()
            let state = engine.positionStateBytes
            print(
                String(
                    format: "  position memory: %.1f MiB for the venue (maps of %d exponents); after 10 s, %.0f bytes"
                        + " per tag of position state (largest belief %d cells of 8 bytes, at most %d), resident"
                        + " memory %.0f bytes per tag",
                    Double(afterEmpty - before) / 1_048_576, ZoneEngine.candidateExponents.count,
                    Double(state.total) / Double(tags), state.largestBelief, Int(settings.maxCells),
                    Double(afterFull - afterEmpty) / Double(tags)))
            withExtendedLifetime(engine) {}
        }
        // Rounds alternate the methods so that a busy spell on a shared machine hits both; each method's best round
        // counts (the least disturbed one), and the ratio is taken round by round as well.
        var best: [InferenceSettings.Method: Double] = [:]
        var ratios: [Double] = []
        for round in 1...rounds {
            var rates: [InferenceSettings.Method: Double] = [:]
            for method in [InferenceSettings.Method.strongest, .hmm, .position] {
                var settings = method == .strongest ? .strongestBaseline : InferenceSettings()
                settings.method = method
                settings.boundaryLossDB = 6
                var engine = ZoneEngine(
                    venue: venue, settings: settings, directory: TagDirectory(named: named, regions: []))
                var events: [ZoneEvent] = []
                let began = ContinuousClock.now
                for sighting in stream {
                    engine.ingest(sighting, events: &events)
                    if events.count > 10_000 { events.removeAll(keepingCapacity: true) }
                }
                let elapsed = (ContinuousClock.now - began).seconds
                rates[method] = Double(stream.count) / elapsed
                best[method] = max(best[method] ?? 0, rates[method]!)
                print(
                    String(
                        format: "  round %d %-9@ %10.0f sightings/s  (%.2f s, %d events)", round,
                        method.rawValue as NSString, rates[method]!, elapsed,
                        engine.counters.events.values.reduce(0, +)))
            }
            ratios.append((rates[.hmm] ?? 0) / (rates[.strongest] ?? 1))
        }
        print(
            String(
                format: "  best: hmm %.0f, strongest %.0f sightings/s; hmm / strongest: %.2f (rounds: %@)",
                best[.hmm] ?? 0, best[.strongest] ?? 0, (best[.hmm] ?? 0) / (best[.strongest] ?? 1),
                ratios.map { String(format: "%.2f", $0) }.joined(separator: ", ") as NSString))
        print(
            String(
                format: "  best: position %.0f sightings/s; position / strongest: %.2f, position / hmm: %.2f",
                best[.position] ?? 0, (best[.position] ?? 0) / (best[.strongest] ?? 1),
                (best[.position] ?? 0) / (best[.hmm] ?? 1)))
    }

    /// Resident memory from /proc/self/statm (the engine's growth dwarfs what the allocator keeps back).
    static func heapBytes() -> Int {
        guard let text = try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8),
            let pages = text.split(separator: " ").dropFirst().first.flatMap({ Int($0) })
        else { return 0 }
        return pages * Int(sysconf(Int32(_SC_PAGESIZE)))
    }

    /// Rooms of 10 × 8 m in a grid, doors to each neighbour, an entrance into the first, a gateway in each middle.
    static func grid(side: Int, count: Int) throws -> Venue {
        var lines = ["site: grid", "zones:"]
        for index in 0..<count {
            lines.append(
                "  - { id: r\(index), rect: { x: \((index % side) * 10), y: \((index / side) * 8), width: 10, height: 8 } }"
            )
        }
        lines.append("doors:")
        lines.append("  - { between: [outside, r0], at: [5, 0] }")
        for index in 0..<count {
            let x = index % side
            let y = index / side
            if x + 1 < side && index + 1 < count {
                lines.append("  - { between: [r\(index), r\(index + 1)], at: [\((x + 1) * 10), \(y * 8 + 4)] }")
            }
            if index + side < count {
                lines.append("  - { between: [r\(index), r\(index + side)], at: [\(x * 10 + 5), \((y + 1) * 8)] }")
            }
        }
        lines.append("gateways:")
        for index in 0..<count {
            lines.append(
                "  - { id: gw-\(index), zone: r\(index), position: [\((index % side) * 10 + 5), \((index / side) * 8 + 4)] }"
            )
        }
        return try VenueLoader.decode(lines.joined(separator: "\n"), file: "grid.yaml")
    }

    /// Each tag moves to a neighbouring room every 20 s; each second it is heard by the `heardBy` gateways nearest its
    /// room, loudest in its own, with a deterministic wobble.
    static func sightings(venue: Venue, beacons: [String], side: Int, heardBy: Int, seconds: Int) -> [SightingLine] {
        var generator = SystemRandomNumberGenerator()
        let positions = venue.gateways.map(\.position)
        let nearest = positions.map { here in
            positions.indices.sorted { positions[$0].distance(to: here) < positions[$1].distance(to: here) }
                .prefix(heardBy)
        }
        var rooms = beacons.indices.map { $0 % venue.gateways.count }
        var result: [SightingLine] = []
        result.reserveCapacity(beacons.count * seconds * heardBy)
        for second in 0..<seconds {
            for (tag, beacon) in beacons.enumerated() {
                if (second + tag) % 20 == 0 {
                    let room = rooms[tag]
                    let options = [room - 1, room + 1, room - side, room + side].filter {
                        $0 >= 0 && $0 < venue.gateways.count
                    }
                    rooms[tag] = options.randomElement(using: &generator) ?? room
                }
                let t = 1_763_812_800 + Double(second) + Double(tag) / Double(beacons.count)
                for gateway in nearest[rooms[tag]] {
                    let distance = positions[gateway].distance(to: positions[rooms[tag]])
                    let rssi = -65 - 20 * log10(max(distance, 1)) + Double(Int.random(in: -4...4, using: &generator))
                    result.append(
                        SightingLine(
                            t: t, gateway: venue.gateways[gateway].id, beacon: beacon, rssi: Int(rssi), txPower: -59))
                }
            }
        }
        return result
    }
}
