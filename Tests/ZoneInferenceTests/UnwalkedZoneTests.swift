import BeaconConfig
import BeaconModel
import Foundation
import Simulator
import Testing

@testable import ZoneInference

/// A calibration walk that leaves a zone out: the zones it went about are corrected to what it measured there, and
/// the zone it never entered must not be left behind at the geometry's level. Here every gateway reads 6 dB louder
/// than the engine's geometry (as for a walk tag louder than the reference), the rooms are open to each other, and the
/// walk strolls round west and middle only.
@Suite struct UnwalkedZoneTests {
    static func venue() throws -> Venue {
        try VenueLoader.decode(
            """
            site: open-plan
            zones:
              - { id: west, rect: { x: 0, y: 0, width: 8, height: 10 } }
              - { id: middle, rect: { x: 8, y: 0, width: 8, height: 10 } }
              - { id: east, rect: { x: 16, y: 0, width: 8, height: 10 } }
            doors:
              - { between: [outside, west], at: [4, 0] }
              - { between: [west, middle], at: [8, 5], width: 10 }
              - { between: [middle, east], at: [16, 5], width: 10 }
            gateways:
              - { id: gw-1, zone: west, position: [2, 3], height: 2, gainOffset: 6 }
              - { id: gw-2, zone: west, position: [6, 8], height: 2, gainOffset: 6 }
              - { id: gw-3, zone: middle, position: [10, 3], height: 2, gainOffset: 6 }
              - { id: gw-4, zone: middle, position: [14, 8], height: 2, gainOffset: 6 }
              - { id: gw-5, zone: east, position: [18, 3], height: 2, gainOffset: 6 }
              - { id: gw-6, zone: east, position: [22, 8], height: 2, gainOffset: 6 }
            radio:
              pathLossExponent: 2.2
              shadowingSigma: 0
            tags:
              - { id: guest, beacon: "ibeacon:2f234454-cf6d-4a0f-adf2-f4911ba9ffa6:7:1", carrier: still, start: east }
            """, file: "open-plan.yaml")
    }

    static var settings: InferenceSettings {
        var settings = InferenceSettings()
        settings.method = .position
        settings.pathLossExponent = 2.2
        settings.learnsExponent = false
        return settings
    }

    /// The calibration of a strolling walk (route and stops, as `beacon-hub calibrate --plan` reads a plan with both)
    /// that skips `skipping`.
    static func calibration(_ venue: Venue, skipping: Set<ZoneID>) throws -> Calibration {
        let walk = try SimulatedWalk(venue: venue, seed: 3, dwell: 60, skipping: skipping)
        var calibrator = Calibrator(
            model: VenueModel(venue: venue, settings: settings), beacon: walk.plan.beacon, stops: walk.plan.stops,
            route: walk.plan.route)
        for sighting in walk.sightings { calibrator.add(sighting) }
        return calibrator.result(site: venue.site, created: 0).calibration
    }

    /// The map's mean change per gateway over a zone's cells, dB.
    static func change(_ fitted: PositionMap, from plain: PositionMap, zone: Int) -> [Double] {
        let cells = (0..<plain.grid.count).filter { plain.grid.zoneOfCell[$0] == Int32(zone) }
        return (0..<plain.gatewayCount).map { g in
            cells.reduce(0.0) { $0 + Double(fitted.level(g, $1) - plain.level(g, $1)) } / Double(cells.count)
        }
    }

    @Test func aZoneTheWalkNeverEnteredTakesTheWalksLevel() throws {
        let venue = try Self.venue()
        let calibration = try Self.calibration(venue, skipping: ["east"])
        #expect(calibration.areas?.map(\.zone.rawValue).sorted() == ["middle", "west"])
        let grid = FloorGrid(venue: venue, reach: 1, cellSide: 0.5)
        let plain = PositionMap(venue: venue, settings: Self.settings, grid: grid, exponent: 2.2)
        let fitted = PositionMap(
            venue: venue, settings: Self.settings, grid: grid, exponent: 2.2, calibration: calibration)
        let walked = Self.change(fitted, from: plain, zone: 1)
        let unwalked = Self.change(fitted, from: plain, zone: 2)
        print("open plan, mean change per gateway: middle \(walked), east \(unwalked) dB")
        // The walk read about 6 dB over the geometry wherever it went; east takes that level for every gateway.
        let level = walked.reduce(0, +) / Double(walked.count)
        #expect(abs(level - 6) < 2.5, "middle: \(walked)")
        for g in unwalked.indices {
            #expect(abs(unwalked[g] - level) < 0.5, "east, gw-\(g + 1): \(unwalked[g]) dB against \(level)")
        }
        // Outside every zone the map is as it was.
        let outside = try #require(grid.cell(containing: Point(-0.5, -0.5)))
        #expect(fitted.level(0, outside) == plain.level(0, outside))
        // A walk of every zone corrects each by its own readings: no zone is left for the walk's level.
        let whole = try Self.calibration(venue, skipping: [])
        #expect(whole.areas?.count == 3)
    }

    /// The tag standing in the zone the walk skipped is placed there as well calibrated as uncalibrated: the walked
    /// neighbour, lifted to the walk's level, no longer outshines it.
    @Test func aTagInTheUnwalkedZoneIsPlacedThere() throws {
        let venue = try Self.venue()
        let calibration = try Self.calibration(venue, skipping: ["east"])
        func share(_ calibration: Calibration?) -> Double {
            let named = venue.namedTags.map { (beacon: $0.beacon, tag: $0.id) }
            var engine = ZoneEngine(
                venue: venue, settings: Self.settings, directory: TagDirectory(named: named, regions: []),
                calibration: calibration)
            var events: [ZoneEvent] = []
            var truth: [TruthInterval] = []
            var simulation = VenueSimulation(venue: venue, seed: 3, start: 1_763_812_800)
            simulation.run(
                until: 1_763_812_800 + 300, sighting: { engine.ingest($0, events: &events) },
                truth: { truth.append($0) })
            return Scorer.score(truth: truth, events: events).overall.accuracy
        }
        let plain = share(nil)
        let calibrated = share(calibration)
        print("open plan, the still tag in east: uncalibrated \(plain), calibrated \(calibrated)")
        #expect(calibrated >= 0.9, "calibrated \(calibrated), uncalibrated \(plain)")
        #expect(calibrated >= plain - 0.01, "calibrated \(calibrated), uncalibrated \(plain)")
    }
}
