import BeaconModel

/// The venue's zones and doors as a graph: shortest door-to-door routes between zones, with "outside" as a node.
public struct ZoneGraph: Sendable {
    /// A zone id, or nil for outside.
    public typealias Node = ZoneID?

    let edges: [String: [(to: String, door: Point)]]
    let venue: Venue
    /// The path walkers take round the building: its bounds (zones and walls) widened by `clearance` on every side.
    let ring: (minX: Double, minY: Double, maxX: Double, maxY: Double)
    static let outside = "outside"
    /// How far outside the building's bounds walkers go round it, metres (well within `FloorGrid.margin`).
    static let clearance = 2.0

    public init(venue: Venue) {
        self.venue = venue
        var edges: [String: [(to: String, door: Point)]] = [:]
        for door in venue.doors {
            edges[door.between[0], default: []].append((door.between[1], door.at))
            edges[door.between[1], default: []].append((door.between[0], door.at))
        }
        self.edges = edges
        let points = venue.zones.flatMap(\.shape.vertices) + venue.walls.flatMap { [$0.from, $0.to] }
        ring = (
            (points.map(\.x).min() ?? 0) - Self.clearance, (points.map(\.y).min() ?? 0) - Self.clearance,
            (points.map(\.x).max() ?? 0) + Self.clearance, (points.map(\.y).max() ?? 0) + Self.clearance
        )
    }

    /// The doors to walk through from `from` to `to`, each with the zone it leads into; nil when unreachable.
    /// Between two zones the route stays inside when it can (shorter, and what visitors do); through outside, walkers
    /// go round the building (`aroundBuilding`).
    public func route(from: Node, to: Node) -> [(door: Point, into: Node)]? {
        if from != nil && to != nil, let inside = route(from: from, to: to, throughOutside: false) { return inside }
        return route(from: from, to: to, throughOutside: true)
    }

    private func route(from: Node, to: Node, throughOutside: Bool) -> [(door: Point, into: Node)]? {
        let start = from?.rawValue ?? Self.outside
        let goal = to?.rawValue ?? Self.outside
        guard start != goal else { return [] }
        var previous: [String: (node: String, door: Point)] = [:]
        var queue = [start]
        var visited: Set<String> = [start]
        var index = 0
        while index < queue.count {
            let node = queue[index]
            index += 1
            for edge in edges[node] ?? [] where !visited.contains(edge.to) {
                if !throughOutside && edge.to == Self.outside { continue }
                visited.insert(edge.to)
                previous[edge.to] = (node, edge.door)
                if edge.to == goal {
                    var path: [(door: Point, into: Node)] = []
                    var cursor = goal
                    while cursor != start, let step = previous[cursor] {
                        path.append((step.door, cursor == Self.outside ? nil : ZoneID(rawValue: cursor)))
                        cursor = step.node
                    }
                    return path.reversed()
                }
                queue.append(edge.to)
            }
        }
        return nil
    }

