import BeaconConfig
import BeaconModel
import Foundation
import Simulator
import Testing

@Suite struct ScoreToolTests {
    /// A "hub" that reports the truth itself must score perfectly; the baseline on the same run must not, and an
    /// unreadable line is reported, not fatal.
    @Test func truthAsEventsScoresPerfectlyBesideTheBaseline() throws {
        let venue = try VenueLoader.load(
            from: VenueLoaderPaths.root.appendingPathComponent("config/venues/museum.yaml").path)
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("score-\(UUID())").path
        defer { try? FileManager.default.removeItem(atPath: directory) }
        _ = try SimulationRun.writeFiles(
            venue: venue, seed: 9, start: 1_700_000_000, duration: 900, directory: directory, gzip: true)
        var events: [String] = []
        try LineFileReader.forEachLine(directory + "/truth.jsonl.gz") { line, _ in
            let interval = try JSONDecoder().decode(TruthInterval.self, from: Data(line.utf8))
            let event =
                interval.zone.map {
                    ZoneEvent(
                        type: .enter, tag: interval.tag, zone: $0, t: interval.enter, confidence: 1, reason: "truth")
                }
                ?? ZoneEvent(
                    type: .exit, tag: interval.tag, zone: nil, t: interval.enter, confidence: 1, reason: "truth")
            events.append(try ContractCoding.encodeLine(event))
        }
        events.append("{broken")
        try events.joined(separator: "\n").write(toFile: directory + "/events.jsonl", atomically: true, encoding: .utf8)

        let report = try ScoreTool.run(
            venue: venue, truthPath: directory + "/truth.jsonl.gz", eventsPath: directory + "/events.jsonl",
            sightingsPath: directory + "/sightings.jsonl.gz")
        #expect(report.hub.accuracy == 1)
        #expect(report.hub.missedTransitions == 0)
        #expect(report.hub.falseTransitions == 0)
        #expect(report.hub.trueTransitions > 20)
        let baseline = try #require(report.baseline)
        #expect(baseline.accuracy > 0.3 && baseline.accuracy < 1)
        #expect(report.skippedLines.count == 1)
        #expect(ScoreTool.table(report).contains("baseline (strongest)"))
        // The museum's two still tags, scored alone: the truth perfectly, the baseline as its two per-tag scores.
        let still = try #require(report.still)
        #expect(still.accuracy == 1 && still.falseTransitions == 0 && still.tagHours > 0.4)
        let perTag = ["audio-guide-spare", "lost-badge"].compactMap { report.baselinePerTag?[$0] }
        #expect(perTag.count == 2)
        let baselineStill = try #require(report.baselineStill)
        let hours = perTag.reduce(0) { $0 + $1.tagHours }
        #expect(abs(baselineStill.tagHours - hours) < 1e-9 && abs(still.tagHours - hours) < 1e-9)
        #expect(abs(baselineStill.accuracy - perTag.reduce(0) { $0 + $1.accuracy * $1.tagHours } / hours) < 1e-9)
        #expect(baselineStill.falseTransitions == perTag.reduce(0) { $0 + $1.falseTransitions })
        #expect(report.oracleStill == nil)
        #expect(ScoreTool.table(report).contains("still tags: hub"))
    }

    /// Event files of other systems carry only what a zone timeline needs: four keys per line score exactly as the
    /// hub's full lines do, and a line that lacks one of the four is skipped and named.
    @Test func minimalEventLinesOfFourKeysScoreLikeFullOnes() throws {
        let venue = try VenueLoader.load(
            from: VenueLoaderPaths.root.appendingPathComponent("config/venues/museum.yaml").path)
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("score-\(UUID())").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let truth = [
            #"{"tag":"visitor-001","zone":"entrance","enter":1000,"exit":1060}"#,
            #"{"tag":"visitor-001","zone":"egypt","enter":1060,"exit":1120}"#,
            #"{"tag":"visitor-001","zone":null,"enter":1120,"exit":1180}"#,
        ]
        try truth.joined(separator: "\n").write(toFile: directory + "/truth.jsonl", atomically: true, encoding: .utf8)
        // Decided 4 s late into egypt, and out of the venue 10 s late; one line lacks its time.
        let minimal = [
            #"{"type":"enter","tag":"visitor-001","zone":"entrance","t":1000}"#,
            #"{"type":"enter","tag":"visitor-001","zone":"egypt","t":1064}"#,
            #"{"type":"stayed","tag":"visitor-001","zone":"egypt","t":1100}"#,
            #"{"type":"exit","tag":"visitor-001","zone":"egypt","t":1130}"#,
            #"{"type":"enter","tag":"visitor-001","zone":"rome"}"#,
        ]
        try minimal.joined(separator: "\n").write(
            toFile: directory + "/minimal.jsonl", atomically: true, encoding: .utf8)
        let full = try minimal.dropLast().map { line -> String in
            let event = try JSONDecoder().decode(MinimalEvent.self, from: Data(line.utf8))
            return try ContractCoding.encodeLine(
                ZoneEvent(
                    type: event.type, tag: event.tag, zone: event.zone, t: event.t, confidence: 0.9,
                    reason: "full line"))
        }
        try full.joined(separator: "\n").write(toFile: directory + "/full.jsonl", atomically: true, encoding: .utf8)

        let fromMinimal = try ScoreTool.run(
            venue: venue, truthPath: directory + "/truth.jsonl", eventsPath: directory + "/minimal.jsonl",
            sightingsPath: nil)
        let fromFull = try ScoreTool.run(
            venue: venue, truthPath: directory + "/truth.jsonl", eventsPath: directory + "/full.jsonl",
            sightingsPath: nil)
        #expect(fromMinimal.hub == fromFull.hub)
        #expect(fromMinimal.hub.trueTransitions == 2)
        #expect(fromMinimal.hub.missedTransitions == 0)
        // Latencies 4 s and 10 s; the scorer's percentiles take the nearest rank, rounding half up.
        #expect(fromMinimal.hub.latencyMedian == 10)
        #expect(fromMinimal.hub.falseTransitions == 0)
        // 14 s of the 178 s scored (after the 2 s grace) were in the wrong zone.
        #expect(abs(fromMinimal.hub.accuracy - 164.0 / 178.0) < 1e-9)
        #expect(fromMinimal.skippedLines.count == 1)
        #expect(fromMinimal.skippedLines.first?.contains("minimal.jsonl:5") == true)
        #expect(fromFull.skippedLines.isEmpty)
    }

