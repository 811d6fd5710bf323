import BeaconModel

/// Doors, walls, gateways, tags and radio drawn for a layout.
extension RandomVenue {
    static let outside = "outside"

    /// Entrances first (the simulator's walkers leave through the first), then an opening along every edge two
    /// open-plan zones share, then doors for rooms: enough to reach every zone from outside (a room's door to a hall
    /// or corridor preferred over one to another room), and a few more by `extraDoorChance`. Nil when some zone
    /// cannot be reached.
    static func doors(layout: Layout, pieces: [Piece], using rng: inout SeededGenerator) -> [DoorPlan]? {
        let zones = layout.zones
        let outsideNode = zones.count
        var parent = Array(0...zones.count)
        func root(_ node: Int) -> Int {
            var node = node
            while parent[node] != node {
                parent[node] = parent[parent[node]]
                node = parent[node]
            }
            return node
        }
        func join(_ a: Int, _ b: Int) -> Bool {
            let (ra, rb) = (root(a), root(b))
            guard ra != rb else { return false }
            parent[ra] = rb
            return true
        }
        var doors: [DoorPlan] = []
        let wanted = Int.random(in: layout.entrances, using: &rng)
        let candidates = layout.entranceCandidates.flatMap { $0.shuffled(using: &rng) }
        for zone in candidates where doors.count < wanted {
            let widths = zones[zone].kind == .room ? 0.9...2.0 : 1.5...4.0
            let outer = pieces.filter { $0.sides == [zone] && $0.length >= 1.5 }.shuffled(using: &rng)
            for piece in outer {
                let entrance = door((outside, zones[zone].id), on: piece, widths: widths, using: &rng)
                // Walkers leave to a point 8 m beyond the door, away from the zone's centre (ZoneGraph); it must
                // not fall in another zone, or the truth would say outside where the radio says inside.
                let centre = zones[zone].rect.centre
                let (dx, dy) = (entrance.at.x - centre.x, entrance.at.y - centre.y)
                let length = max((dx * dx + dy * dy).squareRoot(), 1e-9)
                let beyond = Point(entrance.at.x + dx / length * 8, entrance.at.y + dy / length * 8)
                guard !zones.contains(where: { $0.rect.contains(beyond) }) else { continue }
                doors.append(entrance)
                _ = join(zone, outsideNode)
                break
            }
        }
        guard !doors.isEmpty else { return nil }
        var links: [(piece: Piece, rank: Int, key: Double)] = []
        for piece in pieces where piece.sides.count == 2 {
            let (a, b) = (piece.sides[0], piece.sides[1])
            switch (zones[a].kind, zones[b].kind) {
            case (.room, _), (_, .room):
                guard piece.length >= 1.5 else { continue }
                let rank = zones[a].kind == zones[b].kind ? 1 : 0
                links.append((piece, rank, Double.random(in: 0..<1, using: &rng)))
            case (.aisle, .aisle):
                continue
            default:
                doors.append(
                    DoorPlan(
                        between: (zones[a].id, zones[b].id), vertical: piece.vertical, line: piece.line,
                        centre: (piece.lo + piece.hi) / 2, width: piece.length))
                _ = join(a, b)
            }
        }
        links.sort { ($0.rank, $0.key) < ($1.rank, $1.key) }
        var spare: [Piece] = []
        for link in links {
            let (a, b) = (link.piece.sides[0], link.piece.sides[1])
            if join(a, b) {
                doors.append(door((zones[a].id, zones[b].id), on: link.piece, widths: 0.9...2.0, using: &rng))
            } else {
                spare.append(link.piece)
            }
        }
        for piece in spare {
            guard chance(layout.extraDoorChance, using: &rng) else { continue }
            let (a, b) = (piece.sides[0], piece.sides[1])
            doors.append(door((zones[a].id, zones[b].id), on: piece, widths: 0.9...2.0, using: &rng))
        }
        let reached = root(outsideNode)
        guard zones.indices.allSatisfy({ root($0) == reached }) else { return nil }
        return doors
    }

