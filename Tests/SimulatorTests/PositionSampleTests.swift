import BeaconConfig
import BeaconModel
import Simulator
import Testing

@Suite struct PositionSampleTests {
    /// Rooms a and b side by side with a door at (8, 3): a recording's positions walk from a's middle through the door
    /// to b's middle, one sample a second, given out of order.
    @Test func positionsBecomeNearBoundaryIntervalsAroundTheDoor() {
        let venue = try! VenueLoader.decode(
            """
            site: positions
            zones:
              - { id: a, rect: { x: 0, y: 0, width: 8, height: 6 } }
              - { id: b, rect: { x: 8, y: 0, width: 8, height: 6 } }
            doors:
              - { between: [outside, a], at: [0, 3], width: 1.2 }
              - { between: [a, b], at: [8, 3], width: 1.2 }
            gateways:
              - { id: gw-a, zone: a, position: [4, 3], height: 3 }
            walls:
              - { from: [8, 0], to: [8, 2.4], material: heavy }
              - { from: [8, 3.6], to: [8, 6], material: heavy }
            """, file: "positions.yaml")
        let tag = TagID(unchecked: "robot")
        // x = 4.5, 5.5, …, 12.5 at t = 100, 101, …, 108: within a metre of the other room only at x = 7.5 and 8.5.
        let samples = (0...8).map { PositionSample(tag: tag, t: 100 + Double($0), x: 4.5 + Double($0), y: 3) }
        let intervals = PositionSample.nearBoundaryIntervals(
            samples.shuffled(), boundaries: ZoneBoundaries(venue: venue))
        #expect(intervals == [NearBoundaryInterval(tag: tag, from: 102.5, to: 104.5)])
    }
}
