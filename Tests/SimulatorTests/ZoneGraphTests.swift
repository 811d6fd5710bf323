import BeaconConfig
import BeaconModel
import Simulator
import Testing

@Suite struct ZoneGraphTests {
    /// Rooms a, b, c in a row, each with its own entrance, joined inside by doors a–b and b–c: the shortest route from
    /// a to c by door count is out of a's entrance and in through c's, but nobody walks round the building that way.
    static let venue = try! VenueLoader.decode(
        """
        site: graph
        zones:
          - { id: a, rect: { x: 0, y: 0, width: 6, height: 6 } }
          - { id: b, rect: { x: 6, y: 0, width: 6, height: 6 } }
          - { id: c, rect: { x: 12, y: 0, width: 6, height: 6 } }
        doors:
          - { between: [outside, a], at: [3, 0], width: 1.2 }
          - { between: [outside, c], at: [15, 0], width: 1.2 }
          - { between: [a, b], at: [6, 3], width: 1.2 }
          - { between: [b, c], at: [12, 3], width: 1.2 }
        gateways:
          - { id: gw-a, zone: a, position: [3, 3], height: 3 }
        """, file: "graph.yaml")

    @Test func aRouteBetweenZonesStaysInsideWhenItCan() throws {
        let route = try #require(
            ZoneGraph(venue: Self.venue).route(from: ZoneID(unchecked: "a"), to: ZoneID(unchecked: "c")))
        #expect(route.map(\.into) == [ZoneID(unchecked: "b"), ZoneID(unchecked: "c")])
        #expect(route.map(\.door) == [Point(6, 3), Point(12, 3)])
    }

    @Test func leavingAndEnteringUseTheEntrances() throws {
        let graph = ZoneGraph(venue: Self.venue)
        let out = try #require(graph.route(from: ZoneID(unchecked: "c"), to: nil))
        #expect(out.map(\.into) == [ZoneID?.none])
        #expect(out.map(\.door) == [Point(15, 0)])
        let back = try #require(graph.route(from: nil, to: ZoneID(unchecked: "a")))
        #expect(back.map(\.into) == [ZoneID(unchecked: "a")])
    }

    /// Two shops with their own doors and no door between them: the only way from one to the other is outside.
    @Test func zonesJoinedOnlyOutsideAreReachedThroughOutside() throws {
        let venue = try VenueLoader.decode(
            """
            site: graph
            zones:
              - { id: a, rect: { x: 0, y: 0, width: 6, height: 6 } }
              - { id: b, rect: { x: 6, y: 0, width: 6, height: 6 } }
            doors:
              - { between: [outside, a], at: [3, 0], width: 1.2 }
              - { between: [outside, b], at: [9, 0], width: 1.2 }
            gateways:
              - { id: gw-a, zone: a, position: [3, 3], height: 3 }
            """, file: "shops.yaml")
        let route = try #require(
            ZoneGraph(venue: venue).route(from: ZoneID(unchecked: "a"), to: ZoneID(unchecked: "b")))
        #expect(route.map(\.into) == [nil, ZoneID(unchecked: "b")])
    }
}
