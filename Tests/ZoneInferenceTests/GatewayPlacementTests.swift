import BeaconModel
import Foundation
import Testing

@testable import ZoneInference

/// A gateway placed elsewhere than the venue file says (`Calibration.placements`, from the dashboard's gateway
/// panel): the engine's maps, its clone check and `venue` take the new place live, on the venue file's grid, and the
/// calibration leaves out what it measured of the gateway at its old place.
@Suite struct GatewayPlacementTests {
    static let moved = Calibration.Placement(x: 18, y: 6.5, zone: ZoneID(unchecked: "b"))

    static func placements(_ base: Calibration? = nil) throws -> Calibration {
        let venue = try PositionCalibrationTests.venue()
        let none = Calibration(site: venue.site, created: 0, referencePower: -59, gatewayOffsets: [:], zones: [:])
        return (base ?? none).placing(GatewayID(unchecked: "gw-b"), at: moved)
    }

    @Test func thePlacedGatewaysLevelsAreThoseOfItsNewPlaceOnTheSameGrid() throws {
        let file = try PositionCalibrationTests.venue()
        var elsewhere = file
        elsewhere.gateways[1].position = Point(18, 6.5)
        let settings = PositionCalibrationTests.settings
        let directory = TagDirectory(named: [], regions: [])
        var engine = ZoneEngine(venue: file, settings: settings, directory: directory)
        let grid = engine.position.maps[0].grid
        let before = engine.position.maps[0]
        // The levels the gateway has at (18, 6.5), on the venue file's grid.
        let there = PositionMap(venue: elsewhere, settings: settings, grid: grid, exponent: before.exponent)

        engine.apply(calibration: try Self.placements())
        let after = engine.position.maps[engine.position.choice]
        #expect(engine.venue.gateways[1].position == Point(18, 6.5))
        #expect(engine.venueFile.gateways[1].position == Point(15, 4))
        #expect(after.grid.count == grid.count && after.grid.origin == grid.origin)
        var differ = 0
        for cell in 0..<grid.count {
            #expect(after.level(0, cell) == before.level(0, cell))
            #expect(after.level(1, cell) == there.level(1, cell))
            if after.level(1, cell) != before.level(1, cell) { differ += 1 }
        }
        #expect(differ > grid.count / 2, "the gateway's levels moved in \(differ) of \(grid.count) cells")
        // A placement with nothing measured is no calibration: a tag that says no power keeps its unknown power.
        #expect(!engine.model.calibrated)

        // Rolled back: the venue file's place again; made with the placement: the same as applied live.
        engine.apply(calibration: nil)
        #expect(engine.venue == file)
        #expect((0..<grid.count).allSatisfy { engine.position.maps[0].level(1, $0) == before.level(1, $0) })
        let made = ZoneEngine(venue: file, settings: settings, directory: directory, calibration: try Self.placements())
        #expect(made.venue.gateways[1].position == Point(18, 6.5) && made.venue.gateways[1].zone?.rawValue == "b")
        #expect((0..<grid.count).allSatisfy { made.position.maps[0].level(1, $0) == there.level(1, $0) })
    }

    @Test func placingAGatewayLeavesOutWhatWasMeasuredAtItsOldPlaceAndKeepsItsGain() throws {
        let venue = try PositionCalibrationTests.venue()
        let profile = Calibration.Profile(mean: -60, sd: 3, heard: 1, samples: 10)
        let both = ["gw-a": profile, "gw-b": profile]
        let calibration = Calibration(
            site: venue.site, created: 5, referencePower: -59, gatewayOffsets: ["gw-a": 1, "gw-b": -2],
            zones: ["a": both, "b": ["gw-b": profile]], points: [Calibration.Point(x: 3, y: 3, levels: both)],
            areas: [Calibration.Area(zone: ZoneID(unchecked: "a"), seconds: 30, levels: both)],
            map: Calibration.RadioMap(
                cellMetres: 1, originX: 0, originY: 0, columns: 1, rows: 1, levels: ["gw-a": [-50], "gw-b": [-70]]))
        let placed = try Self.placements(calibration)
        #expect(placed.gatewayOffsets == ["gw-a": 1, "gw-b": -2])
        #expect(placed.zones == ["a": ["gw-a": profile]])
        #expect(placed.points?.map(\.levels) == [["gw-a": profile]])
        #expect(placed.areas?.map(\.levels) == [["gw-a": profile]])
        #expect(placed.map?.levels == ["gw-a": [-50]])
        #expect(placed.placements == ["gw-b": Self.moved])
        #expect(placed.created == 5 && placed.referencePower == -59)
        // Placed again: the newest place holds; another gateway's placement stays.
        let again = placed.placing(GatewayID(unchecked: "gw-b"), at: .init(x: 1, y: 1))
            .placing(GatewayID(unchecked: "gw-a"), at: .init(x: 2, y: 2, zone: ZoneID(unchecked: "a")))
        #expect(again.placements?["gw-b"] == .init(x: 1, y: 1) && again.placements?.count == 2)
        // In the calibration file's JSON, read back as written.
        let data = try JSONEncoder().encode(placed)
        #expect(try JSONDecoder().decode(Calibration.self, from: data) == placed)
        let text = String(decoding: data, as: UTF8.self)
        #expect(text.contains("\"placements\":{\"gw-b\":{"), "\(text)")
    }

    @Test func aVenuePlacedMovesOnlyTheGatewaysNamed() throws {
        let venue = try PositionCalibrationTests.venue()
        let placed = venue.placed(by: try Self.placements().placements)
        #expect(placed.gateways[1].position == Point(18, 6.5) && placed.gateways[0] == venue.gateways[0])
        #expect(venue.placed(by: nil) == venue && venue.placed(by: [:]) == venue)
        // A gateway placed in no zone serves none.
        let corridor = venue.placed(by: ["gw-a": .init(x: 5, y: -3)])
        #expect(corridor.gateways[0].zone == nil && corridor.gateways[0].position == Point(5, -3))
    }
}
