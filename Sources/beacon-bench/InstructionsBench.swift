import ArgumentParser
import BeaconDecoding
import BeaconModel
import CBenchParse

/// `beacon-bench instructions`: one workload, run once warm, inside `measuredLoop`, for `valgrind --tool=callgrind
/// --toggle-collect='*measuredLoop*'` to count its instructions (`scripts/instructions.sh` runs every combination and
/// prints instructions per advert). Instruction counts repeat on a noisy machine where times do not.
struct InstructionsBench: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "instructions",
        abstract: "A decode workload for callgrind: the agent's event path, the report path, or a plain C parse.")

    enum Kind: String, ExpressibleByArgument, CaseIterable {
        /// The shop's tags: iBeacon, Eddystone-UID and AltBeacon adverts of 200 tags.
        case beacon
        /// The shop's phones, watches and headphones (no beacon frame).
        case phone
    }

    enum Path: String, ExpressibleByArgument, CaseIterable {
        /// `SightingPipeline.process(event:at:into:)`: what the agent runs.
        case event
        /// `HCIEventParser` then `SightingPipeline.process(_:at:)` per report.
        case report
        /// `bench_parse_event`: reports and AD structures walked in C, beacon frames found and matched.
        case c
    }

    @Option(help: "Adverts in the measured pass.")
    var events = 20_000

    @Option(help: "beacon | phone")
    var kind: Kind = .beacon

    @Option(help: "event | report | c")
    var path: Path = .event

    static let uuid = bytes(fromHex: "e2c56db5dffb48d2b060d0f5a71096e0")!

    func run() {
        let shop = ShopMix.events(beacons: 1_000, noise: 5_000, seconds: max(1, events / 500)).map(\.event)
        let chosen = shop.filter { event in
            let reports = (try? HCIEventParser.advertisingReports(inEvent: event)) ?? nil
            let beacon = reports?.contains { BeaconDecoder.screen($0.data) == .candidate } ?? false
            return beacon == (kind == .beacon)
        }
        let input = Array(chosen.prefix(events))
        guard input.count == events else {
            print("instructions: only \(input.count) \(kind.rawValue) adverts in the mix")
            return
        }
        var pipeline = SightingPipeline(regions: [])
        // Warm: the payloads seen before, the memoised strings, the first allocations. Not counted: callgrind counts
        // only inside `measuredLoop`.
        _ = Self.loop(input, path: path, pipeline: &pipeline)
        let found = Self.measuredLoop(input, path: path, pipeline: &pipeline)
        print("instructions: \(events) \(kind.rawValue) adverts through the \(path.rawValue) path: \(found) found")
    }

    @inline(never)
    static func measuredLoop(_ input: [[UInt8]], path: Path, pipeline: inout SightingPipeline) -> Int {
        loop(input, path: path, pipeline: &pipeline)
    }

    @inline(never)
    static func loop(_ input: [[UInt8]], path: Path, pipeline: inout SightingPipeline) -> Int {
        var found = 0
        switch path {
        case .event:
            var sightings: [Sighting] = []
            sightings.reserveCapacity(4)
            for event in input {
                _ = pipeline.process(event: event, at: 0, into: &sightings)
                found += sightings.count
                sightings.removeAll(keepingCapacity: true)
            }
        case .report:
            for event in input {
                for report in (try? HCIEventParser.advertisingReports(inEvent: event)) ?? [] {
                    found += pipeline.process(report, at: 0).count
                }
            }
        case .c:
            uuid.withUnsafeBufferPointer { uuid in
                for event in input {
                    found += event.withUnsafeBufferPointer {
                        Int(bench_parse_event($0.baseAddress, $0.count, uuid.baseAddress))
                    }
                }
            }
        }
        return found
    }
}
