import BeaconModel
import Foundation
import Testing

@testable import BeaconHub

/// `beacon-hub replay`'s input: sighting lines and batches in one file, read in time order, bad lines skipped.
@Suite struct SightingInputTests {
    @Test func tellsBatchesFromLinesByTheirSightingsMember() {
        #expect(SightingInput.isBatch(#"{"version":1,"gateway":"g","sightings":[]}"#))
        #expect(SightingInput.isBatch(#"{""sightings":[]}"#))
        #expect(!SightingInput.isBatch(#"{"t":1,"gateway":"g","beacon":"ibeacon:sightings:1:2","rssi":-1}"#))
        #expect(!SightingInput.isBatch(#"{"sighting":1}"#) && !SightingInput.isBatch(""))
    }

    @Test func readsLinesAndBatchesInTimeOrderAndCountsWhatItSkips() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("input-\(UUID())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let batch = SightingBatch(
            gateway: "gw-2", boot: "b", seq: 1, sent: 3, clockSynced: true,
            sightings: [Sighting(t: 2, beacon: "x", rssi: -70), Sighting(t: 4, beacon: "x", rssi: -71)])
        let lines = [
            #"{"t":3,"gateway":"gw-1","beacon":"x","rssi":-60,"txPower":-59,"kind":"ibeacon"}"#,
            String(decoding: try ContractCoding.encode(batch), as: UTF8.self),
            #"{"t":1,"gateway":"gw-1","beacon":"x"}"#,
            #" {"rssi":-61,"beacon":"x","gateway":"gw-1","t":1} "#,
        ]
        let path = directory.appendingPathComponent("sightings.jsonl").path
        try (lines.joined(separator: "\n") + "\n").write(toFile: path, atomically: true, encoding: .utf8)
        var read: [SightingLine] = []
        let summary = try SightingInput.read(path, hold: 10) { read.append($0) }
        #expect(read.map(\.t) == [1, 2, 3, 4])
        #expect(read.map(\.gateway.rawValue) == ["gw-1", "gw-2", "gw-1", "gw-2"])
        #expect(read[2] == SightingLine(t: 3, gateway: "gw-1", beacon: "x", rssi: -60, txPower: -59, kind: .iBeacon))
        #expect(summary.lines == 4 && summary.batches == 1 && summary.sightings == 4)
        #expect(summary.skipped.count == 1 && summary.skipped[0].contains(":3:") && summary.skipped[0].contains("rssi"))
    }
}
