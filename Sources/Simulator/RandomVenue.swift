import BeaconModel

/// `beacon-sim venue --random`: a venue file drawn from a seed, for testing the inference on layouts and radios
/// nobody hand-made. Pure: the same seed (and family) give the same text on every machine. The file is in the
/// format of docs/venue.md; what it cannot hold (family, seed) is in its leading comment.
public struct RandomVenue: Sendable {
    /// The kind of building drawn.
    public enum Family: String, Sendable, Hashable, CaseIterable {
        /// Rooms on a grid joined by doors.
        case museum
        /// A corridor with side rooms (offices or hospital wards).
        case corridor
        /// An L- or U-shaped row of rooms.
        case gallery
        /// Open plan: zones marked on the floor, no interior walls.
        case shop
        /// Open plan with shelving rows (light walls) between aisles.
        case supermarket
        /// Rooms off an open hall.
        case mixed
    }

    /// The radio drawn: the simulator's own, or a foreign one (`radio.foreign`, docs/venue.md) over the same layout.
    public enum Radio: String, Sendable, Hashable, CaseIterable {
        case standard
        /// Nakagami fading, shadowing at two scales, channels, receivers that differ, quantise and saturate, fade
        /// bursts, crowds, and tags that advertise no power: radio the engine does not model.
        case foreign
    }

    public let seed: UInt64
    public let family: Family
    public let radio: Radio
    /// The venue file's text.
    public let yaml: String
    public let zones: Int
    public let gateways: Int
    /// Tags after `count` expansion.
    public let tags: Int

    /// The ranges the generator draws from (docs/simulator.md); tests check the drawn files against them.
    public enum Ranges {
        public static let zoneSide = 3.0...15.0
        public static let zoneCount = 4...30
        public static let pathLossExponent = 1.6...3.5
        public static let wallLoss = 2.0...15.0
        public static let shadowingSigma = 2.0...8.0
        public static let shadowingCorrelationMetres = 1.0...5.0
        public static let gatewayGain = -6.0...6.0
        /// Around the reference −59 dBm.
        public static let txPower = -65...(-53)
        public static let bodyLossDB = 0.0...14.0
        public static let interval = 0.1...2.0
        public static let packetLoss = 0.0...0.4
        public static let ceilingHeight = 2.7...3.3
        public static let wallMountHeight = 1.0...2.5
        /// Two slopes: the breakpoint, and how much steeper the far slope is than the near one.
        public static let breakpointMetres = 5.0...20.0
        public static let farExponentIncrease = 0.5...2.0
        /// Wall-mounted and outside gateways with an antenna pattern: its front-to-back ratio, and how far it faces
        /// from straight into the room (or the building).
        public static let antennaFrontToBackDB = 3.0...20.0
        public static let antennaFacingErrorDegrees = -20.0...20.0
        public static let interferenceBurstsPerHour = 1.0...20.0
        public static let interferenceBurstSeconds = 2.0...60.0
        public static let interferencePacketLoss = 0.2...0.8
        public static let interferenceNoiseDB = 1.0...6.0
        public static let clockOffsetSigmaSeconds = 0.01...0.1
        public static let clockJitterSeconds = 0.001...0.02
        /// Shares: venues with two slopes, wall-mounted and outside gateways with an antenna pattern, venues with
        /// interference bursts, tag groups that advertise no measured power.
        public static let twoSlopeShare = 0.4
        public static let antennaShare = 0.6
        public static let interferenceShare = 0.4
        public static let silentPowerShare = 0.2
    }

    /// Draws a venue. The family is the seed's unless `family` forces one; forcing the seed's own family gives the
    /// same file as not forcing it. A `foreign` radio keeps the seed's layout, gateways and tags (their powers then go
    /// unadvertised) and adds a foreign radio drawn from a stream of its own.
    public static func generate(seed: UInt64, family: Family? = nil, radio: Radio = .standard) -> RandomVenue {
        var rng = SeededGenerator(seed: seed)
        let drawnFamily = Family.allCases.randomElement(using: &rng) ?? .museum
        let family = family ?? drawnFamily
        // A layout whose zones cannot all be reached (a sliver of contact, a cut-off cell) is drawn again; the
        // loop is bounded because almost every draw succeeds.
        for _ in 0..<1000 {
            var attempt = rng.split()
            if var plan = Plan.draw(family: family, using: &attempt) {
                if radio == .foreign {
                    var foreignDraws = SeededGenerator(seed: seed ^ 0xF0_2E16_4AD1)
                    plan.makeForeign(using: &foreignDraws)
                }
                return RandomVenue(
                    seed: seed, family: family, radio: radio, yaml: plan.yaml(seed: seed, family: family),
                    zones: plan.zones.count, gateways: plan.gateways.count, tags: plan.tags.reduce(0) { $0 + $1.count })
            }
        }
        preconditionFailure("no connected \(family.rawValue) layout in 1000 draws for seed \(seed)")
    }
}