    /// Tag t is reported 2 s late into b, wrong only while near the door; tag u is wrongly reported in b for its last
    /// 50 s and never near a boundary (it has no near-boundary lines). Away from boundaries the hub is then right all
    /// the time for t and for 48 of 98 s for u; the figures the file does not concern are those without it.
    @Test func accuracyAwayFromBoundariesCountsOnlyTheTimeAway() throws {
        let venue = try VenueLoader.load(
            from: VenueLoaderPaths.root.appendingPathComponent("config/venues/museum.yaml").path)
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("score-\(UUID())").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let files = [
            "truth.jsonl": [
                #"{"tag":"t","zone":"entrance","enter":1000,"exit":1060}"#,
                #"{"tag":"t","zone":"egypt","enter":1060,"exit":1120}"#,
                #"{"tag":"u","zone":"entrance","enter":1000,"exit":1100}"#,
            ],
            "events.jsonl": [
                #"{"type":"enter","tag":"t","zone":"entrance","t":1000}"#,
                #"{"type":"enter","tag":"t","zone":"egypt","t":1062}"#,
                #"{"type":"enter","tag":"u","zone":"entrance","t":1000}"#,
                #"{"type":"enter","tag":"u","zone":"egypt","t":1050}"#,
            ],
            "near-boundary.jsonl": [
                #"{"tag":"t","from":1058,"to":1063}"#,
                #"{"tag":"t","from":1119,"to":1120}"#,
                #"{"tag":"t","to":1130}"#,
            ],
        ]
        for (name, lines) in files {
            try lines.joined(separator: "\n").write(toFile: "\(directory)/\(name)", atomically: true, encoding: .utf8)
        }
        func score(near: Bool) throws -> ScoreTool.Report {
            try ScoreTool.run(
                venue: venue, truthPath: directory + "/truth.jsonl", eventsPath: directory + "/events.jsonl",
                sightingsPath: nil, oraclePath: directory + "/events.jsonl",
                nominalPath: directory + "/events.jsonl",
                nearBoundaryPath: near ? directory + "/near-boundary.jsonl" : nil)
        }
        let without = try score(near: false)
        let with = try score(near: true)

        // Scored from 1002 s: t 118 s of which 6 near, u 98 s.
        #expect(abs(with.hub.accuracy - 164.0 / 216) < 1e-12)
        #expect(abs((with.hub.awayShare ?? 0) - 210.0 / 216) < 1e-12)
        #expect(abs((with.hub.awayAccuracy ?? 0) - 160.0 / 210) < 1e-12)
        #expect(with.perTag["t"]?.awayAccuracy == 1)
        #expect(abs((with.perTag["u"]?.awayAccuracy ?? 0) - 48.0 / 98) < 1e-12)
        #expect(with.perTag["u"]?.awayShare == 1)
        #expect(with.oracle?.awayAccuracy == with.hub.awayAccuracy)
        #expect(with.nominal?.awayAccuracy == with.hub.awayAccuracy)
        #expect(with.skippedLines.count == 1 && with.skippedLines[0].contains("near-boundary.jsonl:3"))

        // Without the file the scores carry no away figures and are otherwise the same.
        #expect(without.hub.awayAccuracy == nil && without.hub.awayShare == nil)
        #expect(without.skippedLines.isEmpty)
        var stripped = with.hub
        stripped.awayAccuracy = nil
        stripped.awayShare = nil
        #expect(abs(stripped.accuracy - without.hub.accuracy) < 1e-12)
        stripped.accuracy = without.hub.accuracy
        #expect(stripped == without.hub)
        let json = String(decoding: try JSONEncoder().encode(without.hub), as: UTF8.self)
        #expect(!json.contains("away"))

        #expect(ScoreTool.table(with).contains("      away"))
        #expect(ScoreTool.table(with).contains("97.2 % of the tag-time was away."))
        #expect(!ScoreTool.table(without).contains("away"))
        let hubLine = try #require(ScoreTool.table(with).split(separator: "\n").first { $0.hasPrefix("hub ") })
        #expect(hubLine.hasSuffix(String(format: "%6.1f %%", 160.0 / 210 * 100)))
    }

    struct MinimalEvent: Decodable {
        var type: ZoneEventType
        var tag: TagID
        var zone: ZoneID?
        var t: Double
    }
}
