/// A point on the venue's floor plan, metres.
public struct Point: Sendable, Hashable, Codable {
    public var x: Double
    public var y: Double

    public init(_ x: Double, _ y: Double) {
        self.x = x
        self.y = y
    }

    /// Written as `[x, y]` in venue files.
    public init(from decoder: any Decoder) throws {
        var container = try decoder.unkeyedContainer()
        x = try container.decode(Double.self)
        y = try container.decode(Double.self)
        guard container.isAtEnd else {
            throw DecodingError.dataCorruptedError(in: container, debugDescription: "expected [x, y] in metres")
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.unkeyedContainer()
        try container.encode(x)
        try container.encode(y)
    }

    public func distance(to other: Point) -> Double {
        ((x - other.x) * (x - other.x) + (y - other.y) * (y - other.y)).squareRoot()
    }
}

/// A closed polygon (the last vertex joins the first).
public struct Polygon: Sendable, Hashable {
    public var vertices: [Point]

    public init(_ vertices: [Point]) {
        self.vertices = vertices
    }

    /// An axis-aligned rectangle.
    public init(x: Double, y: Double, width: Double, height: Double) {
        vertices = [Point(x, y), Point(x + width, y), Point(x + width, y + height), Point(x, y + height)]
    }

    /// Even-odd rule; points on an edge count as inside.
    public func contains(_ point: Point) -> Bool {
        var inside = false
        var j = vertices.count - 1
        for i in vertices.indices {
            let a = vertices[i]
            let b = vertices[j]
            if Segment(a, b).distance(to: point) < 1e-9 { return true }
            if (a.y > point.y) != (b.y > point.y),
                point.x < (b.x - a.x) * (point.y - a.y) / (b.y - a.y) + a.x
            {
                inside.toggle()
            }
            j = i
        }
        return inside
    }

    /// Signed area (positive when counter-clockwise); zero for a degenerate polygon.
    public var area: Double {
        var sum = 0.0
        var j = vertices.count - 1
        for i in vertices.indices {
            sum += (vertices[j].x + vertices[i].x) * (vertices[j].y - vertices[i].y)
            j = i
        }
        return -sum / 2
    }

    /// The vertices' mean: a point inside any convex polygon.
    public var centroid: Point {
        let count = Double(max(1, vertices.count))
        return Point(vertices.map(\.x).reduce(0, +) / count, vertices.map(\.y).reduce(0, +) / count)
    }
}

/// A line segment.
public struct Segment: Sendable, Hashable {
    public var a: Point
    public var b: Point

    public init(_ a: Point, _ b: Point) {
        self.a = a
        self.b = b
    }

    /// True when the two segments cross (touching counts).
    public func intersects(_ other: Segment) -> Bool {
        func orientation(_ p: Point, _ q: Point, _ r: Point) -> Double {
            (q.x - p.x) * (r.y - p.y) - (q.y - p.y) * (r.x - p.x)
        }
        let d1 = orientation(other.a, other.b, a)
        let d2 = orientation(other.a, other.b, b)
        let d3 = orientation(a, b, other.a)
        let d4 = orientation(a, b, other.b)
        if ((d1 > 0 && d2 < 0) || (d1 < 0 && d2 > 0)) && ((d3 > 0 && d4 < 0) || (d3 < 0 && d4 > 0)) { return true }
        return (d1 == 0 && onSegment(other, a)) || (d2 == 0 && onSegment(other, b))
            || (d3 == 0 && onSegment(self, other.a))
            || (d4 == 0 && onSegment(self, other.b))
    }

    private func onSegment(_ segment: Segment, _ p: Point) -> Bool {
        min(segment.a.x, segment.b.x) <= p.x && p.x <= max(segment.a.x, segment.b.x)
            && min(segment.a.y, segment.b.y) <= p.y && p.y <= max(segment.a.y, segment.b.y)
    }

    /// Shortest distance from `p` to the segment.
    public func distance(to p: Point) -> Double {
        let dx = b.x - a.x
        let dy = b.y - a.y
        let length2 = dx * dx + dy * dy
        guard length2 > 0 else { return a.distance(to: p) }
        let t = max(0, min(1, ((p.x - a.x) * dx + (p.y - a.y) * dy) / length2))
        return Point(a.x + t * dx, a.y + t * dy).distance(to: p)
    }

    public var length: Double { a.distance(to: b) }
}
