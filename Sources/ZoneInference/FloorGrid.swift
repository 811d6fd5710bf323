import BeaconModel

/// A floor plan for position filters (the hub's `position` method and the simulator's oracle): square cells over the
/// venue's bounds plus a margin outside (where walkers go when they leave), each cell's zone (the zone containing its
/// centre, or none), and per cell the cells one tick of walking can reach: without crossing a wall, and from one zone
/// (or "no zone") into another only through a door between them, as the simulator's walkers do. Open-plan venues have
/// no walls between zones, so the doors alone keep the walk honest.
package struct FloorGrid: Sendable {
    package let origin: Point
    package let cellSize: Double
    package let columns: Int
    package let rows: Int
    /// Zone index of each cell; `zoneCount` for "no zone".
    package let zoneOfCell: [Int32]
    package let zoneCount: Int
    /// Neighbours of cell `c` are `neighbours[neighbourStart[c] ..< neighbourStart[c + 1]]` (itself excluded).
    package let neighbourStart: [Int32]
    package let neighbours: [Int32]
    /// Cells that straddle a zone's edge, by area: cell `c`'s shares are `shareZones[k]` and `shares[k]` for `k` in
    /// `shareStart[splitOfCell[c]] ..< shareStart[splitOfCell[c] + 1]`; `splitOfCell[c]` is −1 for a cell wholly in
    /// `zoneOfCell[c]`. Zone edges fall anywhere, not on cell edges: counting a straddling cell wholly in one zone
    /// moved every edge by up to half a cell (a sixth of a 3 m aisle at 1 m cells).
    package let splitOfCell: [Int32]
    package let shareStart: [Int32]
    package let shareZones: [Int32]
    package let shares: [Float]
    /// Points sampled per cell side for `shares`.
    static let shareSamples = 4

    /// How many neighbours a cell in open floor has: blocked moves stay put, so the motion is symmetric.
    package let fullNeighbourCount: Int

    /// Metres of floor kept around the venue: the point walkers leave to is 8 m beyond the entrance.
    package static let margin = 10.0
    /// Cells beyond this many at 0.5 m make the cells 1 m (large venues, to keep run time linear in area).
    package static let fineCellLimit = 40_000

    package var count: Int { columns * rows }

    /// `cellSide` nil: 0.5 m cells, or 1 m when that would make more than `fineCellLimit` cells.
    package init(venue: Venue, reach: Double, cellSide: Double? = nil) {
        let points =
            venue.zones.flatMap(\.shape.vertices) + venue.gateways.map(\.position)
            + venue.walls.flatMap { [$0.from, $0.to] }
        var minX = (points.map(\.x).min() ?? 0).rounded(.down) - Self.margin
        var minY = (points.map(\.y).min() ?? 0).rounded(.down) - Self.margin
        let maxX = (points.map(\.x).max() ?? 1).rounded(.up) + Self.margin
        let maxY = (points.map(\.y).max() ?? 1).rounded(.up) + Self.margin
        let fine = (maxX - minX) * (maxY - minY) / 0.25 <= Double(Self.fineCellLimit)
        cellSize = cellSide ?? (fine ? 0.5 : 1.0)
        // Cell centres a quarter metre off the half-metre lines that plans are drawn on: a centre on a wall is on both
        // of its sides (its moves and its radio paths touch the wall), and a centre on a zone's edge in both zones.
        // On 1 m cells centred on those lines, the training venues lost 7 points (63.4 % against 69.0 % at 0.5 m).
        let shift = 0.25 - (cellSize / 2).truncatingRemainder(dividingBy: 0.5)
        minX -= shift
        minY -= shift
        origin = Point(minX, minY)
        columns = Int(((maxX - minX) / cellSize).rounded(.up))
        rows = Int(((maxY - minY) / cellSize).rounded(.up))
        zoneCount = venue.zones.count
        var zones = [Int32](repeating: Int32(venue.zones.count), count: columns * rows)
        for row in 0..<rows {
            for column in 0..<columns {
                let centre = Point(minX + (Double(column) + 0.5) * cellSize, minY + (Double(row) + 0.5) * cellSize)
                if let index = venue.zones.firstIndex(where: { $0.shape.contains(centre) }) {
                    zones[row * columns + column] = Int32(index)
                }
            }
        }
        zoneOfCell = zones
        var splits = [Int32](repeating: -1, count: columns * rows)
        var shareStart: [Int32] = [0]
        var shareZones: [Int32] = []
        var shares: [Float] = []
        let samples = Self.shareSamples
        let step = cellSize / Double(samples)
        for row in 0..<rows {
            for column in 0..<columns {
                // Only a cell with a neighbour of another zone can straddle an edge (zones are larger than a cell).
                let index = row * columns + column
                var edge = false
                for (dx, dy) in [(-1, 0), (1, 0), (0, -1), (0, 1)] {
                    let (c, r) = (column + dx, row + dy)
                    if c >= 0, c < columns, r >= 0, r < rows, zones[r * columns + c] != zones[index] { edge = true }
                }
                guard edge else { continue }
                var counts: [Int32: Int] = [:]
                for i in 0..<samples {
                    for j in 0..<samples {
                        let point = Point(
                            minX + Double(column) * cellSize + (Double(i) + 0.5) * step,
                            minY + Double(row) * cellSize + (Double(j) + 0.5) * step)
                        let zone = venue.zones.firstIndex { $0.shape.contains(point) }.map(Int32.init)
                        counts[zone ?? Int32(venue.zones.count), default: 0] += 1
                    }
                }
                guard counts.count > 1 else { continue }
                splits[index] = Int32(shareStart.count - 1)
                for (zone, count) in counts.sorted(by: { $0.key < $1.key }) {
                    shareZones.append(zone)
                    shares.append(Float(count) / Float(samples * samples))
                }
                shareStart.append(Int32(shareZones.count))
            }
        }
        splitOfCell = splits
        self.shareStart = shareStart
        self.shareZones = shareZones
        self.shares = shares
        // Every offset within `reach` (at least the 8 surrounding cells).
        let radius = max(reach / cellSize, 1.5)
        let span = Int(radius.rounded(.down))
        var offsets: [(dx: Int, dy: Int)] = []
        for dy in -span...span {
            for dx in -span...span where (dx != 0 || dy != 0) && Double(dx * dx + dy * dy) <= radius * radius {
                offsets.append((dx, dy))
            }
        }
        fullNeighbourCount = offsets.count
        let walls = venue.walls.map(\.segment)
        let cell = cellSize
        let none = Int32(venue.zones.count)
        func zoneIndex(_ side: String) -> Int32 {
            venue.zones.firstIndex { $0.id.rawValue == side }.map(Int32.init) ?? none
        }
        let doors = venue.doors.map { door in
            (a: zoneIndex(door.between[0]), b: zoneIndex(door.between[1]), at: door.at, reach: door.width / 2 + cell)
        }
        var start: [Int32] = [0]
        var list: [Int32] = []
        for row in 0..<rows {
            for column in 0..<columns {
                let a = Point(minX + (Double(column) + 0.5) * cell, minY + (Double(row) + 0.5) * cell)
                for offset in offsets {
                    let (c, r) = (column + offset.dx, row + offset.dy)
                    guard c >= 0, c < columns, r >= 0, r < rows else { continue }
                    let b = Point(minX + (Double(c) + 0.5) * cell, minY + (Double(r) + 0.5) * cell)
                    let (from, to) = (zones[row * columns + column], zones[r * columns + c])
                    if from != to {
                        // Into another zone: only across a door between the two, near where it is.
                        let middle = Point((a.x + b.x) / 2, (a.y + b.y) / 2)
                        let throughDoor = doors.contains { door in
                            ((door.a == from && door.b == to) || (door.a == to && door.b == from))
                                && (middle.x - door.at.x) * (middle.x - door.at.x)
                                    + (middle.y - door.at.y) * (middle.y - door.at.y) <= door.reach * door.reach
                        }
                        guard throughDoor else { continue }
                    }
                    let path = Segment(a, b)
                    let blocked = walls.contains { wall in
                        // Cheap bounding-box test first: most walls are far from most cells.
                        max(wall.a.x, wall.b.x) >= min(a.x, b.x) && min(wall.a.x, wall.b.x) <= max(a.x, b.x)
                            && max(wall.a.y, wall.b.y) >= min(a.y, b.y) && min(wall.a.y, wall.b.y) <= max(a.y, b.y)
                            && path.intersects(wall)
                    }
                    if !blocked {
                        list.append(Int32(r * columns + c))
                    }
                }
                start.append(Int32(list.count))
            }
        }
        neighbourStart = start
        neighbours = list
    }

    /// The centre of cell `index`.
    /// The cell `point` lies in; nil off the grid.
    package func cell(containing point: Point) -> Int? {
        let column = Int(((point.x - origin.x) / cellSize).rounded(.down))
        let row = Int(((point.y - origin.y) / cellSize).rounded(.down))
        guard column >= 0, column < columns, row >= 0, row < rows else { return nil }
        return row * columns + column
    }

    package func centre(_ index: Int) -> Point {
        Point(
            origin.x + (Double(index % columns) + 0.5) * cellSize, origin.y + (Double(index / columns) + 0.5) * cellSize
        )
    }
}
