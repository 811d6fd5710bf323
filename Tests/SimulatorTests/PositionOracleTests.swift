import BeaconConfig
import BeaconModel
import Foundation
import Simulator
import Testing

@Suite struct PositionOracleTests {
    /// Three rooms in a row behind walls with door gaps, an entrance, and a radio without any noise; `radio` adds
    /// settings (", key: value").
    static func noiselessVenue(radio: String = "") throws -> Venue {
        try VenueLoader.decode(
            """
            site: quiet
            zones:
              - { id: a, rect: { x: 0, y: 0, width: 8, height: 6 } }
              - { id: b, rect: { x: 8, y: 0, width: 8, height: 6 } }
              - { id: c, rect: { x: 16, y: 0, width: 8, height: 6 } }
            doors:
              - { between: [outside, a], at: [4, 0], width: 1.2 }
              - { between: [a, b], at: [8, 3], width: 1.2 }
              - { between: [b, c], at: [16, 3], width: 1.2 }
            gateways:
              - { id: gw-a, zone: a, position: [4, 3], height: 3 }
              - { id: gw-b, zone: b, position: [12, 3], height: 3 }
              - { id: gw-c, zone: c, position: [20, 3], height: 3 }
            walls:
              - { from: [0, 0], to: [3.4, 0], material: concrete }
              - { from: [4.6, 0], to: [24, 0], material: concrete }
              - { from: [24, 0], to: [24, 6], material: concrete }
              - { from: [0, 6], to: [24, 6], material: concrete }
              - { from: [0, 0], to: [0, 6], material: concrete }
              - { from: [8, 0], to: [8, 2.4], material: heavy }
              - { from: [8, 3.6], to: [8, 6], material: heavy }
              - { from: [16, 0], to: [16, 2.4], material: heavy }
              - { from: [16, 3.6], to: [16, 6], material: heavy }
            tags:
              - { id: staff, beacon: "ibeacon:e2c56db5-dffb-48d2-b060-d0f5a71096e0:1:1", carrier: staff, interval: 0.5, count: 4 }
              - { id: visitor, beacon: "ibeacon:e2c56db5-dffb-48d2-b060-d0f5a71096e0:2:1", interval: 0.5, count: 1 }
            radio:
              { p0Spread: 0, shadowingSigma: 0, noiseSigma: 0, deepFadeShare: 0, fadingSigma: 0, bodyLossDB: 0,
                packetLoss: 0, gatewayGainSigma: 0\(radio) }
            """, file: "quiet.yaml")
    }

    static func museum() throws -> Venue {
        try VenueLoader.load(from: VenueLoaderPaths.root.appendingPathComponent("config/venues/museum.yaml").path)
    }

    /// Runs `venue` with the oracles into a fresh directory and scores the oracle's lines as the "hub".
    static func scoredRun(_ venue: Venue, seed: UInt64, duration: Double) throws -> (ScoreTool.Report, String) {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("oracle-\(UUID())").path
        _ = try SimulationRun.writeFiles(
            venue: venue, seed: seed, start: 1_700_000_000, duration: duration, directory: directory, gzip: false,
            oracle: true)
        let report = try ScoreTool.run(
            venue: venue, truthPath: directory + "/truth.jsonl", eventsPath: directory + "/oracle.jsonl",
            sightingsPath: directory + "/sightings.jsonl", oraclePath: directory + "/oracle.jsonl",
            nominalPath: directory + "/nominal.jsonl")
        return (report, directory)
    }

    /// Without noise the position is known to the cell; what is left is the hub's decision rule (a tick, then a
    /// second of confirmation, about 2 s per crossing), so carriers who stay minutes in a room score over 99 %.
    @Test func isNearlyPerfectOnANoiselessRadio() throws {
        let (report, directory) = try Self.scoredRun(try Self.noiselessVenue(), seed: 4, duration: 1200)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let oracle = try #require(report.oracle)
        #expect(oracle.trueTransitions >= 8)
        #expect(oracle.accuracy >= 0.99)
        #expect(oracle.missedTransitions == 0)
        #expect(oracle.falseTransitions == 0)
        #expect(try #require(oracle.latencyP90) <= 2.5)
        #expect(report.hubMinusOraclePoints == 0)
        #expect(report.skippedLines.isEmpty)
    }

    /// Gateways whose clocks are off by up to a few hundred milliseconds stamp one advertisement at different times:
    /// the oracle must still weigh it as one (split, each part would say the other gateways heard nothing). And the
    /// nominal model knows the two slopes of the law.
    @Test func staysNearlyPerfectWithOffsetClocksAndTwoSlopes() throws {
        let venue = try Self.noiselessVenue(
            radio: ", clockOffsetSigmaSeconds: 0.1, clockJitterSeconds: 0.02, breakpointMetres: 3,"
                + " farPathLossExponent: 3.5")
        let (report, directory) = try Self.scoredRun(venue, seed: 4, duration: 1200)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let oracle = try #require(report.oracle)
        let nominal = try #require(report.nominal)
        #expect(oracle.trueTransitions >= 8)
        #expect(oracle.accuracy >= 0.99)
        #expect(oracle.missedTransitions == 0)
        #expect(oracle.falseTransitions == 0)
        #expect(nominal.accuracy >= 0.99)
        #expect(nominal.falseTransitions == 0)
    }

