import BeaconModel

#if canImport(Glibc)
    import Glibc
#endif

/// A zone change of one tag, at the exact time it passed the door.
public struct ZoneChange: Sendable, Hashable {
    public var tag: TagID
    public var from: ZoneID?
    public var to: ZoneID?
    public var t: Double
}

/// One carrier moving through the venue: itineraries of stops with dwell times, walked door to door at about
/// 1.2 m/s. Zone changes happen exactly at doors, so the ground truth has exact crossing times.
public struct Walker: Sendable {
    public let tag: TagID
    public let carrier: Venue.Tag.Carrier
    public private(set) var position: Point
    /// Direction of travel (or the way the carrier faces while standing), radians.
    public private(set) var heading: Double
    public private(set) var zone: ZoneID?
    public private(set) var time: Double

    let speed: Double
    var rng: SeededGenerator
    var waypoints: [(point: Point, into: ZoneID?, changesZone: Bool)] = []
    var dwellUntil: Double
    var stopsLeft: Int
    var visited: Set<ZoneID> = []

    public init(tag: TagID, carrier: Venue.Tag.Carrier, start: ZoneID, venue: Venue, time: Double, rng: SeededGenerator)
    {
        self.tag = tag
        self.carrier = carrier
        self.time = time
        self.rng = rng
        zone = start
        speed = 1.2 + 0.15 * self.rng.gaussian()
        let shape = venue.zones.first { $0.id == start }?.shape ?? Polygon(x: 0, y: 0, width: 1, height: 1)
        position = Self.randomPoint(in: shape, using: &self.rng)
        heading = Double.random(in: 0..<(2 * Double.pi), using: &self.rng)
        dwellUntil = carrier == .still ? .infinity : time + Double.random(in: 0...30, using: &self.rng)
        stopsLeft = 0
        stopsLeft = newVisitStops()
    }

    /// Moves the walker to time `t`, appending the zone changes it makes on the way.
    public mutating func advance(to t: Double, graph: ZoneGraph, venue: Venue, changes: inout [ZoneChange]) {
        while time < t {
            if time < dwellUntil {
                time = min(t, dwellUntil)
                continue
            }
            if waypoints.isEmpty {
                planNextStop(graph: graph, venue: venue)
                if waypoints.isEmpty { continue }
            }
            let target = waypoints[0]
            let dx = target.point.x - position.x
            let dy = target.point.y - position.y
            let distance = (dx * dx + dy * dy).squareRoot()
            if distance > 1e-9 { heading = atan2(dy, dx) }
            let needed = distance / speed
            if time + needed <= t {
                time += needed
                position = target.point
                waypoints.removeFirst()
                if target.changesZone && target.into != zone {
                    changes.append(ZoneChange(tag: tag, from: zone, to: target.into, t: time))
                    zone = target.into
                }
                if waypoints.isEmpty { dwellUntil = time + dwell() }
            } else {
                let fraction = (t - time) / needed
                position = Point(position.x + dx * fraction, position.y + dy * fraction)
                time = t
            }
        }
    }

    private mutating func planNextStop(graph: ZoneGraph, venue: Venue) {
        let zones = graph.reachableZones
        guard !zones.isEmpty, carrier != .still else {
            dwellUntil = .infinity
            return
        }
        var destination: ZoneID?
        if zone == nil {
            // Back in from outside: a new visit.
            stopsLeft = newVisitStops()
            visited.removeAll()
            destination = zones.randomElement(using: &rng)
        } else if stopsLeft <= 0 && carrier != .staff && graph.outsidePoint != nil {
            destination = nil
        } else {
            let fresh = zones.filter { !visited.contains($0) && $0 != zone }
            destination =
                (carrier == .visitor && !fresh.isEmpty ? fresh : zones.filter { $0 != zone })
                .randomElement(using: &rng) ?? zone
        }
        stopsLeft -= 1
        guard let route = graph.route(from: zone, to: destination) else {
            dwellUntil = time + dwell()
            return
        }
        waypoints = route.map { ($0.door, $0.into, true) }
        if let destination, let shape = venue.zones.first(where: { $0.id == destination })?.shape {
            visited.insert(destination)
            waypoints.append((Self.randomPoint(in: shape, using: &rng), destination, false))
        } else if let outside = graph.outsidePoint {
            waypoints.append((outside, nil, false))
        }
        // Outside, round the building rather than through it.
        var detoured: [(point: Point, into: ZoneID?, changesZone: Bool)] = []
        var (from, outside) = (position, zone == nil)
        for waypoint in waypoints {
            if outside {
                detoured += graph.aroundBuilding(from: from, to: waypoint.point).map { ($0, nil, false) }
            }
            detoured.append(waypoint)
            from = waypoint.point
            if waypoint.changesZone { outside = waypoint.into == nil }
        }
        waypoints = detoured
    }

    private mutating func newVisitStops() -> Int {
        switch carrier {
        case .visitor: Int.random(in: 4...9, using: &rng)
        case .shopper: Int.random(in: 5...12, using: &rng)
        case .staff, .still: Int.max / 2
        }
    }

    /// How long the carrier stays at a stop, seconds (outside: until the next visit).
    private mutating func dwell() -> Double {
        if zone == nil { return Double.random(in: 60...300, using: &rng) }
        return switch carrier {
        case .visitor: Double.random(in: 60...300, using: &rng)
        case .shopper: Double.random(in: 15...120, using: &rng)
        case .staff: Double.random(in: 300...1200, using: &rng)
        case .still: .infinity
        }
    }

    /// A uniform point inside `shape`, kept half a metre from its bounding box edges.
    static func randomPoint(in shape: Polygon, using rng: inout SeededGenerator) -> Point {
        let xs = shape.vertices.map(\.x)
        let ys = shape.vertices.map(\.y)
        let (minX, maxX) = (xs.min() ?? 0, xs.max() ?? 1)
        let (minY, maxY) = (ys.min() ?? 0, ys.max() ?? 1)
        for _ in 0..<100 {
            let point = Point(
                Double.random(in: (minX + 0.5)...max(minX + 0.5, maxX - 0.5), using: &rng),
                Double.random(in: (minY + 0.5)...max(minY + 0.5, maxY - 0.5), using: &rng))
            if shape.contains(point) { return point }
        }
        return shape.centroid
    }
}
