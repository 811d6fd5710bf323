import BeaconModel

#if canImport(Glibc)
    import Glibc
#endif

/// One tag's belief over the floor grid for the `position` method, kept sparse (the cells with mass, at most
/// `maxCells`), and its power offset: what its readings say it sends beyond its advertised (or assumed) power.
struct PositionBelief: Sendable {
    var cells: [Int32] = []
    var mass: [Float] = []
    /// dB added to the tag's power: for a tag that advertises none, the candidate offset its readings favour.
    var offset: Float = 0
    /// Per candidate offset (`ZoneEngine.candidateOffsets`), the evidence of the readings so far, fading with time;
    /// empty for tags that advertise their power.
    var offsetEvidence: [Double] = []

    var isEmpty: Bool { cells.isEmpty }
    /// Readings expected less than this far above sensitivity teach the map nothing.
    static let learningMarginDB: Float = 15

    /// Every cell where a tag may first be heard, alike.
    mutating func spread(over start: [Int32]) {
        // A copy of its own: sharing the caller's buffer, the first walk would keep that buffer's capacity.
        cells = exactCopy(start)
        mass = [Float](repeating: 1 / Float(max(start.count, 1)), count: start.count)
    }

    /// Gives `share` of the probability to `candidates` evenly, the rest staying as it was: a wrong belief recovers
    /// when readings favour cells it had lost.
    mutating func mix(_ candidates: ArraySlice<Int32>, share: Float, scratch: inout PositionScratch) {
        guard !candidates.isEmpty, share > 0 else { return }
        let each = share / Float(candidates.count)
        for k in mass.indices {
            mass[k] *= 1 - share
            scratch.slot[Int(cells[k])] = Int32(k)
        }
        for cell in candidates {
            let k = scratch.slot[Int(cell)]
            if k >= 0 {
                mass[Int(k)] += each
            } else {
                cells.append(cell)
                mass.append(each)
            }
        }
        for cell in cells { scratch.slot[Int(cell)] = -1 }
    }

    /// `ticks` ticks of walking: each cell keeps `stay` of its probability and spreads the rest evenly over the cells
    /// within reach (into another zone only through a door); a move that a wall blocks stays put.
    mutating func diffuse(
        ticks: Int, stay: Float, spreadFloor: Float = .leastNonzeroMagnitude, grid: FloorGrid,
        scratch: inout PositionScratch
    ) {
        let move = (1 - stay) / Float(grid.fullNeighbourCount)
        // The cells reached, in the order first reached, written through a buffer sized for the most a walk can reach
        // (appending cell by cell was a fifth of the walk).
        var reached = scratch.list
        scratch.list = []
        defer { scratch.list = reached }
        for _ in 0..<ticks {
            let most = cells.count * (grid.fullNeighbourCount + 1)
            if reached.count < most { reached = [Int32](repeating: 0, count: most + most / 2) }
            var produced = 0
            scratch.dense.withUnsafeMutableBufferPointer { dense in
                reached.withUnsafeMutableBufferPointer { reached in
                    grid.neighbourStart.withUnsafeBufferPointer { start in
                        grid.neighbours.withUnsafeBufferPointer { neighbours in
                            cells.withUnsafeBufferPointer { cells in
                                mass.withUnsafeBufferPointer { mass in
                                    for k in 0..<cells.count {
                                        let c = Int(cells[k])
                                        let m = mass[k]
                                        let moved = m * move
                                        let (first, end) = (Int(start[c]), Int(start[c + 1]))
                                        // Taken once, not neighbour by neighbour (a chain of dependent subtractions).
                                        let spreads = moved >= spreadFloor
                                        let left = spreads ? m - moved * Float(end - first) : m
                                        if spreads {
                                            for n in first..<end {
                                                let target = Int(neighbours[n])
                                                if dense[target] == 0 {
                                                    reached[produced] = neighbours[n]
                                                    produced += 1
                                                }
                                                dense[target] += moved
                                            }
                                        }
                                        if left > 0 {
                                            if dense[c] == 0 {
                                                reached[produced] = cells[k]
                                                produced += 1
                                            }
                                            dense[c] += left
                                        }
                                    }
                                }
                            }
                        }
                    }
                }
                resize(&cells, to: produced, filler: 0)
                resize(&mass, to: produced, filler: 0)
                reached.withUnsafeBufferPointer { reached in
                    cells.withUnsafeMutableBufferPointer { cells in
                        mass.withUnsafeMutableBufferPointer { mass in
                            for k in 0..<produced {
                                let cell = reached[k]
                                cells[k] = cell
                                mass[k] = dense[Int(cell)]
                                dense[Int(cell)] = 0
                            }
                        }
                    }
                }
            }
        }
    }

