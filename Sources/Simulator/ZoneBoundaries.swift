import BeaconModel

#if canImport(Glibc)
    import Glibc
#endif

/// Where a tag stands too close to a zone boundary for any BLE method to be sure of its zone.
///
/// A point is near a boundary when some point within `reach` of it that it can reach in a straight line without
/// crossing a wall lies in another zone than it (or in a zone while it is in none, or the reverse). So an outer wall
/// does not make a room's edge a boundary — what lies behind it is out of reach — but a doorway does, and so does the
/// line on the floor between two open-plan zones. Sampled, not exact: the point itself and rings at half and all of
/// `reach` in 16 directions.
public struct ZoneBoundaries: Sendable {
    /// The distance, metres, within which another zone makes a point near a boundary.
    public static let defaultReach = 1.0
    /// Directions sampled on each ring.
    public static let directions = 16

    public let reach: Double
    let zones: [Polygon]
    let zoneBoxes: [Box]
    let walls: [Segment]
    let wallBoxes: [Box]
    /// Sample offsets from the point, inner ring first (a nearby other zone shows there first).
    let offsets: [(dx: Double, dy: Double)]

    public init(venue: Venue, reach: Double = ZoneBoundaries.defaultReach) {
        self.reach = reach
        zones = venue.zones.map(\.shape)
        zoneBoxes = zones.map { Box($0.vertices) }
        walls = venue.walls.map(\.segment)
        wallBoxes = walls.map { Box([$0.a, $0.b]) }
        offsets = [reach / 2, reach].flatMap { radius in
            (0..<Self.directions).map { index in
                let angle = 2 * Double.pi * Double(index) / Double(Self.directions)
                return (radius * cos(angle), radius * sin(angle))
            }
        }
    }

    /// True when `point` is within `reach` of a boundary it can reach without crossing a wall.
    public func isNear(_ point: Point) -> Bool {
        let around = Box(minX: point.x - reach, minY: point.y - reach, maxX: point.x + reach, maxY: point.y + reach)
        let candidates = zoneBoxes.indices.filter { zoneBoxes[$0].overlaps(around) }
        // No zone within reach: the point and everything around it is in no zone.
        guard !candidates.isEmpty else { return false }
        let own = candidates.first { zones[$0].contains(point) }
        // The point is well inside its zone and no other zone comes within reach: nothing to sample.
        if candidates.count == 1, let own, distanceToEdges(of: zones[own], from: point) > reach { return false }
        let nearWalls = walls.indices.filter { wallBoxes[$0].overlaps(around) }.map { walls[$0] }
        for offset in offsets {
            let sample = Point(point.x + offset.dx, point.y + offset.dy)
            let zone = candidates.first { zones[$0].contains(sample) }
            guard zone != own else { continue }
            let path = Segment(point, sample)
            if !nearWalls.contains(where: { path.intersects($0) }) { return true }
        }
        return false
    }

    private func distanceToEdges(of polygon: Polygon, from point: Point) -> Double {
        var nearest = Double.infinity
        var j = polygon.vertices.count - 1
        for i in polygon.vertices.indices {
            nearest = min(nearest, Segment(polygon.vertices[j], polygon.vertices[i]).distance(to: point))
            j = i
        }
        return nearest
    }

    /// An axis-aligned bounding box, to skip zones and walls far from the point cheaply.
    struct Box {
        var minX: Double
        var minY: Double
        var maxX: Double
        var maxY: Double

        init(minX: Double, minY: Double, maxX: Double, maxY: Double) {
            self.minX = minX
            self.minY = minY
            self.maxX = maxX
            self.maxY = maxY
        }

        init(_ points: [Point]) {
            self.init(
                minX: points.map(\.x).min() ?? 0, minY: points.map(\.y).min() ?? 0, maxX: points.map(\.x).max() ?? 0,
                maxY: points.map(\.y).max() ?? 0)
        }

        func overlaps(_ other: Box) -> Bool {
            minX <= other.maxX && other.minX <= maxX && minY <= other.maxY && other.minY <= maxY
        }
    }
}
