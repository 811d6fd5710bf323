import BeaconModel
import ZoneInference

#if canImport(Glibc)
    import Glibc
#endif

/// What every tag's filter shares: the grid, each gateway's mean level at each cell, and the noise tables.
struct PositionOracleMap: Sendable {
    let grid: FloorGrid
    /// Mean level of gateway `g` at cell `c`, without the tag's power: `means[g * grid.count + c]`, dBm.
    let means: [Float]
    let gatewayCount: Int
    let sensitivity: Float
    let walkingNoise: ReadingNoise
    let stillNoise: ReadingNoise
    /// Per gateway, the cells from the loudest mean level down (`means` without the tag's power): where a reading
    /// puts the tag, for the reseed.
    let cellsByLevel: [[Int32]]

    init(
        grid: FloorGrid, means: [Float], gatewayCount: Int, sensitivity: Float, walkingNoise: ReadingNoise,
        stillNoise: ReadingNoise
    ) {
        self.grid = grid
        self.means = means
        self.gatewayCount = gatewayCount
        self.sensitivity = sensitivity
        self.walkingNoise = walkingNoise
        self.stillNoise = stillNoise
        let count = grid.count
        cellsByLevel = (0..<gatewayCount).map { g in
            (0..<Int32(count)).sorted { means[g * count + Int($0)] > means[g * count + Int($1)] }
        }
    }
}

/// One tag's belief over the grid's cells (kept sparse: only cells with mass are visited) and the hub's decision
/// state for it (state, candidate zone and since when).
struct PositionOracleTrack: Sendable {
    let tag: TagID
    /// The tag's power the map's means lack, dBm (its true P0 for the exact map, 0 for the nominal model).
    let power: Float
    let walking: Bool
    let absence: Double
    var probability: [Float]
    var scratch: [Float]
    var active: [Int32]
    var nextActive: [Int32]
    /// Per cell: the log-probability that no gateway hears an advertisement, for this tag's power.
    var allMissed: [Float] = []
    /// Scratch: each active cell's log-likelihood of the advertisement being weighed.
    var logLikelihood: [Float] = []
    /// Scratch: the cells a reseed would go to and their log-likelihoods; and since when they have explained the
    /// readings better.
    var picks: [Int32] = []
    var pickLikelihood: [Float] = []
    var surprisedSince: Double?
    /// The first scan time the next check may be made at (`PositionOracle.reseedCheckSeconds`).
    var nextCheck = -Double.infinity
    var state: Int
    var candidate = -1
    var candidateSince = 0.0
    var lastHeard = -Double.infinity
    /// The tick the belief has been predicted to, and the tick that will decide on the readings since.
    var predictedTick: Double?
    var pendingTick: Double?
    /// The advertisement being collected: its time without the clock offsets, the scan time it is weighed at, and
    /// what each gateway heard.
    var groupTime = -Double.infinity
    var groupStamp = -Double.infinity
    var group: [(gateway: Int, rssi: Int)] = []

    /// Cells below this probability are dropped (the exact model never needs them back).
    static let pruneBelow: Float = 1e-9

    init(tag: SimulatedTag, power: Double, absence: Double, map: PositionOracleMap) {
        self.tag = tag.id
        self.power = Float(power)
        walking = tag.carrier != .still
        self.absence = absence
        let count = map.grid.count
        // Tags start somewhere in the venue (the simulator puts them in a zone); outside is reached by its doors.
        let inside = (0..<Int32(count)).filter { map.grid.zoneOfCell[Int($0)] != Int32(map.grid.zoneCount) }
        probability = [Float](repeating: 0, count: count)
        for cell in inside { probability[Int(cell)] = 1 / Float(inside.count) }
        scratch = [Float](repeating: 0, count: count)
        active = inside
        nextActive = []
        state = map.grid.zoneCount
    }

    /// One tick of walking: each cell keeps `stay` of its mass and spreads the rest evenly over the cells within
    /// reach (into another zone only through a door between the two); a move a wall blocks stays put, so mass never
    /// leaks through walls and the walk is symmetric.
    mutating func diffuse(stay: Float, map: PositionOracleMap) {
        let move = (1 - stay) / Float(map.grid.fullNeighbourCount)
        nextActive.removeAll(keepingCapacity: true)
        probability.withUnsafeMutableBufferPointer { p in
            scratch.withUnsafeMutableBufferPointer { s in
                map.grid.neighbourStart.withUnsafeBufferPointer { start in
                    map.grid.neighbours.withUnsafeBufferPointer { neighbours in
                        // A cell joins the next active list when it first receives mass: a zero (an underflowed
                        // mass) would leave it at 0 and let it join again and again, doubling the list each tick.
                        for cell in active {
                            let c = Int(cell)
                            let mass = p[c]
                            p[c] = 0
                            guard mass > 0 else { continue }
                            var left = mass
                            for n in Int(start[c])..<Int(start[c + 1]) {
                                let target = Int(neighbours[n])
                                let moved = mass * move
                                guard moved > 0 else { continue }
                                if s[target] == 0 { nextActive.append(neighbours[n]) }
                                s[target] += moved
                                left -= moved
                            }
                            if left > 0 {
                                if s[c] == 0 { nextActive.append(cell) }
                                s[c] += left
                            }
                        }
                    }
                }
            }
        }
        swap(&probability, &scratch)
        swap(&active, &nextActive)
    }