    /// Weighs the belief by the readings of one update: each reading's likelihood at each cell, and for every gateway
    /// that should hear the tag there, the adverts it missed (`expected` adverts each, minus those it heard).
    /// Returns the log of the readings' (tempered) likelihood under the belief — the evidence for the map — or nil when
    /// no cell explains the readings (the caller starts the belief again).
    mutating func observe(
        readings: [PendingReading], expected: Float, power: Float, weight: Float, map: PositionMap,
        scratch: inout PositionScratch
    ) -> Double? {
        let best = logLikelihoods(
            readings: readings, expected: expected, power: power + offset, map: map, scratch: &scratch)
        var total: Float = 0
        for k in mass.indices {
            mass[k] *= exp(weight * (scratch.likelihood[k] - best))
            total += mass[k]
        }
        guard total > 0, total.isFinite else { return nil }
        for k in mass.indices { mass[k] /= total }
        return Double(log(total)) + Double(weight * best)
    }

    /// The evidence the readings give a tag power of `power` (offset included) under the belief as it stands, without
    /// changing it.
    func evidence(
        readings: [PendingReading], expected: Float, power: Float, weight: Float, map: PositionMap,
        scratch: inout PositionScratch
    ) -> Double {
        let best = logLikelihoods(readings: readings, expected: expected, power: power, map: map, scratch: &scratch)
        var total: Float = 0
        for k in mass.indices { total += mass[k] * exp(weight * (scratch.likelihood[k] - best)) }
        return Double(log(max(total, .leastNormalMagnitude))) + Double(weight * best)
    }

    /// Each cell's log-likelihood of the readings into `scratch.likelihood`, for a tag of `tagPower`; returns the
    /// largest.
    func logLikelihoods(
        readings: [PendingReading], expected: Float, power tagPower: Float, map: PositionMap,
        scratch: inout PositionScratch
    ) -> Float {
        let count = map.grid.count
        let noise = map.noise
        // How many adverts each gateway heard this update (reset below).
        scratch.heardGateways.removeAll(keepingCapacity: true)
        for reading in readings {
            let g = Int(reading.gateway)
            if scratch.heardCount[g] == 0 { scratch.heardGateways.append(reading.gateway) }
            scratch.heardCount[g] += 1
        }
        // Without learned corrections, the silence of every audible gateway comes from a table (the power to a
        // table's step), and the gateways that did hear are taken back out (each missed `expected` adverts less what
        // it heard, never fewer than none); with them, every audible gateway's silence is weighed cell by cell.
        let corrected = map.corrected
        let step = Int((tagPower / PositionMap.missedStepDB).rounded())
        let tablePower = Float(step) * PositionMap.missedStepDB
        var table: [Float] = []
        if !corrected {
            let key = PositionScratch.MissedKey(exponent: map.exponent, noise: map.noiseID, step: step)
            if let made = scratch.missedSums[key] {
                table = made
            } else {
                if scratch.missedSums.count >= PositionScratch.missedSumLimit { scratch.missedSums.removeAll() }
                table = map.missedSum(power: tablePower)
                scratch.missedSums[key] = table
            }
        }
        var likelihood = scratch.likelihood
        scratch.likelihood = []
        likelihood.removeAll(keepingCapacity: true)
        if corrected {
            correctedLikelihoods(
                readings: readings, expected: expected, power: tagPower, map: map, heardCount: scratch.heardCount,
                into: &likelihood)
        } else {
            // Gateway by gateway over the cells (each gateway's row of levels read once per cell, in cell order), in
            // the noise tables' integer steps: the missed adverts' table, less each gateway that heard its own share,
            // plus its readings.
            scratch.groupStart.removeAll(keepingCapacity: true)
            scratch.groupSteps.removeAll(keepingCapacity: true)
            for gateway in scratch.heardGateways {
                scratch.groupStart.append(Int32(scratch.groupSteps.count))
                for reading in readings where reading.gateway == gateway {
                    scratch.groupSteps.append(ReadingNoise.steps(Float(reading.rssi) - tagPower))
                }
            }
            scratch.groupStart.append(Int32(scratch.groupSteps.count))
            for cell in cells { likelihood.append(expected * table[Int(cell)]) }
            let floor = Int32((map.silenceFloor(power: tablePower) * Float(ReadingNoise.stepsPerDB)).rounded(.up))
            likelihood.withUnsafeMutableBufferPointer { likelihood in
                cells.withUnsafeBufferPointer { cells in
                    map.levelSteps.withUnsafeBufferPointer { levels in
                        noise.heard.withUnsafeBufferPointer { heard in
                            noise.missed.withUnsafeBufferPointer { missed in
                                scratch.groupSteps.withUnsafeBufferPointer { steps in
                                    for (group, gateway) in scratch.heardGateways.enumerated() {
                                        let g = Int(gateway)
                                        let row = levels.baseAddress! + g * count
                                        let misses = min(scratch.heardCount[g], expected)
                                        let shift = ReadingNoise.steps(map.sensitivities[g] - tablePower)
                                        let first = Int(scratch.groupStart[group])
                                        let end = Int(scratch.groupStart[group + 1])
                                        for k in 0..<cells.count {
                                            let base = Int32(row[Int(cells[k])])
                                            var value: Float = 0
                                            if base >= floor {
                                                value -= misses * missed[ReadingNoise.index(steps: shift - base)]
                                            }
                                            for r in first..<end {
                                                value += heard[ReadingNoise.index(steps: steps[r] - base)]
                                            }
                                            likelihood[k] += value
                                        }
                                    }
                                }
                            }
                        }
                    }
                }
            }
        }
        var best = -Float.infinity
        for value in likelihood { best = max(best, value) }
        scratch.likelihood = likelihood
        for reading in readings { scratch.heardCount[Int(reading.gateway)] = 0 }
        return best
    }

