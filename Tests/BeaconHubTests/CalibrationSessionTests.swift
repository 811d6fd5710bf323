import BeaconConfig
import BeaconModel
import BrokerTestSupport
import Testing
import ZoneInference

@testable import BeaconHub

/// A phone walk's taps as the calibration turns them into a plan: stays end at the next tap, a point is a pause on the
/// route, a zone stay breaks the route; what each zone has so far; and what is refused.
@Suite struct CalibrationSessionTests {
    let venue: Venue

    init() throws {
        venue = try VenueLoader.decode(TestVenues.row(), file: "row.yaml")
    }

    static let beacon = "ibeacon:c0ffee00-ca11-4b1e-9a7e-5e7c0ffee000:65535:65535"

    func session() -> CalibrationSession {
        CalibrationSession(id: "w", beacon: Self.beacon.uppercased(), who: "ana", started: 1000, seconds: 30)
    }

    @Test func tapsBecomeStopsAndARouteWithItsGaps() throws {
        var walk = session()
        try walk.mark(zone: nil, x: 10, y: 4, at: 1000, venue: venue)  // a, a point: 30 s
        try walk.mark(zone: nil, x: 30, y: 4, at: 1040, venue: venue)  // b, a point, walked to in 10 s
        try walk.mark(zone: "c", x: nil, y: nil, at: 1060, venue: venue)  // c, the whole zone: ends b's stay early
        try walk.mark(zone: nil, x: 45, y: 2, at: 1100, until: 1110, venue: venue)  // c again, a point
        #expect(walk.marks.map(\.zone) == ["a", "b", "c", "c"])
        #expect(walk.marks.map(\.until) == [1030, 1060, 1090, 1110])

        let (stops, route) = walk.plan(at: 1200)
        #expect(stops.map(\.zone) == ["a", "b", "c", "c"])
        #expect(stops.map(\.from) == [1000, 1040, 1060, 1100])
        #expect(stops.map(\.to) == [1030, 1060, 1090, 1110])
        // Each point stay a pause; the walk from a to b is interpolated, from b across c's zone stay it is not.
        #expect(route.map(\.t) == [1000, 1030, 1040, 1060, 1100, 1110])
        #expect(route.map { $0.gap ?? false } == [false, false, false, true, false, false])

        // Mid-walk, the stay in progress is cut at now.
        let early = walk.plan(at: 1050)
        #expect(early.stops.map(\.to) == [1030, 1050])
        #expect(walk.current(at: 1105)?.n == 4)
        #expect(walk.current(at: 1111) == nil)
    }

    /// A walker going round a zone tapping where they are: each tap a pause on the route, the taps together one stay
    /// in the zone (settling at its ends only), not one short stop per tap.
    @Test func tapsOneAfterAnotherInAZoneAreOneStay() throws {
        var walk = session()
        for (k, x) in [4.0, 8, 12, 16].enumerated() {
            try walk.mark(zone: nil, x: x, y: 4, at: 1000 + 5 * Double(k), venue: venue)
        }
        try walk.mark(zone: nil, x: 30, y: 4, at: 1020, until: 1030, venue: venue)  // b
        try walk.mark(zone: nil, x: 34, y: 4, at: 1040, until: 1050, venue: venue)  // b again, after a break
        let (stops, route) = walk.plan(at: 1100)
        #expect(stops.map(\.zone) == ["a", "b", "b"])
        #expect(stops.map(\.from) == [1000, 1020, 1040])
        #expect(stops.map(\.to) == [1020, 1030, 1050])
        #expect(route.map(\.t) == [1000, 1005, 1005, 1010, 1010, 1015, 1015, 1020, 1020, 1030, 1040, 1050])
        #expect(route.map(\.x) == [4, 4, 8, 8, 12, 12, 16, 16, 30, 30, 34, 34])
        // a: 20 s less 2 s settling at each end, not four stays of 5 − 4 s.
        #expect(walk.progress(venue: venue, at: 1100)[0].seconds == 16)
    }

