import BeaconConfig
import BeaconModel
import Simulator
import Testing
import ZoneInference

@Suite struct ScorerTests {
    /// a for [0, 100), b for [100, 200), no zone for [200, 300).
    let truth = [
        TruthInterval(tag: "t", zone: "a", enter: 0, exit: 100),
        TruthInterval(tag: "t", zone: "b", enter: 100, exit: 200),
        TruthInterval(tag: "t", zone: nil, enter: 200, exit: 300),
    ]

    func timeline(_ steps: [(Double, ZoneID?)]) -> ZoneTimeline {
        var timeline = ZoneTimeline()
        for (t, zone) in steps { timeline.set(zone, at: t) }
        return timeline
    }

    @Test func perfectReportScoresPerfectly() throws {
        let score = Scorer.score(truth: truth, reported: ["t": timeline([(0, "a"), (100, "b"), (200, nil)])]).overall
        #expect(score.accuracy == 1)
        #expect(score.latencyMedian == 0)
        #expect(score.falseTransitions == 0)
        #expect(score.missedTransitions == 0)
        #expect(score.trueTransitions == 2)
        #expect(score.noZoneShare == 0)
    }

    @Test func reportTwoSecondsLateCostsFourSecondsAndHasTwoSecondLatency() throws {
        let score = Scorer.score(truth: truth, reported: ["t": timeline([(2, "a"), (102, "b"), (202, nil)])]).overall
        // Evaluated from 2 s (the start grace) to 300 s: wrong for [100, 102) and [200, 202).
        #expect(abs(score.accuracy - (298 - 4) / 298) < 1e-12)
        #expect(score.latencyMedian == 2)
        #expect(score.latencyP90 == 2)
        #expect(score.falseTransitions == 0)
        #expect(score.missedTransitions == 0)
    }

    @Test func flappingCountsFalseTransitions() throws {
        let reported = timeline([(0, "a"), (100, "b"), (130, "a"), (131, "b"), (200, nil)])
        let score = Scorer.score(truth: truth, reported: ["t": reported]).overall
        #expect(score.falseTransitions == 1)
        #expect(abs(score.accuracy - 297.0 / 298) < 1e-12)
        #expect(abs(score.falseTransitionsPerTagHour - 1 / (298.0 / 3600)) < 1e-9)
    }

    @Test func silenceMissesEveryTransition() throws {
        let score = Scorer.score(truth: truth, reported: [:]).overall
        #expect(score.missedTransitions == 2)
        #expect(score.latencyMedian == nil)
        #expect(abs(score.accuracy - 100.0 / 298) < 1e-12)
        #expect(abs(score.noZoneShare - 198.0 / 298) < 1e-12)
    }

    @Test func eventLinesBuildTheReportedTimeline() {
        var timeline = ZoneTimeline()
        timeline.apply(ZoneEvent(type: .enter, tag: "t", zone: "a", t: 1, confidence: 0.9, reason: ""))
        timeline.apply(ZoneEvent(type: .stayed, tag: "t", zone: "a", t: 5, confidence: 0.9, reason: ""))
        timeline.apply(ZoneEvent(type: .exit, tag: "t", zone: "a", t: 9, confidence: 0.9, reason: ""))
        timeline.apply(ZoneEvent(type: .enter, tag: "t", zone: "b", t: 10, confidence: 0.9, reason: ""))
        timeline.apply(ZoneEvent(type: .unknown, tag: "t", zone: "b", t: 20, confidence: 0.5, reason: ""))
        #expect(timeline.steps.map(\.t) == [1, 9, 10, 20])
        #expect(timeline.zone(at: 5) == "a")
        #expect(timeline.zone(at: 9.5) == nil)
        #expect(timeline.zone(at: 15) == "b")
        #expect(timeline.zone(at: 0) == nil)
    }
}

@Suite struct StrongestGatewayBaselineTests {
    @Test func switchesAfterFiveSecondsOfLeadAndLeavesAfterThirtyOfSilence() throws {
        let venue = try VenueLoaderPathsVenue.twoRooms()
        let beacon = "ibeacon:e2c56db5-dffb-48d2-b060-d0f5a71096e0:1:1"
        var baseline = ZoneEngine(
            venue: venue, settings: .strongestBaseline,
            directory: TagDirectory(named: [(beacon, "tag")], regions: []))
        var events: [ZoneEvent] = []
        for second in 0..<100 {
            let t = Double(second)
            let aStronger = second < 50
            baseline.advance(to: t, events: &events)
            baseline.ingest(SightingLine(t: t, gateway: "gw-a", beacon: beacon, rssi: aStronger ? -60 : -85))
            baseline.advance(to: t + 0.5, events: &events)
            baseline.ingest(SightingLine(t: t + 0.5, gateway: "gw-b", beacon: beacon, rssi: aStronger ? -85 : -60))
        }
        baseline.advance(to: 200, events: &events)
        var timeline = ZoneTimeline()
        events.forEach { timeline.apply($0) }
        let steps = timeline.steps
        #expect(steps.count == 3)
        // The first zone is taken at the first update.
        #expect(steps[0].zone == "a" && steps[0].t <= 0.5)
        // gw-b's average overtakes about a second after the change (τ 2 s), then must lead for 5 s.
        #expect(steps[1].zone == "b")
        #expect((55...58).contains(steps[1].t))
        #expect(steps[2].zone == nil && abs(steps[2].t - (99.5 + 30)) <= 0.5)
    }
}

enum VenueLoaderPathsVenue {
    static func twoRooms() throws -> Venue {
        try VenueLoader.decode(
            """
            site: two
            zones:
              - { id: a, rect: { x: 0, y: 0, width: 5, height: 5 } }
              - { id: b, rect: { x: 5, y: 0, width: 5, height: 5 } }
            doors:
              - { between: [a, b], at: [5, 2.5] }
            gateways:
              - { id: gw-a, zone: a, position: [2.5, 2.5] }
              - { id: gw-b, zone: b, position: [7.5, 2.5] }
            """, file: "two.yaml")
    }
}