    /// `logLikelihoods` on a map with learned corrections: every audible gateway's silence weighed cell by cell (the
    /// audible lists': gateways that only a tag more than 10 dB above the reference would reach are left out).
    private func correctedLikelihoods(
        readings: [PendingReading], expected: Float, power tagPower: Float, map: PositionMap, heardCount: [Float],
        into likelihood: inout [Float]
    ) {
        let tiles = map.tileCount
        map.noise.heard.withUnsafeBufferPointer { heard in
            map.noise.missed.withUnsafeBufferPointer { missed in
                for cell in cells {
                    let c = Int(cell)
                    let tile = Int(map.tileOfCell[c])
                    var value: Float = 0
                    for a in Int(map.audibleStart[c])..<Int(map.audibleStart[c + 1]) {
                        let g = Int(map.audible[a])
                        let misses = expected - heardCount[g]
                        guard misses > 0 else { continue }
                        let mean = map.level(g, c) + map.correction[g * tiles + tile] + tagPower
                        value += misses * missed[ReadingNoise.index(map.sensitivities[g] - mean)]
                    }
                    for reading in readings {
                        let g = Int(reading.gateway)
                        let mean = map.level(g, c) + map.correction[g * tiles + tile] + tagPower
                        value += heard[ReadingNoise.index(Float(reading.rssi) - mean)]
                    }
                    likelihood.append(value)
                }
            }
        }
    }

    /// The value that would stand at `rank` (from 0) were `values` sorted largest first; reorders `values`
    /// (Hoare's selection, linear on average: sorting them was a fifth of the engine's time).
    static func select(_ rank: Int, inDescending values: inout [Float]) -> Float {
        var low = 0
        var high = values.count - 1
        while low < high {
            let pivot = values[(low + high) / 2]
            var i = low
            var j = high
            while i <= j {
                while values[i] > pivot { i += 1 }
                while values[j] < pivot { j -= 1 }
                if i <= j {
                    values.swapAt(i, j)
                    i += 1
                    j -= 1
                }
            }
            if rank <= j {
                high = j
            } else if rank >= i {
                low = i
            } else {
                return values[rank]
            }
        }
        return values[rank]
    }