    @Test func eachZoneCountsItsStandingSecondsAndGatewaysHeard() throws {
        var walk = session()
        try walk.mark(zone: "a", x: nil, y: nil, at: 1000, venue: venue)
        try walk.mark(zone: "b", x: nil, y: nil, at: 1030, until: 1042, venue: venue)
        for second in 0..<60 {
            let t = 1000 + Double(second)
            walk.add(SightingLine(t: t, gateway: "gw-a", beacon: Self.beacon, rssi: -60))
            if second < 30 { walk.add(SightingLine(t: t, gateway: "gw-b", beacon: Self.beacon, rssi: -80)) }
            if second % 10 == 0 { walk.add(SightingLine(t: t, gateway: "gw-c", beacon: Self.beacon, rssi: -90)) }
            walk.add(SightingLine(t: t, gateway: "gw-a", beacon: "ibeacon:other:1:1", rssi: -50))
        }
        #expect(walk.sightings.count == 60 + 30 + 6, "another beacon's sightings are not kept")
        let progress = walk.progress(venue: venue, at: 1100)
        #expect(progress.map(\.zone) == ["a", "b", "c"])
        // a: 30 s less 2 s settling at each end; heard by gw-a, gw-b and gw-c (at 1010 and 1020).
        #expect(progress[0].seconds == 26 && progress[0].gateways == 3 && progress[0].quality == .good)
        // b: 12 s less 4 = 8 s, only gw-a (gw-b stopped at 1030, gw-c's 1040 is in the settling): poor.
        #expect(progress[1].seconds == 8 && progress[1].gateways == 1 && progress[1].quality == .poor)
        #expect(progress[2].seconds == 0 && progress[2].quality == CalibrationSession.Progress.Quality.none)
    }

