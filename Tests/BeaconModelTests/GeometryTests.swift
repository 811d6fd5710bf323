import BeaconModel
import Testing

@Suite struct GeometryTests {
    let square = Polygon(x: 0, y: 0, width: 4, height: 4)
    let ell = Polygon([Point(0, 0), Point(4, 0), Point(4, 1), Point(1, 1), Point(1, 4), Point(0, 4)])

    @Test func containsFollowsTheShape() {
        #expect(square.contains(Point(2, 2)))
        #expect(square.contains(Point(4, 2)))  // on an edge
        #expect(!square.contains(Point(4.01, 2)))
        #expect(ell.contains(Point(0.5, 3)))
        #expect(!ell.contains(Point(3, 3)))  // the L's notch
        #expect(abs(ell.area) == 7)
    }

    @Test func segmentsCrossOnlyWhereTheyMeet() {
        let wall = Segment(Point(2, 0), Point(2, 4))
        #expect(Segment(Point(0, 1), Point(4, 1)).intersects(wall))
        #expect(!Segment(Point(0, 5), Point(4, 5)).intersects(wall))
        #expect(!Segment(Point(0, 1), Point(1.9, 1)).intersects(wall))
        #expect(Segment(Point(2, 4), Point(3, 5)).intersects(wall))  // touching an end
        #expect(abs(wall.distance(to: Point(3, 2)) - 1) < 1e-12)
    }
}
