import BeaconModel

/// The venue's zones and doors as a graph: shortest door-to-door routes between zones, with "outside" as a node.
public struct ZoneGraph: Sendable {
    /// A zone id, or nil for outside.
    public typealias Node = ZoneID?

    let edges: [String: [(to: String, door: Point)]]
    let venue: Venue
    static let outside = "outside"

    public init(venue: Venue) {
        self.venue = venue
        var edges: [String: [(to: String, door: Point)]] = [:]
        for door in venue.doors {
            edges[door.between[0], default: []].append((door.between[1], door.at))
            edges[door.between[1], default: []].append((door.between[0], door.at))
        }
        self.edges = edges
    }

    /// The doors to walk through from `from` to `to`, each with the zone it leads into; nil when unreachable.
    /// Between two zones the route stays inside when it can: a walker has no path round the building, so a route out
    /// of one entrance and in through another would walk straight through the rooms while the truth says "no zone".
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