    @Test func beatsTheBaselineOnTheMuseumsNoisyRadio() throws {
        let (report, directory) = try Self.scoredRun(try Self.museum(), seed: 1, duration: 180)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let oracle = try #require(report.oracle)
        let baseline = try #require(report.baseline)
        let nominal = try #require(report.nominal)
        #expect(oracle.trueTransitions >= 20)
        #expect(oracle.accuracy > baseline.accuracy + 0.05)
        #expect(oracle.falseTransitionsPerTagHour < baseline.falseTransitionsPerTagHour)
        // Knowing less of the radio cannot help much (a little luck either way on a short run).
        #expect(nominal.accuracy <= oracle.accuracy + 0.01)
        #expect(nominal.accuracy > baseline.accuracy)
    }

    @Test func theSameSeedGivesTheSameDecisions() throws {
        let venue = try Self.noiselessVenue()
        var runs: [String] = []
        for _ in 0..<2 {
            let (_, directory) = try Self.scoredRun(venue, seed: 7, duration: 120)
            defer { try? FileManager.default.removeItem(atPath: directory) }
            runs.append(
                try String(contentsOfFile: directory + "/oracle.jsonl", encoding: .utf8)
                    + String(contentsOfFile: directory + "/nominal.jsonl", encoding: .utf8))
        }
        #expect(!runs[0].isEmpty)
        #expect(runs[0] == runs[1])
    }

    /// Runs `venue` with the oracles, the one that knows all but the shadowing too: the exact oracle's and its event
    /// lines, and its score beside the oracle's and the nominal model's.
    static func unshadowedRun(_ venue: Venue, seed: UInt64, duration: Double) throws -> (
        exact: String, unshadowed: String, report: ScoreTool.Report
    ) {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("unshadowed-\(UUID())").path
        defer { try? FileManager.default.removeItem(atPath: directory) }
        _ = try SimulationRun.writeFiles(
            venue: venue, seed: seed, start: 1_700_000_000, duration: duration, directory: directory, gzip: false,
            oracle: true, unshadowedOracle: true)
        let report = try ScoreTool.run(
            venue: venue, truthPath: directory + "/truth.jsonl", eventsPath: directory + "/unshadowed.jsonl",
            sightingsPath: nil, oraclePath: directory + "/oracle.jsonl", nominalPath: directory + "/nominal.jsonl")
        return (
            try String(contentsOfFile: directory + "/oracle.jsonl", encoding: .utf8),
            try String(contentsOfFile: directory + "/unshadowed.jsonl", encoding: .utf8), report
        )
    }

    /// Where the radio has no static shadowing, knowing all but the shadowing is knowing everything: the same
    /// decisions as the exact oracle, however the gateways' gains and the tags' powers are spread.
    @Test func theUnshadowedOracleDecidesAsTheOracleWithoutShadowing() throws {
        var venue = try Self.museum()
        venue.radio.shadowingSigma = 0
        venue.radio.gatewayGainSigma = 5
        venue.radio.p0Spread = 4
        let run = try Self.unshadowedRun(venue, seed: 3, duration: 120)
        #expect(run.exact.split(separator: "\n").count >= 10)
        #expect(run.unshadowed == run.exact)
    }

    /// With shadowing it knows less than the oracle: other decisions, and no better a score on a museum run (a little
    /// luck either way on a short run).
    @Test func theUnshadowedOracleKnowsLessWhereThereIsShadowing() throws {
        var venue = try Self.museum()
        venue.radio.shadowingSigma = 8
        let run = try Self.unshadowedRun(venue, seed: 1, duration: 300)
        let oracle = try #require(run.report.oracle)
        let nominal = try #require(run.report.nominal)
        #expect(run.report.hub.accuracy <= oracle.accuracy + 0.01)
        #expect(run.report.hub.accuracy >= nominal.accuracy - 0.01)
        #expect(run.unshadowed != run.exact)
    }

    @Test func scoreTablePrintsTheOracleBesideTheHub() throws {
        let (report, directory) = try Self.scoredRun(try Self.noiselessVenue(), seed: 2, duration: 60)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let table = ScoreTool.table(report)
        #expect(table.contains("oracle (exact map)"))
        #expect(table.contains("nominal model"))
        #expect(table.contains("hub − oracle: +0.0 points"))
        let json = String(decoding: try JSONEncoder().encode(report), as: UTF8.self)
        #expect(json.contains("\"hubMinusOraclePoints\""))
        #expect(json.contains("\"nominal\""))
    }

