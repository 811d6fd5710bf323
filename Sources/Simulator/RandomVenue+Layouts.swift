import BeaconModel

/// The six families' floor plans: rectangles on a half-metre grid, each with how it is bounded.
extension RandomVenue {
    static func layout(_ family: Family, using rng: inout SeededGenerator) -> Layout {
        switch family {
        case .museum: museum(using: &rng)
        case .corridor: corridor(using: &rng)
        case .gallery: gallery(using: &rng)
        case .shop: shop(using: &rng)
        case .supermarket: supermarket(using: &rng)
        case .mixed: mixed(using: &rng)
        }
    }

    /// Rooms on a grid of drawn column widths and row heights, a few cells sometimes left out.
    static func museum(using rng: inout SeededGenerator) -> Layout {
        var (columns, rows) = (0, 0)
        repeat {
            columns = Int.random(in: 2...6, using: &rng)
            rows = Int.random(in: 1...5, using: &rng)
        } while !Ranges.zoneCount.contains(columns * rows)
        let widths = (0..<columns).map { _ in side(5...15, using: &rng) }
        let heights = (0..<rows).map { _ in side(5...15, using: &rng) }
        var cells = (0..<rows).flatMap { row in (0..<columns).map { (column: $0, row: row) } }
        if chance(0.5, using: &rng) {
            for _ in 0..<Int.random(in: 1...max(1, cells.count / 5), using: &rng) where cells.count > 4 {
                cells.remove(at: Int.random(in: cells.indices, using: &rng))
            }
        }
        let zones = cells.enumerated().map { index, cell in
            ZonePlan(
                id: "room-\(index + 1)", name: "Room \(index + 1)",
                rect: Rect(
                    x: widths[..<cell.column].reduce(0, +), y: heights[..<cell.row].reduce(0, +),
                    width: widths[cell.column], height: heights[cell.row]),
                kind: .room)
        }
        return Layout(
            zones: zones, entranceCandidates: [Array(zones.indices)], entrances: 1...2,
            extraDoorChance: draw(0.1...0.5, steps: 100, using: &rng), walkingCarriers: [.visitor],
            name: "Random museum")
    }

    /// A corridor (open segments of at most 15 m) with offices or wards below it and, usually, above it.
    static func corridor(using rng: inout SeededGenerator) -> Layout {
        let wards = Bool.random(using: &rng)
        let (prefix, title) = wards ? ("ward", "Ward") : ("office", "Office")
        let corridorWidth = side(3...4, using: &rng)
        let below = (0..<Int.random(in: 2...8, using: &rng)).map { _ in side(3...12, using: &rng) }
        let length = below.reduce(0, +)
        let above = chance(0.75, using: &rng) ? partition(length, within: 3...12, using: &rng) : []
        let segments = partition(length, within: 3...15, using: &rng)
        let depthBelow = side(3...8, using: &rng)
        let depthAbove = side(3...8, using: &rng)
        var zones: [ZonePlan] = []
        func row(_ widths: [Double], y: Double, height: Double, kind: ZoneKind, id: String, name: String) {
            var x = 0.0
            for width in widths {
                let number = zones.filter { $0.id.hasPrefix(id + "-") }.count + 1
                zones.append(
                    ZonePlan(
                        id: "\(id)-\(number)", name: "\(name) \(number)",
                        rect: Rect(x: x, y: y, width: width, height: height), kind: kind))
                x += width
            }
        }
        row(segments, y: depthBelow, height: corridorWidth, kind: .open, id: "corridor", name: "Corridor")
        row(below, y: 0, height: depthBelow, kind: .room, id: prefix, name: title)
        row(above, y: depthBelow + corridorWidth, height: depthAbove, kind: .room, id: prefix, name: title)
        return Layout(
            zones: zones, entranceCandidates: [[0, segments.count - 1]], entrances: 1...2, extraDoorChance: 0.1,
            walkingCarriers: [.visitor], name: wards ? "Random hospital ward" : "Random office floor")
    }

    /// Rooms in a row: along x, round a corner room, up y, and for a U round a second corner back along −x.
    static func gallery(using rng: inout SeededGenerator) -> Layout {
        let depth = side(4...12, using: &rng)
        let shapedU = Bool.random(using: &rng)
        var rects: [Rect] = []
        var x = 0.0
        for _ in 0..<Int.random(in: 1...7, using: &rng) {
            let width = side(4...15, using: &rng)
            rects.append(Rect(x: x, y: 0, width: width, height: depth))
            x += width
        }
        rects.append(Rect(x: x, y: 0, width: depth, height: depth))
        var y = depth
        for _ in 0..<Int.random(in: 1...7, using: &rng) {
            let height = side(4...15, using: &rng)
            rects.append(Rect(x: x, y: y, width: depth, height: height))
            y += height
        }
        if shapedU {
            rects.append(Rect(x: x, y: y, width: depth, height: depth))
            var left = x
            for _ in 0..<Int.random(in: 1...7, using: &rng) {
                let width = side(4...15, using: &rng)
                left -= width
                rects.append(Rect(x: left, y: y, width: width, height: depth))
            }
        }
        let zones = rects.enumerated().map { index, rect in
            ZonePlan(id: "gallery-\(index + 1)", name: "Gallery \(index + 1)", rect: rect, kind: .room)
        }
        return Layout(
            zones: zones, entranceCandidates: [[0, zones.count - 1]], entrances: 1...2, extraDoorChance: 0,
            walkingCarriers: [.visitor], name: shapedU ? "Random U-shaped gallery" : "Random L-shaped gallery")
    }

