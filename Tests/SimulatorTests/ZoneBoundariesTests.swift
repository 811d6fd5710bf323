import BeaconConfig
import BeaconModel
import Simulator
import Testing

@Suite struct ZoneBoundariesTests {
    /// Rooms a and b behind walls with a door between them, an entrance into a, and two open-plan zones c and d side
    /// by side behind b, with only a line on the floor between them.
    static let venue = try! VenueLoader.decode(
        """
        site: boundaries
        zones:
          - { id: a, rect: { x: 0, y: 0, width: 8, height: 6 } }
          - { id: b, rect: { x: 8, y: 0, width: 8, height: 6 } }
          - { id: c, rect: { x: 16, y: 0, width: 8, height: 6 } }
          - { id: d, rect: { x: 24, y: 0, width: 8, height: 6 } }
        doors:
          - { between: [outside, a], at: [4, 0], width: 1.2 }
          - { between: [a, b], at: [8, 3], width: 1.2 }
          - { between: [b, c], at: [16, 3], width: 1.2 }
          - { between: [c, d], at: [24, 3], width: 6 }
        gateways:
          - { id: gw-a, zone: a, position: [4, 3], height: 3 }
        walls:
          - { from: [0, 0], to: [3.4, 0], material: concrete }
          - { from: [4.6, 0], to: [32, 0], material: concrete }
          - { from: [32, 0], to: [32, 6], material: concrete }
          - { from: [0, 6], to: [32, 6], material: concrete }
          - { from: [0, 0], to: [0, 6], material: concrete }
          - { from: [8, 0], to: [8, 2.4], material: heavy }
          - { from: [8, 3.6], to: [8, 6], material: heavy }
          - { from: [16, 0], to: [16, 2.4], material: heavy }
          - { from: [16, 3.6], to: [16, 6], material: heavy }
        """, file: "boundaries.yaml")

    let boundaries = ZoneBoundaries(venue: Self.venue)

    @Test func middleOfARoomIsAway() {
        #expect(!boundaries.isNear(Point(4, 3)))
        #expect(!boundaries.isNear(Point(12, 3)))
    }

    @Test(arguments: [Point(7.5, 3), Point(8.5, 3), Point(8, 3), Point(7.5, 2.2), Point(7.1, 3)])
    func pointsWithinAMetreOfADoorwayAreNear(point: Point) {
        #expect(boundaries.isNear(point))
    }

    /// The entrance is a boundary too: between a zone and no zone.
    @Test func pointsInsideAnEntranceAreNear() {
        #expect(boundaries.isNear(Point(4, 0.5)))
        #expect(boundaries.isNear(Point(4, -0.5)))
    }

    /// Behind a wall lies another zone or the street, but the tag cannot reach it within a metre.
    @Test(arguments: [Point(4, 5.5), Point(0.5, 3), Point(31.5, 3), Point(7.5, 5), Point(8.5, 1), Point(15.5, 5.5)])
    func pointsHalfAMetreFromAWallWithoutADoorAreAway(point: Point) {
        #expect(!boundaries.isNear(point))
    }

    @Test(arguments: [Point(23.5, 3), Point(24.5, 0.5), Point(24, 5.9), Point(23.2, 1)])
    func pointsNearAFloorLineBetweenOpenZonesAreNear(point: Point) {
        #expect(boundaries.isNear(point))
    }

    @Test func aMetreAndMoreFromAFloorLineIsAway() {
        #expect(!boundaries.isNear(Point(22.8, 3)))
        #expect(!boundaries.isNear(Point(25.3, 3)))
    }

    @Test func farOutsideTheVenueIsAway() {
        #expect(!boundaries.isNear(Point(-20, -20)))
        #expect(!boundaries.isNear(Point(4, -3)))
    }

    /// A larger reach finds the doorway from farther.
    @Test func reachIsTheDistanceChecked() {
        let wide = ZoneBoundaries(venue: Self.venue, reach: 2)
        #expect(wide.isNear(Point(6.5, 3)))
        #expect(!boundaries.isNear(Point(6.5, 3)))
    }
}
