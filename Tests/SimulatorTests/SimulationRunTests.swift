import BeaconConfig
import BeaconModel
import Foundation
import Simulator
import Testing

@Suite struct SimulationRunTests {
    @Test func handFormattedLinesAreContractSightingLines() throws {
        let line = SightingLine(
            t: 1_700_000_000.0071, gateway: "gw-a", beacon: "ibeacon:e2c56db5-dffb-48d2-b060-d0f5a71096e0:1:2",
            rssi: -71, txPower: -59, kind: .iBeacon)
        let text = SimulationRun.line(for: line)
        let decoded = try ContractCoding.decodeLine(SightingLine.self, from: text)
        #expect(decoded.gateway == line.gateway)
        #expect(decoded.beacon == line.beacon)
        #expect(decoded.rssi == -71)
        #expect(decoded.txPower == -59)
        #expect(decoded.kind == .iBeacon)
        #expect(abs(decoded.t - 1_700_000_000.007) < 1e-6)
        #expect(text.hasPrefix("{\"t\":1700000000.007,"))
    }

    @Test func writesPlainAndGzipOutputsThatReadBack() throws {
        let venue = try VenueLoader.load(
            from: VenueLoaderPaths.root.appendingPathComponent("config/venues/store.yaml").path)
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("sim-\(UUID())").path
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let plain = try SimulationRun.writeFiles(
            venue: venue, seed: 3, start: 1_700_000_000, duration: 60, directory: directory + "/plain", gzip: false)
        let packed = try SimulationRun.writeFiles(
            venue: venue, seed: 3, start: 1_700_000_000, duration: 60, directory: directory + "/gz", gzip: true)
        #expect(plain.sightings == packed.sightings)
        #expect(plain.tags == 50)

        let text = try String(contentsOfFile: directory + "/plain/sightings.jsonl", encoding: .utf8)
        let lines = text.split(separator: "\n")
        #expect(lines.count == plain.sightings)
        for line in lines.prefix(200) { _ = try ContractCoding.decodeLine(SightingLine.self, from: String(line)) }
        let truth = try String(contentsOfFile: directory + "/plain/truth.jsonl", encoding: .utf8).split(separator: "\n")
        #expect(truth.count == plain.truthIntervals)
        let interval = try JSONDecoder().decode(TruthInterval.self, from: Data(truth[0].utf8))
        #expect(interval.enter == 1_700_000_000)

        // The gzip file decompresses to the same bytes.
        let gunzip = Process()
        gunzip.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        gunzip.arguments = ["gzip", "-dc", directory + "/gz/sightings.jsonl.gz"]
        let pipe = Pipe()
        gunzip.standardOutput = pipe
        try gunzip.run()
        let unpacked = pipe.fileHandleForReading.readDataToEndOfFile()
        gunzip.waitUntilExit()
        #expect(String(decoding: unpacked, as: UTF8.self) == text)
    }

    /// Every true crossing is a walk through a door, so the tag is near a boundary then: each crossing time of
    /// truth.jsonl falls in one of the tag's near-boundary intervals, and the intervals are few and short beside the
    /// tag-time (visitors stand minutes at each stop).
    @Test func nearBoundaryIntervalsSurroundEveryDoorCrossing() throws {
        let venue = try VenueLoader.load(
            from: VenueLoaderPaths.root.appendingPathComponent("config/venues/museum.yaml").path)
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("sim-\(UUID())").path
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let start = 1_700_000_000.0
        let duration = 900.0
        let summary = try SimulationRun.writeFiles(
            venue: venue, seed: 9, start: start, duration: duration, directory: directory, gzip: true)
        var truth: [TruthInterval] = []
        try LineFileReader.forEachLine(directory + "/truth.jsonl.gz") { line, _ in
            truth.append(try JSONDecoder().decode(TruthInterval.self, from: Data(line.utf8)))
        }
        var near: [NearBoundaryInterval] = []
        try LineFileReader.forEachLine(directory + "/near-boundary.jsonl.gz") { line, _ in
            near.append(try JSONDecoder().decode(NearBoundaryInterval.self, from: Data(line.utf8)))
        }
        #expect(near.count == summary.nearBoundaryIntervals)
        let byTag = Dictionary(grouping: near, by: \.tag)
        for intervals in byTag.values {
            #expect(intervals.allSatisfy { start <= $0.from && $0.from < $0.to && $0.to <= start + duration })
            // In time order and apart: consecutive near samples were merged.
            #expect(zip(intervals, intervals.dropFirst()).allSatisfy { $0.to < $1.from })
        }
        var crossings = 0
        for (tag, intervals) in Dictionary(grouping: truth, by: \.tag) {
            for (before, after) in zip(intervals, intervals.dropFirst()) where before.zone != after.zone {
                crossings += 1
                let t = before.exit
                #expect(byTag[tag]?.contains { $0.from <= t && t <= $0.to } == true, "\(tag) crossing at \(t)")
            }
        }
        #expect(crossings > 20)
        let nearSeconds = near.map { $0.to - $0.from }.reduce(0, +)
        let tagSeconds = Double(summary.tags) * duration
        #expect(nearSeconds > Double(crossings) && nearSeconds < 0.2 * tagSeconds)
    }
}