// MARK: - The plan: a venue as plain values before it is written

extension RandomVenue {
    /// An axis-aligned rectangle; coordinates are multiples of 0.5 m, so comparisons between edges are exact.
    struct Rect: Hashable {
        var x: Double
        var y: Double
        var width: Double
        var height: Double
        var maxX: Double { x + width }
        var maxY: Double { y + height }
        var centre: Point { Point(x + width / 2, y + height / 2) }
        func contains(_ point: Point) -> Bool { point.x >= x && point.x <= maxX && point.y >= y && point.y <= maxY }
    }

    /// How a zone is bounded: walls with doors, floor markings, or shelving.
    enum ZoneKind {
        case room, open, aisle
    }

    struct ZonePlan {
        var id: String
        var name: String
        var rect: Rect
        var kind: ZoneKind
    }

    /// A door on an axis-aligned edge: `vertical` edges are lines x = `line`.
    struct DoorPlan {
        var between: (String, String)
        var vertical: Bool
        var line: Double
        var centre: Double
        var width: Double
        var at: Point { vertical ? Point(line, centre) : Point(centre, line) }
    }

    struct WallPlan {
        var from: Point
        var to: Point
        var attenuation: Double
    }

    struct GatewayPlan {
        var id: String
        var zone: String?
        var position: Point
        var height: Double
        var gain: Double
        var antenna: (facing: Double, frontToBackDB: Double)?
    }

    struct TagPlan {
        var id: String
        var beacon: String
        var carrier: Venue.Tag.Carrier
        var interval: Double
        var txPower: Int?
        var advertisesPower: Bool
        var start: String
        var count: Int
    }

    struct RadioPlan {
        var p0Spread: Double
        var pathLossExponent: Double
        var shadowingSigma: Double
        var shadowingCorrelationMetres: Double
        var noiseSigma: Double
        var deepFadeShare: Double
        var deepFadeDB: Double
        var fadingSigma: Double
        var fadingTauSeconds: Double
        var bodyLossDB: Double
        var packetLoss: Double
        var twoSlopes: (breakpointMetres: Double, farPathLossExponent: Double)?
        var interference: (perHour: Double, seconds: Double, packetLoss: Double, noiseDB: Double)?
        var clockOffsetSigmaSeconds: Double
        var clockJitterSeconds: Double
        var foreign: ForeignRadioSettings?
    }

    /// What a family's layout hands on: zones, where entrances may go, and how freely rooms get extra doors.
    struct Layout {
        var zones: [ZonePlan]
        /// Indices of zones an entrance from outside may open into, in tiers: a later tier only when the earlier
        /// ones have no outer edge long enough.
        var entranceCandidates: [[Int]]
        var entrances: ClosedRange<Int>
        /// Chance of a door between two rooms (or a room and a hall) beyond those needed to reach every zone.
        var extraDoorChance: Double
        /// Walkers' carriers of this kind of venue.
        var walkingCarriers: [Venue.Tag.Carrier]
        var name: String
    }

    /// A stretch of an edge line with the zones on either side (one: the building's shell).
    struct Piece {
        var vertical: Bool
        var line: Double
        var lo: Double
        var hi: Double
        var sides: [Int]
        var length: Double { hi - lo }
    }

    struct Plan {
        var name: String
        var zones: [ZonePlan]
        var doors: [DoorPlan]
        var walls: [WallPlan]
        var gateways: [GatewayPlan]
        var tags: [TagPlan]
        var radio: RadioPlan