    @Test func whatATapCannotSay() throws {
        var walk = session()
        #expect(throws: CalibrationSessionError.self) {
            try walk.mark(zone: "attic", x: nil, y: nil, at: 1000, venue: venue)
        }
        #expect(throws: CalibrationSessionError.self) { try walk.mark(zone: nil, x: 500, y: 4, at: 1000, venue: venue) }
        #expect(throws: CalibrationSessionError.self) { try walk.mark(zone: nil, x: nil, y: 4, at: 1000, venue: venue) }
        #expect(throws: CalibrationSessionError.self) { try walk.mark(zone: nil, x: 5, y: 4, at: 900, venue: venue) }
        try walk.mark(zone: nil, x: 5, y: 4, at: 1010, venue: venue)
        do {
            try walk.mark(zone: "b", x: nil, y: nil, at: 1005, venue: venue)
            Issue.record("a tap before the previous one was taken")
        } catch {
            #expect(error.code == .badMark && error.message.contains("before the previous"))
        }
        // A point just outside every zone but on the plan is taken, with no zone.
        try walk.mark(zone: nil, x: 30, y: 8.5, at: 1020, venue: venue)
        #expect(walk.marks.last?.zone == nil)
        #expect(walk.plan(at: 1100).stops.count == 1)
    }

    /// A plan file of two stops, a from 1000 to 1030 and b from 1045 to 1075, and `route` (t, x, y).
    static func plan(route: [(t: Double, x: Double, y: Double)]) throws -> CalibrateTool.Plan {
        let lines = route.map { "  - { t: \($0.t), x: \($0.x), y: \($0.y) }" }
        return try ConfigLoader.decode(
            CalibrateTool.Plan.self,
            from: """
                beacon: "\(beacon)"
                stops:
                  - { zone: a, from: 1000, to: 1030 }
                  - { zone: b, from: 1045, to: 1075 }
                route:
                """ + "\n" + lines.joined(separator: "\n") + "\n", file: "plan.yaml")
    }

    /// `beacon-hub calibrate --taps`: a recorded walk's stops as the page's taps, a point where the route was as each
    /// began (when that is in the stop's zone), or the zone.
    @Test func aRecordedWalksStopsBecomeTaps() throws {
        let plan = try Self.plan(route: [(1000, 8, 4), (1030, 8, 4), (1045, 50, 4), (1075, 50, 4)])
        let points = try CalibrateTool.tapped(plan, as: .points, venue: venue)
        // b's stop began at a place in c: that tap is of the zone, which breaks the route before it.
        #expect(points.stops.map(\.zone) == ["a", "b"])
        #expect(points.route.map(\.t) == [1000, 1030])
        #expect(points.route.map { $0.gap ?? false } == [false, true])
        let zones = try CalibrateTool.tapped(plan, as: .zones, venue: venue)
        #expect(zones.stops.map(\.to) == [1030, 1075] && zones.route.isEmpty)
    }

    /// `--taps route`: a point at each of the route's places within a stop (in the stop's zone), one stay per stop;
    /// a stop whose route is elsewhere is tapped as its zone.
    @Test func aRecordedStrollsRouteBecomesTapsAsTheWalkerGoes() throws {
        let plan = try Self.plan(
            route: [(1000, 6, 4), (1010, 10, 6), (1020, 14, 4), (1030, 10, 2), (1045, 50, 4), (1075, 50, 4)])
        let route = try CalibrateTool.tapped(plan, as: .route, venue: venue)
        #expect(route.stops.map(\.zone) == ["a", "b"])
        #expect(route.stops.map(\.from) == [1000, 1045] && route.stops.map(\.to) == [1030, 1075])
        // Three taps in a (the route's place at 1030 is the stop's end), each a pause until the next; b's is a zone.
        #expect(route.route.map(\.t) == [1000, 1010, 1010, 1020, 1020, 1030])
        #expect(route.route.map(\.x) == [6, 6, 10, 10, 14, 14])
        #expect(route.route.map { $0.gap ?? false } == [false, false, false, false, false, true])
    }

    @Test func aPlanFileTakesThePlaceOfTheTaps() throws {
        var walk = session()
        try walk.mark(zone: "a", x: nil, y: nil, at: 1000, venue: venue)
        try walk.replacePlan(
            stops: [
                Calibrator.Stop(zone: "c", from: 1040, to: 1070), Calibrator.Stop(zone: "b", from: 1000, to: 1030),
            ],
            route: [], venue: venue)
        #expect(walk.marks.isEmpty)
        #expect(walk.plan(at: 2000).stops.map(\.zone) == ["b", "c"])
        #expect(throws: CalibrationSessionError.self) {
            try walk.mark(zone: "a", x: nil, y: nil, at: 1100, venue: venue)
        }
        #expect(throws: CalibrationSessionError.self) {
            try walk.replacePlan(stops: [Calibrator.Stop(zone: "attic", from: 0, to: 1)], route: [], venue: venue)
        }
    }
}

/// The live core records the carried beacon for the walk, from the agents' batches and from foreign nodes alike, and
/// nothing while no walk is open.
@Suite struct CalibrationRecordingTests {
    @Test func theCoreRecordsTheCarriedBeaconFromBatchesAndForeignNodes() throws {
        var core = try HubCoreTests.core()
        let t0 = HubCoreTests.t0
        core.apply(HubCoreTests.batch(seq: 1, at: t0 + 1), at: t0 + 1)
        core.calibrationWalk = CalibrationSession(
            id: "w", beacon: HubCoreTests.beacon, who: "ana", started: t0 + 2, seconds: 30)
        core.apply(HubCoreTests.batch(seq: 2, at: t0 + 3), at: t0 + 3)
        core.apply(
            .foreign(SightingLine(t: t0 + 4, gateway: "gw-b", beacon: HubCoreTests.beacon, rssi: -80)), at: t0 + 4)
        core.apply(
            .foreign(SightingLine(t: t0 + 5, gateway: "gw-b", beacon: "ibeacon:other:1:1", rssi: -70)), at: t0 + 5)
        let walk = try #require(core.calibrationWalk)
        #expect(walk.sightings.map(\.gateway) == ["gw-a", "gw-b"], "the first batch came before the walk")
        #expect(walk.sightings.map(\.t) == [t0 + 3, t0 + 4])
    }
}