    /// A random supermarket whose tags go unheard for long stretches: beliefs that underflowed to nothing once listed
    /// their cells again and again until the run was killed for memory after a few simulated minutes.
    @Test(arguments: PositionOracle.Knowledge.allCases)
    func beliefsStayWithinTheGridOnALongRun(_ knowledge: PositionOracle.Knowledge) throws {
        let drawn = RandomVenue.generate(seed: 1, family: .supermarket)
        let venue = try VenueLoader.decode(drawn.yaml, file: "random-1.yaml")
        var simulation = VenueSimulation(venue: venue, seed: 1, start: 1_763_812_800)
        var oracle = PositionOracle(
            venue: venue, radio: simulation.radio, tags: simulation.tags, knowledge: knowledge)
        var events: [ZoneEvent] = []
        var largest = 0
        var sightings = 0
        simulation.run(
            until: 1_763_812_800 + 600,
            sighting: { sighting in
                oracle.ingest(sighting, events: &events)
                sightings += 1
                if sightings % 500 == 0 { largest = max(largest, oracle.largestBelief) }
            }, truth: { _ in })
        oracle.finish(at: 1_763_812_800 + 600, events: &events)
        #expect(sightings > 1000)
        #expect(largest > 0 && largest <= oracle.cells.count, "\(largest) of \(oracle.cells.count) cells")
        #expect(events.contains { $0.type == .enter })
    }

    /// Rooms a and b joined by a door; c behind a solid wall from b, entered only from outside at its far end. A
    /// still tag heard in a, then in c as if it had got there unseen, can be followed only by walking out and round,
    /// through outside cells that explain c's readings worse than b's cells behind c's wall: the belief stayed in b
    /// for good, until the oracle reseeded where the loudest gateway puts the tag once the belief had stopped
    /// explaining the readings for `reseedAfterSeconds`.
    @Test func aLostTagIsFoundAgain() throws {
        let venue = try VenueLoader.decode(
            """
            site: lost
            zones:
              - { id: a, rect: { x: 0, y: 0, width: 8, height: 6 } }
              - { id: b, rect: { x: 8, y: 0, width: 8, height: 6 } }
              - { id: c, rect: { x: 16, y: 0, width: 8, height: 6 } }
            doors:
              - { between: [outside, a], at: [4, 0], width: 1.2 }
              - { between: [a, b], at: [8, 3], width: 1.2 }
              - { between: [outside, c], at: [24, 3], width: 1.2 }
            gateways:
              - { id: gw-a, zone: a, position: [4, 3], height: 3 }
              - { id: gw-b, zone: b, position: [12, 3], height: 3 }
              - { id: gw-c, zone: c, position: [20, 3], height: 3 }
            walls:
              - { from: [0, 0], to: [3.4, 0], material: concrete }
              - { from: [4.6, 0], to: [24, 0], material: concrete }
              - { from: [24, 0], to: [24, 2.4], material: concrete }
              - { from: [24, 3.6], to: [24, 6], material: concrete }
              - { from: [0, 6], to: [24, 6], material: concrete }
              - { from: [0, 0], to: [0, 6], material: concrete }
              - { from: [8, 0], to: [8, 2.4], material: heavy }
              - { from: [8, 3.6], to: [8, 6], material: heavy }
              - { from: [16, 0], to: [16, 6], material: heavy }
            tags:
              - { id: badge, beacon: "ibeacon:e2c56db5-dffb-48d2-b060-d0f5a71096e0:1:1", carrier: staff, interval: 0.5, start: a }
            radio:
              { p0Spread: 0, shadowingSigma: 0, noiseSigma: 0, deepFadeShare: 0, fadingSigma: 0, bodyLossDB: 0,
                packetLoss: 0, gatewayGainSigma: 0 }
            """, file: "lost.yaml")
        let simulation = VenueSimulation(venue: venue, seed: 1, start: 0)
        var oracle = PositionOracle(
            venue: venue, radio: simulation.radio, tags: simulation.tags, knowledge: .exact)
        let tag = try #require(simulation.tags.first)
        var events: [ZoneEvent] = []
        // What every gateway would read from the tag standing at `point`, twice a second.
        func hear(at point: Point, from start: Double, to end: Double) {
            for tick in Int(start * 2)..<Int(end * 2) {
                for gateway in venue.gateways {
                    guard
                        let level = simulation.radio.meanRSSI(
                            tagP0: tag.p0, at: point, gateway: gateway.id, bodyFactor: 0, shadowed: true),
                        level >= venue.radio.sensitivity
                    else { continue }
                    let sighting = SightingLine(
                        t: Double(tick) / 2, gateway: gateway.id, beacon: tag.beacon, rssi: Int(level.rounded()))
                    oracle.ingest(sighting, events: &events)
                }
            }
        }
        hear(at: Point(4, 3), from: 0, to: 30)
        #expect(events.last?.zone == ZoneID(unchecked: "a"))
        hear(at: Point(20, 3), from: 30, to: 120)
        oracle.finish(at: 120, events: &events)
        let found = try #require(events.first { $0.type == .enter && $0.zone == ZoneID(unchecked: "c") })
        #expect(found.t <= 45, "\(events)")
    }
}
