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
    }
}