    /// Weighs the belief by one advertisement: the readings of the gateways that heard it, and the silence of the
    /// others; first, when the belief has stopped explaining the readings, reseeds it near the loudest gateway
    /// (`PositionOracle.reseedShare`): without that, a belief that had lost the tag (pruned, or walked too short across
    /// a long silence, or outrun by a carrier walking straight on) never found it again.
    mutating func observe(map: PositionOracleMap) {
        let count = map.grid.count
        let noise = walking ? map.walkingNoise : map.stillNoise
        let power = self.power
        let sensitivity = map.sensitivity
        if allMissed.isEmpty {
            allMissed = [Float](repeating: 0, count: count)
            for g in 0..<map.gatewayCount {
                for c in 0..<count {
                    allMissed[c] +=
                        noise.missed[
                            Self.tableIndex(sensitivity - map.means[g * count + c] - power)]
                }
            }
        }
        // Where the loudest reading says the tag may be: cells whose mean level there is at most `reseedMarginDB`
        // below it (every k-th, at most `reseedCells`), a prefix of that gateway's cells by level.
        picks.removeAll(keepingCapacity: true)
        if groupStamp >= nextCheck, let loudest = group.max(by: { $0.rssi < $1.rssi }) {
            nextCheck = groupStamp + PositionOracle.reseedCheckSeconds
            let floor = Float(loudest.rssi) - power - PositionOracle.reseedMarginDB
            let cells = map.cellsByLevel[loudest.gateway]
            let base = loudest.gateway * count
            var (low, high) = (0, cells.count)
            while low < high {
                let middle = (low + high) / 2
                if map.means[base + Int(cells[middle])] >= floor { low = middle + 1 } else { high = middle }
            }
            let stride = max((low + PositionOracle.reseedCells - 1) / PositionOracle.reseedCells, 1)
            for k in Swift.stride(from: 0, to: low, by: stride) { picks.append(cells[k]) }
        }
        // Reused from one advertisement to the next: this runs for every advertisement of every tag.
        logLikelihood.removeAll(keepingCapacity: true)
        logLikelihood.append(contentsOf: repeatElement(0, count: active.count))
        var best = -Float.infinity
        var bestPick = -Float.infinity
        pickLikelihood.removeAll(keepingCapacity: true)
        map.means.withUnsafeBufferPointer { means in
            noise.heard.withUnsafeBufferPointer { heard in
                noise.missed.withUnsafeBufferPointer { missed in
                    allMissed.withUnsafeBufferPointer { allMissed in
                        func value(_ c: Int) -> Float {
                            var value = allMissed[c]
                            for reading in group {
                                let mean = means[reading.gateway * count + c] + power
                                value += heard[Self.tableIndex(Float(reading.rssi) - mean)]
                                value -= missed[Self.tableIndex(sensitivity - mean)]
                            }
                            return value
                        }
                        for (k, cell) in active.enumerated() {
                            let value = value(Int(cell))
                            logLikelihood[k] = value
                            best = max(best, value)
                        }
                        for cell in picks {
                            let value = value(Int(cell))
                            pickLikelihood.append(value)
                            bestPick = max(bestPick, value)
                        }
                    }
                }
            }
        }
        if !picks.isEmpty {
            // Lost for good only when the lead lasts: slow fading and body loss also favour other cells, for seconds.
            if bestPick - best > PositionOracle.reseedLeadNats {
                surprisedSince = surprisedSince ?? groupStamp
            } else {
                surprisedSince = nil
            }
            if let since = surprisedSince, groupStamp - since >= PositionOracle.reseedAfterSeconds {
                let share = PositionOracle.reseedShare
                let each = share / Float(picks.count)
                for cell in active { probability[Int(cell)] *= 1 - share }
                for (k, cell) in picks.enumerated() {
                    let c = Int(cell)
                    if probability[c] == 0 {
                        active.append(cell)
                        logLikelihood.append(pickLikelihood[k])
                    }
                    probability[c] += each
                }
                best = max(best, bestPick)
            }
        }
        var total: Float = 0
        probability.withUnsafeMutableBufferPointer { p in
            for (k, cell) in active.enumerated() {
                let c = Int(cell)
                p[c] *= exp(logLikelihood[k] - best)
                total += p[c]
            }
            guard total > 0 else {
                // Every cell's weight underflowed (readings no cell explains): start again from an even belief over
                // the cells in play rather than carry a belief of nothing.
                for cell in active { p[Int(cell)] = 1 / Float(max(active.count, 1)) }
                return
            }
            nextActive.removeAll(keepingCapacity: true)
            for cell in active {
                let c = Int(cell)
                p[c] /= total
                if p[c] < Self.pruneBelow {
                    p[c] = 0
                } else {
                    nextActive.append(cell)
                }
            }
        }
        if total > 0 { swap(&active, &nextActive) }
    }

    /// Probability mass per zone (the last entry: no zone).
    func zoneMasses(map: PositionOracleMap) -> [Double] {
        var masses = [Double](repeating: 0, count: map.grid.zoneCount + 1)
        for cell in active {
            masses[Int(map.grid.zoneOfCell[Int(cell)])] += Double(probability[Int(cell)])
        }
        return masses
    }
}

extension PositionOracleTrack {
    /// `ReadingNoise.index`, the same expression written here: across the module boundary it stays a call, which took
    /// a sixth of a run's time (a test keeps the two equal).
    @inline(__always)
    static func tableIndex(_ offset: Float) -> Int {
        let position = (offset - Float(ReadingNoise.lower)) / Float(ReadingNoise.step)
        return Int(min(max(position, 0), Float((ReadingNoise.upper - ReadingNoise.lower) / ReadingNoise.step)) + 0.5)
    }
}
