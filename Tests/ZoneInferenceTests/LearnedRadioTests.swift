import BeaconConfig
import BeaconModel
import Testing

@testable import ZoneInference

/// What the gateways' links taught, folded into the engine live (`ZoneEngine.apply`).
@Suite struct LearnedRadioTests {
    /// `hmm`: the learned gains become the gateways' offsets, except where the calibration file gives one.
    @Test func theHMMTakesTheGainsWhereTheCalibrationIsSilent() throws {
        let calibration = Calibration(
            site: "row", created: 0, referencePower: -59, gatewayOffsets: ["gw-a": 1.5], zones: [:])
        var engine = try TestVenue.engine(settings: TestVenue.hmm, calibration: calibration)
        engine.apply(LearnedRadio(gains: ["gw-a": 4, "gw-b": -3]))
        #expect(engine.model.gatewayOffset == [1.5, -3, 0])
        #expect(engine.learned.gains["gw-b"] == -3)
    }

    /// `position`: every map's levels move by each gateway's gain and take the walls' learned losses; a tag already
    /// placed keeps its zone (no event), and the maps are where the learned exponent says while no probe has spoken.
    @Test func thePositionMapsAreRebuiltUnderATagThatStays() throws {
        var settings = InferenceSettings()
        settings.method = .position
        let venue = try VenueLoaderShim.rowWithWall()
        var driver = Driver(
            engine: ZoneEngine(
                venue: venue, settings: settings,
                directory: TagDirectory(named: [(TestVenue.beacon, TestVenue.tag)], regions: [])
            ))
        let before = driver.engine.position.maps
        driver.engine.apply(LearnedRadio(gains: ["gw-a": 3, "gw-c": -2], wallLosses: [0: 20], pathLossExponent: 3.0))
        let after = driver.engine.position.maps
        #expect(after.count == before.count)
        #expect(driver.engine.positionExponent == 3.0)
        let grid = after[0].grid
        let inA = try #require((0..<grid.count).first { grid.centre($0).distance(to: Point(8, 4)) < 0.4 })
        let inC = try #require((0..<grid.count).first { grid.centre($0).distance(to: Point(52, 4)) < 0.4 })
        let step = 1 / Float(ReadingNoise.stepsPerDB)
        #expect(abs(after[0].level(0, inA) - before[0].level(0, inA) - 3) <= step)
        #expect(abs(after[0].level(2, inC) - before[0].level(2, inC) + 2) <= step)
        // gw-b (30, 4) to a cell in a at (8, 1): through the wall at x 20, now 20 dB where the material said less;
        // to (8, 4), past its end, as before.
        let behind = try #require((0..<grid.count).first { grid.centre($0).distance(to: Point(8, 1)) < 0.4 })
        let wallDefault = Float(venue.walls[0].material.defaultAttenuation)
        #expect(abs(after[0].level(1, behind) - before[0].level(1, behind) - (wallDefault - 20)) <= step)
        #expect(abs(after[0].level(1, inA) - before[0].level(1, inA)) <= step)

        driver.stay(in: "a", from: 0, to: 30)
        #expect(driver.engine.presence(of: TestVenue.tag, in: "a") == .inside)
        let events = driver.events.count
        driver.engine.apply(LearnedRadio(gains: ["gw-a": 1]))
        driver.stay(in: "a", from: 30, to: 40)
        #expect(driver.engine.presence(of: TestVenue.tag, in: "a") == .inside)
        #expect(driver.events.count == events)
    }
}

/// The test row with a wall between a and b (the door at (20, 4) through it).
enum VenueLoaderShim {
    static func rowWithWall() throws -> Venue {
        var venue = try TestVenue.venue()
        venue.walls = [
            try VenueLoaderShim.wall(from: Point(20, 0), to: Point(20, 3.5))
        ]
        return venue
    }

    static func wall(from a: Point, to b: Point) throws -> Venue.Wall {
        let venue = try VenueLoader.decode(
            """
            site: w
            zones:
              - { id: z, rect: { x: 0, y: 0, width: 1, height: 1 } }
            gateways:
              - { id: g, zone: z, position: [0.5, 0.5] }
            walls:
              - { from: [\(a.x), \(a.y)], to: [\(b.x), \(b.y)], material: heavy }
            """, file: "wall.yaml")
        return venue.walls[0]
    }
}
