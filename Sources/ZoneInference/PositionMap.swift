import BeaconModel

#if canImport(Glibc)
    import Glibc
#endif

/// What the `position` method knows of the venue's radio, shared by every tag: the floor grid (walking only through
/// doors, never through walls), each gateway's expected level at each cell for a tag of 0 dBm at 1 m (the path-loss law
/// and the walls' losses, plus what a calibration or the online fit learned), the gateways worth listening for at each
/// cell, and the noise tables.
package struct PositionMap: Sendable {
    let grid: FloorGrid
    /// Expected level of gateway `g` at cell `c` for a tag of 0 dBm at 1 m, in the noise tables' steps (0.1 dB,
    /// `ReadingNoise.stepsPerDB`): `levelSteps[g * grid.count + c]`, −200 dB where none is tabulated. Half the memory
    /// of floats, and the likelihood's inner loop works on these integers (reading floats, it waited on memory a third
    /// of the engine's time).
    let levelSteps: [Int16]
    let gatewayCount: Int
    let sensitivity: Float
    /// Per gateway, the level below which it hears nothing: `sensitivity`, or higher where the gateway's own readings
    /// stop short of it (`ZoneEngine.learnSensitivities`).
    var sensitivities: [Float]
    /// The noise tables of the observation model in use (`ObservationModel`), and that model's index among the engine's
    /// candidates (the key of the tables made from them).
    var noise: ReadingNoise
    var noiseID = 0
    /// Per cell, the gateways that should hear a tag of the reference power there at least now and then: their silence
    /// is evidence. Cell `c`'s are `audible[audibleStart[c] ..< audibleStart[c + 1]]`.
    let audibleStart: [Int32]
    let audible: [Int32]
    /// Cells inside some zone or just outside an entrance: where a tag first heard may be.
    let startCells: [Int32]
    /// Per cell, whether it is one of `startCells`.
    let isStart: [Bool]
    /// Per gateway, the cells it reaches, loudest first: where a tag heard loudly by it may be.
    let loudestCells: [[Int32]]

    /// Levels this far below sensitivity still count a gateway as one that may hear (a tag 10 dB above the reference,
    /// in the audible lists; a tag of any power, in `missedSum`).
    static let audibleMargin: Float = 10

    /// The path-loss exponent this map assumes.
    let exponent: Double
    /// Square tiles of `tileMetres` over the grid: what the map learns is per gateway and tile. `tileOfCell[c]`,
    /// and the learned correction of gateway `g` in tile `t`, dB: `correction[g * tileCount + t]`.
    let tileOfCell: [Int32]
    let tileCount: Int
    var correction: [Float]
    /// Whether any correction is non-zero: the tables of `missedSum` leave corrections out.
    var corrected = false
    /// A gateway is in cell `c`'s audible list when its level there is at least this (dB for a 0 dBm tag).
    let audibleFloor: Float
    static let tileMetres = 3.0

    /// What the calibration's fit found per gateway (empty without a calibration route).
    let fits: [GatewayFit]

    /// `exponent` overrides the settings' `pathLossExponent`; `grid` is shared by the maps of one venue. `learned`
    /// gives walls their learned losses and gateways their learned gains; with a `calibration` that has route points,
    /// the levels are then fitted to them (the learned gain is where a gateway's fit starts).
    init(
        venue: Venue, settings: InferenceSettings, grid: FloorGrid, exponent: Double, calibration: Calibration? = nil,
        learned: LearnedRadio? = nil
    ) {
        var settings = settings
        settings.pathLossExponent = exponent
        self.exponent = exponent
        self.grid = grid
        let count = grid.count
        gatewayCount = venue.gateways.count
        sensitivity = Float(settings.sensitivity)
        sensitivities = [Float](repeating: Float(settings.sensitivity), count: venue.gateways.count)
        var level = [Float](repeating: -200, count: venue.gateways.count * count)
        // The walls the hub knows are the venue file's; their loss is the material's published middle, not any
        // `attenuation` the file gives (that is the simulator's truth; the fit learns the rest), unless the links
        // measured it.
        let walls = venue.walls.enumerated().map { index, wall in
            (segment: wall.segment, loss: learned?.wallLosses[index] ?? wall.material.defaultAttenuation)
        }
        let reachMetres = Self.reach(settings: settings)
        var shaded: [Double] = []
        // A calibration without a route or areas gives gains only (its offsets); one with either is fitted below.
        let offsetsOnly = calibration.map(\.isOffsetsOnly) ?? true
        for (g, gateway) in venue.gateways.enumerated() {
            let near = walls.filter { $0.segment.distance(to: gateway.position) <= reachMetres }
            let walked = offsetsOnly ? calibration?.gatewayOffsets[gateway.id.rawValue] : nil
            let gain = walked ?? learned?.gains[gateway.id.rawValue] ?? 0
            // With a learned gain comes the antenna's learned pattern, if the venue says which way it faces.
            let shading = walked == nil ? learned?.antennas[gateway.id.rawValue] ?? 0 : 0
            shaded.append(shading)
            for c in 0..<count {
                if let value = Self.geometric(
                    gateway, at: grid.centre(c), exponent: exponent, gain: gain, shading: shading, walls: near,
                    reach: reachMetres)
                {
                    level[g * count + c] = Float(value)
                }
            }
        }
        if let map = calibration?.map {
            // A map given outright replaces the geometry wherever it has the gateway's level (within reach: what is
            // out of reach stays unheard, as everywhere).
            let power = calibration?.referencePower ?? 0
            for (g, gateway) in venue.gateways.enumerated() {
                for c in 0..<count where level[g * count + c] > -200 {
                    if let given = map.level(gateway.id.rawValue, at: grid.centre(c)) {
                        level[g * count + c] = Float(given - power)
                    }
                }
            }
        }
        noise = ObservationModel.start(settings: settings).tables
        if let calibration, calibration.hasWalk {
            // The zones the walk never went about take the walk's level (`walkLevel`): the areas correct only their
            // own zones.
            let common = Self.walkLevel(
                level: level, grid: grid, venue: venue, calibration: calibration, bias: Double(noise.meanOffset),
                sensitivity: settings.sensitivity)
            if common != 0 {
                let walked = Set(
                    (calibration.areas ?? []).compactMap { area in venue.zones.firstIndex { $0.id == area.zone } })
                for cell in 0..<count {
                    let zone = Int(grid.zoneOfCell[cell])
                    guard zone < venue.zones.count, !walked.contains(zone) else { continue }
                    for g in 0..<venue.gateways.count where level[g * count + cell] > -200 {
                        level[g * count + cell] += Float(common)
                    }
                }
            }
            fits = Self.fit(
                level: &level, grid: grid, venue: venue, walls: walls.map(\.segment), calibration: calibration,
                bias: Double(noise.meanOffset), sensitivity: settings.sensitivity, shaded: shaded)
        } else {
            fits = []
        }
        // Everything below reads the levels as stored.
        let perDB = Float(ReadingNoise.stepsPerDB)
        let levelSteps = level.map { Int16(clamping: Int(($0 * perDB).rounded())) }
        self.levelSteps = levelSteps
        level = levelSteps.map { Float($0) / perDB }
        var start: [Int32] = [0]
        var list: [Int32] = []
        let floor = Float(settings.sensitivity) - Self.audibleMargin - Float(settings.referencePower)
        audibleFloor = floor
        for c in 0..<count {
            for g in 0..<venue.gateways.count where level[g * count + c] >= floor { list.append(Int32(g)) }
            start.append(Int32(list.count))
        }
        audibleStart = start
        audible = list
        var cells: [Int32] = []
        for c in 0..<count where grid.zoneOfCell[c] != Int32(grid.zoneCount) { cells.append(Int32(c)) }
        startCells = cells
        var isStart = [Bool](repeating: false, count: count)
        for cell in cells { isStart[Int(cell)] = true }
        self.isStart = isStart
        let tileColumns = Int((Double(grid.columns) * grid.cellSize / Self.tileMetres).rounded(.up))
        let tileRows = Int((Double(grid.rows) * grid.cellSize / Self.tileMetres).rounded(.up))
        tileOfCell = (0..<count).map { c in
            let column = Int(Double(c % grid.columns) * grid.cellSize / Self.tileMetres)
            let row = Int(Double(c / grid.columns) * grid.cellSize / Self.tileMetres)
            return Int32(row * tileColumns + column)
        }
        tileCount = tileColumns * tileRows
        correction = [Float](repeating: 0, count: venue.gateways.count * tileCount)
        var loudestCells: [[Int32]] = []
        for g in 0..<venue.gateways.count {
            let reached = (0..<count).filter { level[g * count + $0] > -200 }.sorted {
                level[g * count + $0] > level[g * count + $1]
            }
            loudestCells.append(reached.map(Int32.init))
        }
        self.loudestCells = loudestCells
    }

    /// Expected level of gateway `g` at cell `c` for a tag of 0 dBm at 1 m (dB; −200 where none is tabulated).
    @inline(__always)
    func level(_ g: Int, _ c: Int) -> Float { Float(levelSteps[g * grid.count + c]) / Float(ReadingNoise.stepsPerDB) }

    /// The level (dB for a 0 dBm tag) from which a gateway's silence counts for a tag of `power`: the audible lists'
    /// floor, or lower for a tag louder than the reference by more than `audibleMargin`.
    func silenceFloor(power: Float) -> Float { min(audibleFloor, sensitivity - Self.audibleMargin - power) }

    /// Per cell, the log-probability that every gateway that may hear a tag of `power` there (level at least
    /// `silenceFloor(power:)`) misses one advert of it (uncorrected levels): what a cell's silence costs, before the
    /// gateways that did hear are taken back out. A tag of unknown power is weighed at up to 30 dB above the reference
    /// (`ZoneEngine.candidateOffsets`): counting only the audible lists' gateways, such a loud tag far away cost almost
    /// nothing, and offsets of +25 or +30 dB outside the venue won over a tag's true −6 dB in its room (training seed
    /// 38: 74 % given the exact map; 81 % with this, 87 % told the tags' powers).
    func missedSum(power: Float) -> [Float] {
        let count = grid.count
        var sums = [Float](repeating: 0, count: count)
        let floor = silenceFloor(power: power)
        func missed(_ g: Int, _ c: Int) -> Float {
            noise.missed[ReadingNoise.index(sensitivities[g] - level(g, c) - power)]
        }
        for c in 0..<count {
            var sum: Float = 0
            if floor >= audibleFloor {
                // The audible lists are exactly the gateways at or above this floor: a few per cell, not all of them.
                for a in Int(audibleStart[c])..<Int(audibleStart[c + 1]) { sum += missed(Int(audible[a]), c) }
            } else {
                for g in 0..<gatewayCount where level(g, c) >= floor { sum += missed(g, c) }
            }
            sums[c] = sum
        }
        return sums
    }

    /// Where a tag first heard may be: start cells where gateway `g` would read at least `level` from a tag of power
    /// 0 dBm, at most `most` of them (every k-th, by level: rings round the gateway; the walk fills in between), into
    /// `picks`.
    func startCells(near g: Int, atLeast level: Float, most: Int, into picks: inout [Int32]) {
        Self.thin(cells(of: g, atLeast: level), to: most, into: &picks, where: isStart)
    }

    /// Every update's reseed: of each stretch of `cells` as long as at most `most` stretches need, the first start
    /// cell (`isStart`: a cell in a zone), into `picks`. Without copying the candidates first: a stretch of cells
    /// outside every zone is skipped, cell by cell, and gives none.
    func reseedCells(_ cells: ArraySlice<Int32>, most: Int, into picks: inout [Int32]) {
        picks.removeAll(keepingCapacity: true)
        let stride = max((cells.count + most - 1) / most, 1)
        for first in Swift.stride(from: cells.startIndex, to: cells.endIndex, by: stride) {
            for k in first..<min(first + stride, cells.endIndex) where isStart[Int(cells[k])] {
                picks.append(cells[k])
                break
            }
        }
    }

    /// Every k-th of `cells` (of those `mask` admits), so that at most `most` remain, into `picks`.
    static func thin(_ cells: ArraySlice<Int32>, to most: Int, into picks: inout [Int32], where mask: [Bool]) {
        picks.removeAll(keepingCapacity: true)
        for cell in cells where mask[Int(cell)] { picks.append(cell) }
        guard picks.count > most else { return }
        let stride = (picks.count + most - 1) / most
        var kept = 0
        for k in Swift.stride(from: 0, to: picks.count, by: stride) {
            picks[kept] = picks[k]
            kept += 1
        }
        picks.removeLast(picks.count - kept)
    }

    /// Tag powers are tabulated in steps of this many dB for `missedSum`.
    static let missedStepDB: Float = 0.5

    /// The cells where gateway `g` would read at least `level` from a tag of power 0 dBm.
    func cells(of g: Int, atLeast level: Float) -> ArraySlice<Int32> {
        // By the levels in `level` (a copy of them per gateway in loudest order was a third of the maps' memory).
        let cells = loudestCells[g]
        var low = 0
        var high = cells.count
        while low < high {
            let middle = (low + high) / 2
            if self.level(g, Int(cells[middle])) >= level { low = middle + 1 } else { high = middle }
        }
        return loudestCells[g][..<low]
    }

    /// The geometry's level of `gateway` at `point` for a tag of 0 dBm at 1 m, dB: its `gain`, the path-loss law at
    /// `exponent` over the 3-D distance (a tag 1.2 m above the floor), the antenna's `shading` behind it and the losses
    /// of the `walls` the path crosses. Nil beyond `reach` metres (on the floor).
    @inline(__always)
    static func geometric(
        _ gateway: Venue.Gateway, at point: Point, exponent: Double, gain: Double, shading: Double,
        walls: [(segment: Segment, loss: Double)], reach: Double
    ) -> Double? {
        let dx = point.x - gateway.position.x
        let dy = point.y - gateway.position.y
        guard dx * dx + dy * dy <= reach * reach else { return nil }
        let dz = gateway.height - 1.2
        let distance = max(0.5, (dx * dx + dy * dy + dz * dz).squareRoot())
        var value = gain - 10 * exponent * log10(distance)
        if shading > 0 { value -= shading * Self.behind(gateway, dx: dx, dy: dy) }
        let path = Segment(point, gateway.position)
        for wall in walls where Self.boxesMeet(path, wall.segment) && path.intersects(wall.segment) {
            value -= wall.loss
        }
        return value
    }

    /// What an uncalibrated hub's `position` maps expect of each gateway at each of `points` for a tag of 0 dBm at 1 m
    /// (`geometric` with no gains, no antennas, and the walls' materials' losses; nil beyond reach): the geometry a
    /// calibration's corrections go on top of. For the simulator's maps of what a calibration could know
    /// (`beacon-sim radio-map --shadowing engine-zone-mean`).
    package static func geometricLevels(
        venue: Venue, settings: InferenceSettings, exponent: Double, at points: [Point]
    ) -> [GatewayID: [Double?]] {
        var settings = settings
        settings.pathLossExponent = exponent
        let reach = Self.reach(settings: settings)
        let walls = venue.walls.map { (segment: $0.segment, loss: $0.material.defaultAttenuation) }
        var levels: [GatewayID: [Double?]] = [:]
        for gateway in venue.gateways {
            levels[gateway.id] = points.map {
                geometric(gateway, at: $0, exponent: exponent, gain: 0, shading: 0, walls: walls, reach: reach)
            }
        }
        return levels
    }

    /// How far from a gateway levels are worth tabulating: where a tag 10 dB above the reference fades below
    /// sensitivity in free space (walls only make it shorter).
    static func reach(settings: InferenceSettings) -> Double {
        let budget = settings.referencePower + 10 - settings.sensitivity
        return min(pow(10, budget / (10 * settings.pathLossExponent)), 200)
    }

    @inline(__always)
    static func boxesMeet(_ a: Segment, _ b: Segment) -> Bool {
        max(a.a.x, a.b.x) >= min(b.a.x, b.b.x) && min(a.a.x, a.b.x) <= max(b.a.x, b.b.x)
            && max(a.a.y, a.b.y) >= min(b.a.y, b.b.y) && min(a.a.y, a.b.y) <= max(b.a.y, b.b.y)
    }
}