    /// Drops cells below `floor` and keeps at most `limit` (the likeliest), renormalising.
    mutating func prune(floor: Float, limit: Int, scratch: inout PositionScratch) {
        // Those below the floor first (most of the walk's fringe), then the `limit`-th largest of the rest, if need be.
        var kept = 0
        var total: Float = 0
        for k in mass.indices where mass[k] >= floor {
            cells[kept] = cells[k]
            mass[kept] = mass[k]
            total += mass[k]
            kept += 1
        }
        if kept > limit {
            scratch.sorted.removeAll(keepingCapacity: true)
            scratch.sorted.append(contentsOf: mass[..<kept])
            let threshold = Self.select(limit - 1, inDescending: &scratch.sorted)
            let above = kept
            kept = 0
            total = 0
            for k in 0..<above where mass[k] >= threshold && kept < limit {
                cells[kept] = cells[k]
                mass[kept] = mass[k]
                total += mass[k]
                kept += 1
            }
        }
        cells.removeLast(cells.count - kept)
        mass.removeLast(mass.count - kept)
        if total > 0 { for k in mass.indices { mass[k] /= total } }
        // The walk and the reseed grow the arrays past `limit` each update, and they keep that capacity: 10,000
        // tags held 22 KB each where their cells need 3.2 KB. Kept tight, at the cost of two allocations an update.
        if cells.capacity > kept + kept / 8 + 16 {
            cells = exactCopy(cells)
            mass = exactCopy(mass)
        }
    }

    /// What the readings say the map misses, for a belief held with confidence: per reading, the mean residual over
    /// the belief against the uncorrected level (less the noise's own mean), and the tile of the likeliest cell.
    func residuals(
        readings: [PendingReading], power: Float, bias: Float, map: PositionMap, into body: (Int, Int, Float) -> Void
    ) {
        guard let top = mass.indices.max(by: { mass[$0] < mass[$1] }) else { return }
        let tile = Int(map.tileOfCell[Int(cells[top])])
        for reading in readings {
            let g = Int(reading.gateway)
            // Weak links are heard only when they fade up: their readings overstate the level.
            let expected = map.level(g, Int(cells[top])) + power + offset
            guard expected >= map.sensitivity + Self.learningMarginDB else { continue }
            var residual: Float = 0
            for (k, cell) in cells.enumerated() {
                residual += mass[k] * (Float(reading.rssi) - map.level(g, Int(cell)) - power - offset)
            }
            body(g, tile, min(max(residual - bias, -20), 20))
        }
    }

    /// Probability per zone (last: no zone), into `masses`; and the belief's mean position and spread.
    /// The mean position of the belief's mass inside zone `zone` (every cell for nil), in the venue's metres, and the
    /// radius that holds its spread (√ of the summed variances, at least half a cell); nil when it holds none there.
    func estimate(in zone: Int?, grid: FloorGrid) -> (x: Double, y: Double, radius: Double)? {
        var total = 0.0
        var sx = 0.0
        var sy = 0.0
        var sxx = 0.0
        var syy = 0.0
        for (k, cell) in cells.enumerated() where zone.map({ Int(grid.zoneOfCell[Int(cell)]) == $0 }) ?? true {
            let m = Double(mass[k])
            let centre = grid.centre(Int(cell))
            total += m
            sx += m * centre.x
            sy += m * centre.y
            sxx += m * centre.x * centre.x
            syy += m * centre.y * centre.y
        }
        guard total > 0 else { return nil }
        let (x, y) = (sx / total, sy / total)
        let variance = max(sxx / total - x * x + syy / total - y * y, 0)
        return (x, y, max(variance.squareRoot(), grid.cellSize / 2))
    }

    /// The belief's mass per zone into `masses` (the last entry: no zone); a cell across a zone's edge by area.
    func summarise(grid: FloorGrid, masses: inout [Double]) {
        for index in masses.indices { masses[index] = 0 }
        for (k, cell) in cells.enumerated() {
            let m = mass[k]
            let split = Int(grid.splitOfCell[Int(cell)])
            if split < 0 {
                masses[Int(grid.zoneOfCell[Int(cell)])] += Double(m)
            } else {
                for k in Int(grid.shareStart[split])..<Int(grid.shareStart[split + 1]) {
                    masses[Int(grid.shareZones[k])] += Double(m * grid.shares[k])
                }
            }
        }
    }
}

/// `values` with `count` elements: cut, or grown with `filler`.
private func resize<Element>(_ values: inout [Element], to count: Int, filler: Element) {
    if values.count > count {
        values.removeLast(values.count - count)
    } else if values.count < count {
        values.append(contentsOf: repeatElement(filler, count: count - values.count))
    }
}

/// `values` in a buffer of their own, no larger than they need (`Array(values[...])` may keep the old buffer).
private func exactCopy<Element>(_ values: [Element]) -> [Element] {
    [Element](unsafeUninitializedCapacity: values.count) { buffer, count in
        _ = buffer.initialize(from: values)
        count = values.count
    }
}
