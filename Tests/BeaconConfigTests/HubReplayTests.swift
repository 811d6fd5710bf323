import BeaconConfig
import BeaconHub
import BeaconModel
import Foundation
import Testing
import ZoneInference

@Suite struct HubReplayTests {
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("replay-\(UUID().uuidString)")

    func write(_ name: String, _ text: String) throws -> String {
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let path = directory.appendingPathComponent(name).path
        try text.write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    func configuration(regions: String = "") throws -> HubConfiguration {
        _ = try write(
            "venue.yaml",
            """
            site: two
            zones:
              - { id: a, rect: { x: 0, y: 0, width: 10, height: 8 } }
              - { id: b, rect: { x: 10, y: 0, width: 10, height: 8 } }
            doors:
              - { between: [a, b], at: [10, 4] }
            gateways:
              - { id: gw-a, zone: a, position: [5, 4] }
              - { id: gw-b, zone: b, position: [15, 4] }
            """)
        let path = try write(
            "hub.yaml",
            """
            site: two
            venue: venue.yaml
            tags:
              - { id: badge, beacon: "ibeacon:e2c56db5-dffb-48d2-b060-d0f5a71096e0:7:7" }
            \(regions)
            """)
        return try HubConfiguration.load(from: path)
    }

    /// Sighting lines and a batch payload exactly as published, mixed with a broken line, out of order by a second.
    @Test func replaysLinesAndBatchPayloadsIntoEventLines() throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        let beacon = "ibeacon:e2c56db5-dffb-48d2-b060-d0f5a71096e0:7:7"
        var lines: [String] = []
        for second in 0..<20 {
            let t = 1_763_812_800 + Double(second)
            let batch = SightingBatch(
                gateway: "gw-b", boot: "b0", seq: UInt64(second + 1), sent: t, clockSynced: true,
                sightings: [Sighting(t: t, beacon: beacon, rssi: second < 10 ? -85 : -62, txPower: -59)])
            lines.append(try ContractCoding.encodeLine(batch))
            lines.append(
                try ContractCoding.encodeLine(
                    SightingLine(t: t - 0.5, gateway: "gw-a", beacon: beacon, rssi: second < 10 ? -62 : -85)))
            if second == 5 { lines.append("{not json") }
        }
        let input = try write("sightings.jsonl", lines.joined(separator: "\n") + "\n")
        let events = directory.appendingPathComponent("events.jsonl").path
        let summary = try ReplayTool.run(configuration: try configuration(), inputPath: input, eventsPath: events)
        #expect(summary.input.batches == 20 && summary.input.sightings == 40)
        #expect(summary.input.skipped.count == 1 && summary.input.skipped[0].contains("sightings.jsonl:13"))
        #expect(summary.counters.applied == 40)
        let written = try String(contentsOfFile: events, encoding: .utf8).split(separator: "\n").map {
            try ContractCoding.decodeLine(ZoneEvent.self, from: String($0))
        }
        #expect(written.filter { $0.type == .enter }.map(\.zone) == ["a", "b"])
        #expect(written.allSatisfy { $0.tag == "badge" && $0.version == 1 })
        #expect(ReplayTool.report(summary).contains("40 sightings"))
        // The position method (the default) says which exponent's map its probe tag's readings chose.
        let exponent = try #require(summary.positionExponent)
        #expect(ZoneEngine.candidateExponents.contains(exponent))
        #expect(
            ReplayTool.report(summary).split(separator: "\n").contains(
                "  position map at the end: path-loss exponent \(exponent)"))
        // An exponent set by hand is reported as set: scripts read it back (one decimal would give 2.2 or 2.3).
        var setByHand = summary
        setByHand.positionExponent = 2.25
        #expect(
            ReplayTool.report(setByHand).split(separator: "\n").contains(
                "  position map at the end: path-loss exponent 2.25"))
    }

    @Test func regionsDecodeToCanonicalPrefixes() throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        let loaded = try configuration(
            regions: """
                regions:
                  - { id: ib, ibeacon: { uuid: E2C56DB5DFFB48D2B060D0F5A71096E0, major: 7 }, notifyOnExit: false }
                  - { id: ed, eddystone: { namespace: EDD1EBEAC04E5DEFA017 }, stayedSeconds: 0 }
                  - { id: alt, altbeacon: { id1: 2f234454-cf6d-4a0f-adf2-f4911ba9ffa6, id2: 1, id3: 2 } }
                """)
        let regions = loaded.regions.map(\.region)
        #expect(regions[0].prefix == "ibeacon:e2c56db5-dffb-48d2-b060-d0f5a71096e0:7")
        #expect(regions[0].notifyOnEntry && !regions[0].notifyOnExit && regions[0].stayedSeconds == 600)
        #expect(regions[1].prefix == "eddystone-uid:edd1ebeac04e5defa017" && regions[1].stayedSeconds == nil)
        #expect(regions[2].prefix == "altbeacon:2f234454-cf6d-4a0f-adf2-f4911ba9ffa6:1:2")
    }

    @Test func aMinorWithoutAMajorIsRefusedNamingTheKey() throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        do {
            _ = try configuration(
                regions: "regions:\n  - { id: bad, ibeacon: { uuid: e2c56db5-dffb-48d2-b060-d0f5a71096e0, minor: 3 } }")
            Issue.record("accepted a minor without a major")
        } catch let error as ConfigError {
            #expect(error.key.hasPrefix("regions[0]"))
            #expect(error.message.contains("a minor needs a major"))
        }
    }

    @Test func anUnknownInferenceKeyIsAnError() throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        do {
            _ = try configuration(regions: "inference:\n  confirmSecond: 2")
            Issue.record("accepted a misspelt key")
        } catch let error as ConfigError {
            #expect(error.key == "inference.confirmSecond")
            #expect(error.message.contains("confirmSeconds"))
        }
    }
}