    /// A door of a drawn width somewhere along `piece`, 0.2 m clear of its ends.
    static func door(
        _ between: (String, String), on piece: Piece, widths: ClosedRange<Double>, using rng: inout SeededGenerator
    ) -> DoorPlan {
        let widest = min(widths.upperBound, piece.length - 0.4)
        let width = draw(min(widths.lowerBound, widest)...widest, steps: 10, using: &rng)
        let clear = width / 2 + 0.2
        let centre = draw((piece.lo + clear)...max(piece.lo + clear, piece.hi - clear), steps: 10, using: &rng)
        return DoorPlan(between: between, vertical: piece.vertical, line: piece.line, centre: centre, width: width)
    }

    /// Walls along the shell and wherever a room meets anything, shelving between aisles, none between open-plan
    /// zones; doors cut gaps. Each wall's loss is drawn on its own around the venue's level for its kind.
    static func walls(
        zones: [ZonePlan], pieces: [Piece], doors: [DoorPlan], using rng: inout SeededGenerator
    ) -> [WallPlan] {
        let shell = draw(5...15, steps: 10, using: &rng)
        let inner = draw(2...13, steps: 10, using: &rng)
        var walls: [WallPlan] = []
        for piece in pieces {
            let level: Double
            if piece.sides.count == 1 {
                level = shell
            } else if zones[piece.sides[0]].kind == .room || zones[piece.sides[1]].kind == .room {
                level = inner
            } else if zones[piece.sides[0]].kind == .aisle && zones[piece.sides[1]].kind == .aisle {
                level = draw(2...6, steps: 10, using: &rng)
            } else {
                continue
            }
            let gaps = doors.filter { $0.vertical == piece.vertical && $0.line == piece.line }
                .map { (lo: $0.centre - $0.width / 2, hi: $0.centre + $0.width / 2) }
                .sorted { $0.lo < $1.lo }
            var stretches: [(lo: Double, hi: Double)] = []
            var start = piece.lo
            for gap in gaps where gap.hi > start && gap.lo < piece.hi {
                if gap.lo - start > 0.05 { stretches.append((start, gap.lo)) }
                start = max(start, gap.hi)
            }
            if piece.hi - start > 0.05 { stretches.append((start, piece.hi)) }
            for stretch in stretches {
                let around = max(Ranges.wallLoss.lowerBound, level - 2)...min(Ranges.wallLoss.upperBound, level + 2)
                let from = piece.vertical ? Point(piece.line, stretch.lo) : Point(stretch.lo, piece.line)
                let to = piece.vertical ? Point(piece.line, stretch.hi) : Point(stretch.hi, piece.line)
                walls.append(WallPlan(from: from, to: to, attenuation: draw(around, steps: 10, using: &rng)))
            }
        }
        return walls
    }