        /// One draw; nil when the layout has too few or too many zones, or leaves one unreachable from outside.
        static func draw(family: Family, using rng: inout SeededGenerator) -> Plan? {
            let layout = RandomVenue.layout(family, using: &rng)
            guard Ranges.zoneCount.contains(layout.zones.count) else { return nil }
            let zones = layout.zones
            let pieces = RandomVenue.pieces(of: zones.map(\.rect))
            guard let doors = RandomVenue.doors(layout: layout, pieces: pieces, using: &rng) else { return nil }
            let walls = RandomVenue.walls(zones: zones, pieces: pieces, doors: doors, using: &rng)
            let gateways = RandomVenue.gateways(zones: zones, using: &rng)
            let entranceZones = doors.filter { $0.between.0 == "outside" }.map(\.between.1)
            let tags = RandomVenue.tags(
                zones: zones.map(\.id), entrances: entranceZones, carriers: layout.walkingCarriers, using: &rng)
            let radio = RandomVenue.radio(using: &rng)
            return Plan(
                name: layout.name, zones: zones, doors: doors, walls: walls, gateways: gateways, tags: tags,
                radio: radio)
        }
    }
}

// MARK: - Drawing helpers

extension RandomVenue {
    /// A value in `range` on a grid of 1/`steps` (0.5 m for geometry, 0.1 dB for losses), so the written numbers
    /// are short and exactly the ones checked.
    static func draw(_ range: ClosedRange<Double>, steps: Double, using rng: inout SeededGenerator) -> Double {
        let low = Int((range.lowerBound * steps).rounded(.up))
        let high = Int((range.upperBound * steps).rounded(.down))
        return Double(Int.random(in: low...max(low, high), using: &rng)) / steps
    }

    /// A zone side, metres, on the half-metre grid.
    static func side(_ range: ClosedRange<Double>, using rng: inout SeededGenerator) -> Double {
        draw(range, steps: 2, using: &rng)
    }

    /// `length` cut into pieces within `bounds` (on the half-metre grid), in order.
    static func partition(
        _ length: Double, within bounds: ClosedRange<Double>, using rng: inout SeededGenerator
    ) -> [Double] {
        let low = Int(bounds.lowerBound * 2)
        let high = Int(bounds.upperBound * 2)
        var remaining = Int((length * 2).rounded())
        var pieces: [Int] = []
        while remaining > high || (remaining >= 2 * low && Bool.random(using: &rng)) {
            let piece = Int.random(in: low...min(high, remaining - low), using: &rng)
            pieces.append(piece)
            remaining -= piece
        }
        pieces.append(remaining)
        return pieces.map { Double($0) / 2 }
    }

    static func chance(_ probability: Double, using rng: inout SeededGenerator) -> Bool {
        Double.random(in: 0..<1, using: &rng) < probability
    }

    /// The edges of the rectangles cut where they meet, each stretch with the zones on its two sides; consecutive
    /// stretches with the same sides are one piece (one wall, one shared edge).
    static func pieces(of rects: [Rect]) -> [Piece] {
        struct Edge {
            var zone: Int
            var lo: Double
            var hi: Double
        }
        struct LineKey: Hashable {
            var vertical: Bool
            var line: Double
        }
        var lines: [LineKey: [Edge]] = [:]
        for (index, rect) in rects.enumerated() {
            lines[LineKey(vertical: false, line: rect.y), default: []].append(
                Edge(zone: index, lo: rect.x, hi: rect.maxX))
            lines[LineKey(vertical: false, line: rect.maxY), default: []].append(
                Edge(zone: index, lo: rect.x, hi: rect.maxX))
            lines[LineKey(vertical: true, line: rect.x), default: []].append(
                Edge(zone: index, lo: rect.y, hi: rect.maxY))
            lines[LineKey(vertical: true, line: rect.maxX), default: []].append(
                Edge(zone: index, lo: rect.y, hi: rect.maxY))
        }
        var pieces: [Piece] = []
        let keys = lines.keys.sorted { ($0.vertical ? 1 : 0, $0.line) < ($1.vertical ? 1 : 0, $1.line) }
        for key in keys {
            let edges = lines[key] ?? []
            let stops = Set(edges.flatMap { [$0.lo, $0.hi] }).sorted()
            var current: Piece?
            for (lo, hi) in zip(stops, stops.dropFirst()) {
                let sides = edges.filter { $0.lo <= lo && $0.hi >= hi }.map(\.zone).sorted()
                if var open = current, open.sides == sides, open.hi == lo {
                    open.hi = hi
                    current = open
                    continue
                }
                if let open = current { pieces.append(open) }
                current =
                    sides.isEmpty ? nil : Piece(vertical: key.vertical, line: key.line, lo: lo, hi: hi, sides: sides)
            }
            if let open = current { pieces.append(open) }
        }
        return pieces
    }
}