    /// Open plan: a grid of sections marked on the floor, entrances on the front row.
    static func shop(using rng: inout SeededGenerator) -> Layout {
        var (columns, rows) = (0, 0)
        repeat {
            columns = Int.random(in: 2...6, using: &rng)
            rows = Int.random(in: 1...5, using: &rng)
        } while !Ranges.zoneCount.contains(columns * rows)
        let widths = (0..<columns).map { _ in side(3...10, using: &rng) }
        let heights = (0..<rows).map { _ in side(3...10, using: &rng) }
        var zones: [ZonePlan] = []
        for row in 0..<rows {
            for column in 0..<columns {
                let number = zones.count + 1
                zones.append(
                    ZonePlan(
                        id: "section-\(number)", name: "Section \(number)",
                        rect: Rect(
                            x: widths[..<column].reduce(0, +), y: heights[..<row].reduce(0, +), width: widths[column],
                            height: heights[row]),
                        kind: .open))
            }
        }
        return Layout(
            zones: zones, entranceCandidates: [Array(0..<columns)], entrances: 1...2, extraDoorChance: 0,
            walkingCarriers: [.shopper], name: "Random shop")
    }

    /// Aisles between shelving rows, an open front area (checkouts) and usually an open back area.
    static func supermarket(using rng: inout SeededGenerator) -> Layout {
        let aisles = (0..<Int.random(in: 3...12, using: &rng)).map { _ in side(3...5, using: &rng) }
        let width = aisles.reduce(0, +)
        let aisleLength = side(8...15, using: &rng)
        let frontDepth = side(3...8, using: &rng)
        let front = partition(width, within: 3...15, using: &rng)
        let back = chance(0.7, using: &rng) ? partition(width, within: 3...15, using: &rng) : []
        let backDepth = side(3...6, using: &rng)
        var zones: [ZonePlan] = []
        func row(_ widths: [Double], y: Double, height: Double, kind: ZoneKind, id: String, name: String) {
            var x = 0.0
            for (index, piece) in widths.enumerated() {
                zones.append(
                    ZonePlan(
                        id: "\(id)-\(index + 1)", name: "\(name) \(index + 1)",
                        rect: Rect(x: x, y: y, width: piece, height: height), kind: kind))
                x += piece
            }
        }
        row(front, y: 0, height: frontDepth, kind: .open, id: "front", name: "Front")
        row(aisles, y: frontDepth, height: aisleLength, kind: .aisle, id: "aisle", name: "Aisle")
        row(back, y: frontDepth + aisleLength, height: backDepth, kind: .open, id: "back", name: "Back")
        return Layout(
            zones: zones, entranceCandidates: [Array(front.indices)], entrances: 1...2, extraDoorChance: 0,
            walkingCarriers: [.shopper], name: "Random supermarket")
    }

    /// An open hall (a grid of open zones) with rooms along some of its sides.
    static func mixed(using rng: inout SeededGenerator) -> Layout {
        let hallWidths = (0..<Int.random(in: 1...3, using: &rng)).map { _ in side(4...15, using: &rng) }
        let hallHeights = (0..<Int.random(in: 1...2, using: &rng)).map { _ in side(4...15, using: &rng) }
        let (hallWidth, hallHeight) = (hallWidths.reduce(0, +), hallHeights.reduce(0, +))
        var sides = (
            bottom: chance(0.8, using: &rng), top: chance(0.8, using: &rng), left: chance(0.4, using: &rng),
            right: chance(0.5, using: &rng)
        )
        if !sides.bottom && !sides.top && !sides.left && !sides.right { sides.bottom = true }
        let depths = (0..<4).map { _ in side(3...10, using: &rng) }
        let left = sides.left ? depths[2] : 0
        let bottom = sides.bottom ? depths[0] : 0
        var zones: [ZonePlan] = []
        for (row, height) in hallHeights.enumerated() {
            for (column, width) in hallWidths.enumerated() {
                let number = zones.count + 1
                zones.append(
                    ZonePlan(
                        id: "hall-\(number)", name: "Hall \(number)",
                        rect: Rect(
                            x: left + hallWidths[..<column].reduce(0, +), y: bottom + hallHeights[..<row].reduce(0, +),
                            width: width, height: height),
                        kind: .open))
            }
        }
        let halls = zones.count
        func rooms(along length: Double, _ place: (_ offset: Double, _ size: Double) -> Rect) {
            var offset = 0.0
            for size in partition(length, within: 3...12, using: &rng) {
                let number = zones.count - halls + 1
                zones.append(
                    ZonePlan(id: "room-\(number)", name: "Room \(number)", rect: place(offset, size), kind: .room))
                offset += size
            }
        }
        if sides.bottom { rooms(along: hallWidth) { Rect(x: left + $0, y: 0, width: $1, height: bottom) } }
        if sides.top {
            rooms(along: hallWidth) { Rect(x: left + $0, y: bottom + hallHeight, width: $1, height: depths[1]) }
        }
        if sides.left { rooms(along: hallHeight) { Rect(x: 0, y: bottom + $0, width: left, height: $1) } }
        if sides.right {
            rooms(along: hallHeight) { Rect(x: left + hallWidth, y: bottom + $0, width: depths[3], height: $1) }
        }
        return Layout(
            zones: zones, entranceCandidates: [Array(0..<halls), Array(halls..<zones.count)], entrances: 1...2,
            extraDoorChance: 0.15, walkingCarriers: [.visitor, .shopper], name: "Random hall with rooms")
    }
}