    /// Per zone: none, one on the ceiling near the centre, one on a wall, or (large zones) two on the ceiling;
    /// then one to three outside every zone, beyond the building's bounds. Every gateway gets its own gain offset;
    /// some on a wall or outside an antenna pattern facing into the room or the building.
    static func gateways(zones: [ZonePlan], using rng: inout SeededGenerator) -> [GatewayPlan] {
        let noneChance = draw(0.05...0.3, steps: 100, using: &rng)
        var gateways: [GatewayPlan] = []
        func add(_ id: String, zone: String?, _ position: Point, height: Double, facing: Double? = nil) {
            let gain = draw(Ranges.gatewayGain, steps: 10, using: &rng)
            var antenna: (Double, Double)?
            if let facing, chance(Ranges.antennaShare, using: &rng) {
                antenna = (
                    facing + draw(Ranges.antennaFacingErrorDegrees, steps: 1, using: &rng),
                    draw(Ranges.antennaFrontToBackDB, steps: 10, using: &rng)
                )
            }
            gateways.append(
                GatewayPlan(id: id, zone: zone, position: position, height: height, gain: gain, antenna: antenna))
        }
        func ceiling(_ rng: inout SeededGenerator) -> Double { draw(Ranges.ceilingHeight, steps: 10, using: &rng) }
        for zone in zones {
            let rect = zone.rect
            if chance(noneChance, using: &rng) { continue }
            let large = max(rect.width, rect.height) >= 10 && rect.width * rect.height >= 60
            if large && chance(0.5, using: &rng) {
                let alongX = rect.width >= rect.height
                for (suffix, share) in [("a", 0.25), ("b", 0.75)] {
                    let position =
                        alongX
                        ? Point(rect.x + rect.width * share, rect.centre.y)
                        : Point(rect.centre.x, rect.y + rect.height * share)
                    add("gw-\(zone.id)-\(suffix)", zone: zone.id, position, height: ceiling(&rng))
                }
            } else if chance(0.35, using: &rng) {
                let edge = Int.random(in: 0..<4, using: &rng)
                let vertical = edge >= 2
                let (lo, hi) = vertical ? (rect.y, rect.maxY) : (rect.x, rect.maxX)
                let along = draw((lo + 0.5)...(hi - 0.5), steps: 10, using: &rng)
                let across: Double =
                    switch edge {
                    case 0: rect.y + 0.2
                    case 1: rect.maxY - 0.2
                    case 2: rect.x + 0.2
                    default: rect.maxX - 0.2
                    }
                let position = vertical ? Point(across, along) : Point(along, across)
                // Facing into the room, away from its wall: +y from the lower edge, −y from the upper, and so on.
                let into: [Double] = [90, 270, 0, 180]
                add(
                    "gw-\(zone.id)", zone: zone.id, position,
                    height: draw(Ranges.wallMountHeight, steps: 10, using: &rng), facing: into[edge])
            } else {
                let position = Point(
                    rect.centre.x + draw(-0.1...0.1, steps: 100, using: &rng) * rect.width,
                    rect.centre.y + draw(-0.1...0.1, steps: 100, using: &rng) * rect.height)
                add("gw-\(zone.id)", zone: zone.id, position, height: ceiling(&rng))
            }
        }
        if gateways.isEmpty, let first = zones.first {
            add("gw-\(first.id)", zone: first.id, first.rect.centre, height: ceiling(&rng))
        }
        let xs = zones.flatMap { [$0.rect.x, $0.rect.maxX] }
        let ys = zones.flatMap { [$0.rect.y, $0.rect.maxY] }
        let (minX, maxX, minY, maxY) = (xs.min() ?? 0, xs.max() ?? 0, ys.min() ?? 0, ys.max() ?? 0)
        for number in 1...Int.random(in: 1...3, using: &rng) {
            let offset = draw(0.5...3, steps: 10, using: &rng)
            let along = Double.random(in: 0...1, using: &rng)
            let side = Int.random(in: 0..<4, using: &rng)
            let position: Point =
                switch side {
                case 0: Point(minX + along * (maxX - minX), minY - offset)
                case 1: Point(minX + along * (maxX - minX), maxY + offset)
                case 2: Point(minX - offset, minY + along * (maxY - minY))
                default: Point(maxX + offset, minY + along * (maxY - minY))
                }
            // Facing the building.
            let towards: [Double] = [90, 270, 0, 180]
            add(
                "gw-outside-\(number)", zone: nil, position, height: draw(2...3, steps: 10, using: &rng),
                facing: towards[side])
        }
        return gateways
    }