    /// The corners to pass walking outside from `start` to `end` (both outside the building or on its edge, as an
    /// entrance is) without crossing it: none when the straight line misses the building's bounds; otherwise out to
    /// the ring `clearance` beyond the bounds, round it the shorter way, and in again. Without this, a walker leaving
    /// by one entrance and coming back by another walked straight through the rooms (and their walls) while the truth
    /// said "no zone": a path no filter that knows the walls can follow (the oracle lost such tags for good).
    /// Buildings that are not rectangles are walked round their bounds, a little further than needed.
    public func aroundBuilding(from start: Point, to end: Point) -> [Point] {
        let inner = (
            minX: ring.minX + Self.clearance + 0.01, minY: ring.minY + Self.clearance + 0.01,
            maxX: ring.maxX - Self.clearance - 0.01, maxY: ring.maxY - Self.clearance - 0.01
        )
        guard inner.minX < inner.maxX, inner.minY < inner.maxY,
            Self.segment(from: start, to: end, crosses: inner)
        else { return [] }
        let width = ring.maxX - ring.minX
        let height = ring.maxY - ring.minY
        let perimeter = 2 * (width + height)
        // Position along the ring, anticlockwise from its lower left corner.
        func along(_ p: Point) -> Double {
            if p.y <= ring.minY { return p.x - ring.minX }
            if p.x >= ring.maxX { return width + p.y - ring.minY }
            if p.y >= ring.maxY { return width + height + ring.maxX - p.x }
            return 2 * width + height + ring.maxY - p.y
        }
        let (a, b) = (onRing(start), onRing(end))
        let (sa, sb) = (along(a), along(b))
        let forward = (sb - sa + perimeter).truncatingRemainder(dividingBy: perimeter)
        let corners = [
            (0.0, Point(ring.minX, ring.minY)), (width, Point(ring.maxX, ring.minY)),
            (width + height, Point(ring.maxX, ring.maxY)), (2 * width + height, Point(ring.minX, ring.maxY)),
        ]
        // The shorter way: anticlockwise, or clockwise; the corners met on it, nearest first.
        let clockwise = forward > perimeter / 2
        let distance = clockwise ? perimeter - forward : forward
        let met = corners.map { corner in
            ((clockwise ? sa - corner.0 : corner.0 - sa) + perimeter).truncatingRemainder(dividingBy: perimeter)
        }
        var path = [a]
        for k in met.indices.sorted(by: { met[$0] < met[$1] }) where met[k] > 0 && met[k] < distance {
            path.append(corners[k].1)
        }
        path.append(b)
        return path
    }

    /// The nearest point of the ring's outline.
    private func onRing(_ p: Point) -> Point {
        let inside = p.x > ring.minX && p.x < ring.maxX && p.y > ring.minY && p.y < ring.maxY
        guard inside else { return Point(min(max(p.x, ring.minX), ring.maxX), min(max(p.y, ring.minY), ring.maxY)) }
        let gaps = [p.x - ring.minX, ring.maxX - p.x, p.y - ring.minY, ring.maxY - p.y]
        switch gaps.indices.min(by: { gaps[$0] < gaps[$1] }) {
        case 0: return Point(ring.minX, p.y)
        case 1: return Point(ring.maxX, p.y)
        case 2: return Point(p.x, ring.minY)
        default: return Point(p.x, ring.maxY)
        }
    }

    /// Whether the segment passes through the rectangle's inside (Liang–Barsky clipping).
    static func segment(
        from a: Point, to b: Point, crosses box: (minX: Double, minY: Double, maxX: Double, maxY: Double)
    ) -> Bool {
        let (dx, dy) = (b.x - a.x, b.y - a.y)
        var (low, high) = (0.0, 1.0)
        for (p, q) in [(-dx, a.x - box.minX), (dx, box.maxX - a.x), (-dy, a.y - box.minY), (dy, box.maxY - a.y)] {
            if p == 0 {
                if q < 0 { return false }
            } else {
                let r = q / p
                if p < 0 { low = max(low, r) } else { high = min(high, r) }
                if low > high { return false }
            }
        }
        return true
    }

    /// Zones reachable from outside or from `zone` (the ones a walker may visit).
    public var reachableZones: [ZoneID] {
        venue.zones.map(\.id).filter { edges[$0.rawValue] != nil }
    }

    /// A point just outside the venue, beyond the first entrance door.
    public var outsidePoint: Point? {
        guard let door = venue.doors.first(where: { $0.between.contains(Self.outside) }),
            let inside = door.between.first(where: { $0 != Self.outside }),
            let zone = venue.zones.first(where: { $0.id.rawValue == inside })
        else { return nil }
        let centre = zone.shape.centroid
        let dx = door.at.x - centre.x
        let dy = door.at.y - centre.y
        let length = max((dx * dx + dy * dy).squareRoot(), 1e-9)
        return Point(door.at.x + dx / length * 8, door.at.y + dy / length * 8)
    }
}
