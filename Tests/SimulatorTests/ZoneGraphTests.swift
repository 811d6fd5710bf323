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

    /// Outside, a walker goes round the building, 2 m beyond its bounds and the shorter way, never through it: along
    /// an outer wall needs no detour; from a's entrance to a point beyond the far side it goes round a's end.
    @Test func outsideTheWayRoundTheBuildingIsTheShorterOne() {
        let graph = ZoneGraph(venue: Self.venue)
        #expect(graph.aroundBuilding(from: Point(3, 0), to: Point(15, 0)).isEmpty)
        #expect(graph.aroundBuilding(from: Point(3, 0), to: Point(3, -8)).isEmpty)
        #expect(
            graph.aroundBuilding(from: Point(3, 0), to: Point(9, 14))
                == [Point(3, -2), Point(-2, -2), Point(-2, 8), Point(9, 8)])
        #expect(
            graph.aroundBuilding(from: Point(15, 0), to: Point(15, 14))
                == [Point(15, -2), Point(20, -2), Point(20, 8), Point(15, 8)])
    }

    /// Rooms a, b, c in a row with entrances at either end: visitors leave by a's (the first) and come back by
    /// either. Whenever the truth says "no zone" the walker is outside every room: it used to cut straight through
    /// them from one entrance to the other, where no filter that knows the walls can follow.
    @Test func aWalkerTheTruthPutsOutsideIsOutsideTheBuilding() {
        let venue = try! VenueLoader.decode(
            """
            site: graph
            zones:
              - { id: a, rect: { x: 0, y: 0, width: 6, height: 6 } }
              - { id: b, rect: { x: 6, y: 0, width: 6, height: 6 } }
              - { id: c, rect: { x: 12, y: 0, width: 6, height: 6 } }
            doors:
              - { between: [outside, a], at: [0, 3], width: 1.2 }
              - { between: [outside, c], at: [18, 3], width: 1.2 }
              - { between: [a, b], at: [6, 3], width: 1.2 }
              - { between: [b, c], at: [12, 3], width: 1.2 }
            gateways:
              - { id: gw-a, zone: a, position: [3, 3], height: 3 }
            """, file: "ends.yaml")
        let graph = ZoneGraph(venue: venue)
        var walker = Walker(
            tag: TagID(unchecked: "visitor"), carrier: .visitor, start: ZoneID(unchecked: "a"), venue: venue, time: 0,
            rng: SeededGenerator(seed: 7))
        var changes: [ZoneChange] = []
        var outsideSteps = 0
        var through = 0
        for step in 1...(8 * 3_600 * 4) {
            walker.advance(to: Double(step) / 4, graph: graph, venue: venue, changes: &changes)
            guard walker.zone == nil else { continue }
            outsideSteps += 1
            let p = walker.position
            if p.x > 0.01 && p.x < 17.99 && p.y > 0.01 && p.y < 5.99 { through += 1 }
        }
        #expect(outsideSteps > 1_000)
        #expect(changes.contains { $0.from == nil && $0.to == ZoneID(unchecked: "c") })
        #expect(through == 0)
    }
}