    /// One to three groups of walkers (the family's carriers) starting at entrances, one group of staff, one to
    /// three still tags. Each group has its own advertising interval and measured power, or none (the simulator's
    /// reference −59 dBm); some groups do not advertise their power.
    static func tags(
        zones: [String], entrances: [String], carriers: [Venue.Tag.Carrier], using rng: inout SeededGenerator
    ) -> [TagPlan] {
        let uuid = "e2c56db5-dffb-48d2-b060-d0f5a71096e0"
        var tags: [TagPlan] = []
        func add(_ carrier: Venue.Tag.Carrier, count: Int, start: String, beacon: (Int) -> String) {
            let number = tags.count + 1
            let txPower = chance(0.25, using: &rng) ? nil : Int.random(in: Ranges.txPower, using: &rng)
            let interval = draw(Ranges.interval, steps: 20, using: &rng)
            tags.append(
                TagPlan(
                    id: "\(carrier.rawValue)-\(number)", beacon: beacon(number), carrier: carrier,
                    interval: interval, txPower: txPower,
                    advertisesPower: !chance(Ranges.silentPowerShare, using: &rng), start: start, count: count))
        }
        for _ in 0..<Int.random(in: 1...3, using: &rng) {
            let carrier = carriers.randomElement(using: &rng) ?? .visitor
            let start = entrances.randomElement(using: &rng) ?? zones[0]
            add(carrier, count: Int.random(in: 2...10, using: &rng), start: start) { "ibeacon:\(uuid):\($0):1" }
        }
        let staffStart = zones.randomElement(using: &rng) ?? zones[0]
        add(.staff, count: Int.random(in: 1...4, using: &rng), start: staffStart) { "ibeacon:\(uuid):\($0):1" }
        for still in 0..<Int.random(in: 1...3, using: &rng) {
            let start = zones.randomElement(using: &rng) ?? zones[0]
            add(.still, count: Int.random(in: 1...2, using: &rng), start: start) { number in
                switch still {
                case 0: "eddystone-uid:edd1ebeac04e5defa017:" + hex12(number * 0x100)
                case 1: "altbeacon:2f234454-cf6d-4a0f-adf2-f4911ba9ffa6:\(number):1"
                default: "ibeacon:\(uuid):\(number):1"
                }
            }
        }
        return tags
    }

    /// The radio: every venue its own propagation, noise and gateway clocks; some two slopes, some interference.
    static func radio(using rng: inout SeededGenerator) -> RadioPlan {
        var plan = RadioPlan(
            p0Spread: draw(0...3, steps: 10, using: &rng),
            pathLossExponent: draw(Ranges.pathLossExponent, steps: 100, using: &rng),
            shadowingSigma: draw(Ranges.shadowingSigma, steps: 10, using: &rng),
            shadowingCorrelationMetres: draw(Ranges.shadowingCorrelationMetres, steps: 10, using: &rng),
            noiseSigma: draw(2...5, steps: 10, using: &rng),
            deepFadeShare: draw(0...0.2, steps: 100, using: &rng),
            deepFadeDB: draw(3...10, steps: 10, using: &rng),
            fadingSigma: draw(1...4, steps: 10, using: &rng),
            fadingTauSeconds: draw(2...10, steps: 10, using: &rng),
            bodyLossDB: draw(Ranges.bodyLossDB, steps: 10, using: &rng),
            packetLoss: draw(Ranges.packetLoss, steps: 100, using: &rng),
            clockOffsetSigmaSeconds: draw(Ranges.clockOffsetSigmaSeconds, steps: 1000, using: &rng),
            clockJitterSeconds: draw(Ranges.clockJitterSeconds, steps: 1000, using: &rng))
        if chance(Ranges.twoSlopeShare, using: &rng) {
            plan.twoSlopes = (
                draw(Ranges.breakpointMetres, steps: 2, using: &rng),
                plan.pathLossExponent + draw(Ranges.farExponentIncrease, steps: 100, using: &rng)
            )
        }
        if chance(Ranges.interferenceShare, using: &rng) {
            plan.interference = (
                draw(Ranges.interferenceBurstsPerHour, steps: 1, using: &rng),
                draw(Ranges.interferenceBurstSeconds, steps: 1, using: &rng),
                draw(Ranges.interferencePacketLoss, steps: 100, using: &rng),
                draw(Ranges.interferenceNoiseDB, steps: 10, using: &rng)
            )
        }
        return plan
    }
}

extension RandomVenue {
    /// Twelve lower-case hex digits (an Eddystone instance).
    fileprivate static func hex12(_ value: Int) -> String {
        let hex = String(value, radix: 16)
        return String(repeating: "0", count: max(0, 12 - hex.count)) + hex
    }
}

extension RandomVenue.Plan {
    /// Gives the plan a foreign radio (`ForeignRadioSettings`, each key drawn from `RandomVenue.ForeignRanges`) and
    /// tags that advertise no power, their true powers spread wider.
    mutating func makeForeign(using rng: inout SeededGenerator) {
        typealias Ranges = RandomVenue.ForeignRanges
        func draw(_ range: ClosedRange<Double>, steps: Double) -> Double {
            RandomVenue.draw(range, steps: steps, using: &rng)
        }
        var foreign = ForeignRadioSettings()
        foreign.nakagamiM = draw(Ranges.nakagamiM, steps: 10)
        foreign.coarseShadowingSigma = draw(Ranges.coarseShadowingSigma, steps: 10)
        foreign.coarseShadowingMetres = draw(Ranges.coarseShadowingMetres, steps: 1)
        foreign.channelSigma = draw(Ranges.channelSigma, steps: 10)
        foreign.channelCorrelationMetres = draw(Ranges.channelCorrelationMetres, steps: 10)
        foreign.sensitivitySpreadDB = draw(Ranges.sensitivitySpreadDB, steps: 1)
        foreign.quantisedShare = draw(0...1, steps: 10)
        foreign.quantisationDB = draw(Ranges.quantisationDB, steps: 1)
        foreign.saturatedShare = draw(0...1, steps: 10)
        foreign.saturationDBm = draw(Ranges.saturationDBm, steps: 1)
        foreign.fadeBurstsPerMinute = draw(Ranges.fadeBurstsPerMinute, steps: 10)
        foreign.fadeBurstSeconds = draw(Ranges.fadeBurstSeconds, steps: 10)
        foreign.fadeBurstDB = draw(Ranges.fadeBurstDB, steps: 1)
        foreign.crowdedShare = draw(Ranges.crowdedShare, steps: 10)
        foreign.crowdPeriodMinutes = draw(Ranges.crowdPeriodMinutes, steps: 1)
        foreign.crowdLossDB = draw(Ranges.crowdLossDB, steps: 10)
        radio.foreign = foreign
        radio.p0Spread = draw(Ranges.p0Spread, steps: 10)
        for index in tags.indices { tags[index].advertisesPower = false }
    }
}

extension RandomVenue {
    /// The ranges a foreign radio is drawn from (docs/simulator.md); tests check the drawn files against them.
    public enum ForeignRanges {
        public static let nakagamiM = 0.7...3.0
        public static let coarseShadowingSigma = 2.0...6.0
        public static let coarseShadowingMetres = 6.0...20.0
        public static let channelSigma = 1.0...4.0
        public static let channelCorrelationMetres = 0.3...1.0
        public static let sensitivitySpreadDB = 0.0...10.0
        public static let quantisationDB = 2.0...5.0
        public static let saturationDBm = -60.0 ... -45.0
        public static let fadeBurstsPerMinute = 0.0...2.0
        public static let fadeBurstSeconds = 0.5...4.0
        public static let fadeBurstDB = 10.0...25.0
        public static let crowdedShare = 0.3...0.8
        public static let crowdPeriodMinutes = 10.0...60.0
        public static let crowdLossDB = 0.0...10.0
        /// The tags' true powers around their nominal one (uniform ±), dB: none of them says it.
        public static let p0Spread = 2.0...6.0
    }
}
