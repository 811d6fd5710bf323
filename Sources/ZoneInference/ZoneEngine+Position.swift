import BeaconModel

#if canImport(Glibc)
    import Glibc
#endif

extension ZoneEngine {
    /// Longest walk simulated across a silence, in ticks: beyond it the belief is spread anyway.
    static let maxDiffusionTicks = 40
    /// Cells below this probability are dropped.
    static let positionFloor: Float = 1e-6
    /// A cell whose share for each neighbour would be below this keeps its probability where it is: spread, it made
    /// a fringe of cells that the pruning dropped again, and the walk was 40 % of the engine's time. On the training
    /// venues 3 × 10⁻⁶ moved accuracy by −0.05 points on average (−1.1 to +0.1 per venue), 10⁻⁵ by −0.1 and
    /// 3 × 10⁻⁵ by −0.35; `beacon-bench engine` ran 1.2, 1.4 and 1.4 times as fast. 10⁻⁵ also kept a reseed's cells
    /// (2 × 10⁻⁴ each) from walking, and a tag that jumped 20 m was followed 1.5 s later
    /// (`PositionEngineTests.walksThroughAdjacentRooms`).
    static let spreadFloor: Float = 3e-6
    /// Share of each update's probability reseeded near the loudest gateway, and how far below its reading a cell's
    /// expected level may be to get some.
    static let reseedShare: Float = 0.02
    static let reseedMarginDB: Float = 10
    /// A tag first heard is put where its loudest gateway would read it at most this much below its reading (dB).
    static let startMarginDB = 20.0
    /// The path-loss exponents the engine weighs against each other (indoor BLE: 1.6 in corridors to 3.5 through
    /// furniture and people).
    public static let candidateExponents = [1.8, 2.2, 2.6, 3.0, 3.4]
    /// How much more evidence (nats, summed over the probe tags' updates) another exponent needs before the engine
    /// switches to it, and how fast old evidence fades (seconds).
    static let switchMargin = 20.0
    static let evidenceMemorySeconds = 1800.0

    /// The maps of every candidate exponent over one grid, and the one to start from: nearest `pathLossExponent`.
    /// With a calibration route or areas, every map is fitted to them; with a route, the one to start from is the one
    /// that fitted best (least residual after each gateway's gain).
    /// `learned` (the gateways' links) goes into every map, and its exponent, if any, is the one to start from. A
    /// calibration whose radio map lists every gateway gives one map.
    /// `venue` is the venue file: the grid is drawn on it, and the maps put its gateways where the calibration's
    /// placements say (the grid, and so every tag's belief, stays when a gateway is placed elsewhere).
    static func positionMaps(
        venue file: Venue, settings: InferenceSettings, calibration: Calibration? = nil, learned: LearnedRadio? = nil
    ) -> (maps: [PositionMap], choice: Int) {
        let grid = FloorGrid(
            venue: file, reach: settings.maxWalkingSpeed * settings.tickSeconds, cellSide: settings.cellMetres)
        let venue = file.placed(by: calibration?.placements)
        // A map given for every gateway leaves the exponent nothing to change: one map.
        let mapped = calibration?.map.map { map in venue.gateways.allSatisfy { map.levels[$0.id.rawValue] != nil } }
        let exponents =
            settings.learnsExponent && mapped != true ? candidateExponents : [settings.pathLossExponent]
        let maps = exponents.map {
            PositionMap(
                venue: venue, settings: settings, grid: grid, exponent: $0, calibration: calibration, learned: learned)
        }
        var choice = 0
        let start = learned?.pathLossExponent ?? settings.pathLossExponent
        for (k, exponent) in exponents.enumerated() where abs(exponent - start) < abs(exponents[choice] - start) {
            choice = k
        }
        // Zones walked about (areas) fit no gain and do not choose it (`PositionMap.areaWeight`): without a route the
        // probe tags' evidence chooses it, as it does uncalibrated.
        if maps[0].fits.contains(where: { $0.points > 0 }) {
            let misfit = maps.map { map in map.fits.reduce(0) { $0 + Double($1.points) * $1.gainRMS * $1.gainRMS } }
            for k in maps.indices where misfit[k] < misfit[choice] { choice = k }
        }
        return (maps, choice)
    }

    /// The `position` update of one tag: walk its belief for the time since its last update, weigh it by the readings
    /// since, learn its power offset; the leading state, its probability, the reported state's probability and that of
    /// the zones with an entrance together (`ZoneEngine.entranceShare`). A probe tag also runs a belief per candidate
    /// exponent, whose evidence chooses the map every tag uses.
    mutating func updatePosition(
        _ index: Int, dt: Double
    ) -> (leader: Int, probability: Double, reported: Double, entrance: Double)? {
        guard !position.maps.isEmpty else { return nil }
        var track = tracks[index]
        tracks[index].pending = []
        tracks[index].belief = PositionBelief()
        tracks[index].probes = []
        let readings = track.pending
        track.pending.removeAll(keepingCapacity: true)
        defer { tracks[index] = track }
        guard !readings.isEmpty else { return nil }
        if track.probes.isEmpty && track.txPower != nil && position.probeTracks < settings.probeTags
            && position.maps.count > 1
        {
            position.probeTracks += 1
            // Each map's belief starts from the tag's (empty for a tag first heard; its zone's cells for a restored one).
            track.probes = [PositionBelief](repeating: track.belief, count: position.maps.count)
        }
        if !track.probesNoise && !position.noiseModels.isEmpty
            && position.noiseProbeTracks < min(settings.probeTags, Self.noiseProbeTags)
        {
            position.noiseProbeTracks += 1
            track.probesNoise = true
        }
        if track.probesNoise { track.noiseUpdates &+= 1 }
        let probesNoise =
            track.probesNoise && !position.noiseModels.isEmpty && track.noiseUpdates % Self.noiseProbeEvery == 1
        if !track.probes.isEmpty {
            let decay = exp(-dt / Self.evidenceMemorySeconds)
            for k in track.probes.indices {
                let evidence = advance(
                    &track.probes[k], track: track, readings: readings, dt: dt, map: position.maps[k],
                    probesNoise: probesNoise && k == position.choice)
                position.evidence[k] = position.evidence[k] * decay + evidence
            }
            var best = position.choice
            for k in position.evidence.indices where position.evidence[k] > position.evidence[best] { best = k }
            if position.evidence[best] - position.evidence[position.choice] > Self.switchMargin {
                // What was learned is relative to the old map's levels: start again.
                position.maps[position.choice].correction = position.maps[best].correction
                position.maps[position.choice].corrected = position.maps[best].corrected
                position.choice = best
                for k in position.mapSums.indices {
                    position.mapSums[k] = 0
                    position.mapWeights[k] = 0
                }
            }
            track.belief = track.probes[position.choice]
        } else {
            _ = advance(
                &track.belief, track: track, readings: readings, dt: dt, map: position.maps[position.choice],
                probesNoise: probesNoise)
        }
        if probesNoise { chooseNoise() }
        if !position.floorCounts.isEmpty && track.lastHeard - position.floorsAt >= Self.sensitivityRefreshSeconds {
            position.floorsAt = track.lastHeard
            learnSensitivities()
        }
        track.belief.summarise(grid: position.maps[position.choice].grid, masses: &position.scratch.masses)
        let masses = position.scratch.masses
        var best = 0
        for state in masses.indices where masses[state] > masses[best] { best = state }
        if settings.learnsMap && masses[best] >= Self.learningConfidence,
            let estimate = track.belief.estimate(in: nil, grid: position.maps[position.choice].grid),
            estimate.radius <= Self.learningRadius
        {
            learn(from: track, readings: readings)
        }
        var entrance = 0.0
        for zone in model.neighbours[model.noZone] { entrance += masses[zone] }
        return (best, masses[best], masses[track.state], entrance)
    }

    /// Only beliefs this tight (metres) and this sure of their zone teach the map.
    static let learningRadius = 2.0
    static let learningConfidence = 0.9
    /// How many readings' worth of prior hold a gateway's correction at 0, and a tile's at the gateway's.
    static let gatewayPrior: Float = 50
    static let tilePrior: Float = 100
    /// The map's corrections are recomputed this often (seconds of sighting time); old readings fade over an hour.
    static let mapRefreshSeconds = 10.0
    static let mapMemorySeconds = 3600.0

    /// Adds a confident tag's residuals to the map's sums, and refreshes the corrections when due.
    private mutating func learn(from track: TagTrack, readings: [PendingReading]) {
        let map = position.maps[position.choice]
        let tiles = map.tileCount
        track.belief.residuals(
            readings: readings, power: Float(track.txPower ?? model.referencePower), bias: position.noiseBias, map: map
        ) { gateway, tile, residual in
            position.mapSums[gateway * tiles + tile] += residual
            position.mapWeights[gateway * tiles + tile] += 1
        }
        guard lastTick >= position.mapRefreshedAt + Self.mapRefreshSeconds else { return }
        let decay = Float(exp(-(lastTick - position.mapRefreshedAt) / Self.mapMemorySeconds))
        position.mapRefreshedAt = lastTick
        var correction = position.maps[position.choice].correction
        for g in 0..<map.gatewayCount {
            var sum: Float = 0
            var weight: Float = 0
            for t in 0..<tiles {
                sum += position.mapSums[g * tiles + t]
                weight += position.mapWeights[g * tiles + t]
            }
            let gateway = sum / (weight + Self.gatewayPrior)
            for t in 0..<tiles {
                let k = g * tiles + t
                correction[k] =
                    gateway + (position.mapSums[k] - position.mapWeights[k] * gateway)
                    / (position.mapWeights[k] + Self.tilePrior)
                position.mapSums[k] *= decay
                position.mapWeights[k] *= decay
            }
        }
        position.maps[position.choice].correction = correction
        position.maps[position.choice].corrected = correction.contains { $0 != 0 }
    }

    /// Power offsets weighed for a tag that advertises no power, dB from `referencePower` (tags of unknown power
    /// read anywhere from 10 dB below it to 30 above: the recorded flat's reads 17 above).
    static let candidateOffsets: [Float] = [-10, -5, 0, 5, 10, 15, 20, 25, 30]

    /// Weighs every candidate offset by the evidence of the readings under the belief as predicted, and sets the
    /// belief's offset to the favoured one (interpolated between neighbours).
    private mutating func chooseOffset(
        _ belief: inout PositionBelief, readings: [PendingReading], expected: Float, power: Float, dt: Double,
        map: PositionMap
    ) {
        let offsets = Self.candidateOffsets
        if belief.offsetEvidence.count != offsets.count {
            belief.offsetEvidence = [Double](repeating: 0, count: offsets.count)
        }
        let decay = exp(-dt / settings.offsetSeconds)
        for k in offsets.indices {
            let value = belief.evidence(
                readings: readings, expected: expected, power: power + offsets[k],
                weight: Float(settings.readingWeight), map: map, scratch: &position.scratch)
            belief.offsetEvidence[k] = belief.offsetEvidence[k] * decay + value
        }
        let scores = belief.offsetEvidence
        var best = 0
        for k in scores.indices where scores[k] > scores[best] { best = k }
        var offset = offsets[best]
        if best > 0 && best < offsets.count - 1 {
            // The vertex of the parabola through the best score and its neighbours.
            let (left, middle, right) = (scores[best - 1], scores[best], scores[best + 1])
            let curvature = left - 2 * middle + right
            if curvature < 0 {
                let shift = 0.5 * (left - right) / curvature
                offset += Float(min(max(shift, -0.5), 0.5)) * (offsets[best + 1] - offsets[best])
            }
        }
        belief.offset = offset
    }

    /// How much more evidence (nats) another observation model needs before the engine takes it, and how fast old
    /// evidence fades (seconds of sighting time).
    static let noiseSwitchMargin = 10.0
    static let noiseMemorySeconds = 1800.0
    /// How many tags weigh the observation models (at most `probeTags`), every how many of their updates, and to what
    /// step their power is rounded for it (dB): weighing every model at every update of 16 tags made replays of
    /// tags of unknown power several times slower.
    static let noiseProbeTags = 8
    static let noiseProbeEvery = 4
    static let noisePowerStepDB: Float = 2

    /// Adds to each observation model's evidence what it says of `readings` under `belief` as predicted, before the
    /// readings are weighed: the log-probability of the readings and of the silences, untempered (a proper score of
    /// the prediction, whichever model made the belief).
    private mutating func weighNoise(
        belief: PositionBelief, readings: [PendingReading], expected: Float, power: Float, at t: Double,
        map: PositionMap
    ) {
        let decay = t > position.noiseEvidenceAt ? exp(-(t - position.noiseEvidenceAt) / Self.noiseMemorySeconds) : 1
        position.noiseEvidenceAt = max(position.noiseEvidenceAt, t)
        var candidate = map
        var values = [Double](repeating: 0, count: position.noises.count)
        for k in position.noises.indices {
            candidate.noise = position.noises[k]
            candidate.noiseID = k
            values[k] = belief.evidence(
                readings: readings, expected: expected, power: power, weight: 1, map: candidate,
                scratch: &position.scratch)
        }
        // A belief that explains nothing (every model at its floor) says nothing about the noise.
        guard let best = values.max(), best.isFinite, best > -1e30 else { return }
        for k in values.indices {
            position.noiseEvidence[k] = position.noiseEvidence[k] * decay + values[k]
        }
    }

    /// Takes the observation model whose evidence leads the one in use by `noiseSwitchMargin`, for every map.
    private mutating func chooseNoise() {
        var best = position.noiseChoice
        for k in position.noiseEvidence.indices where position.noiseEvidence[k] > position.noiseEvidence[best] {
            best = k
        }
        guard best != position.noiseChoice,
            position.noiseEvidence[best] - position.noiseEvidence[position.noiseChoice] > Self.noiseSwitchMargin
        else { return }
        position.noiseChoice = best
        for k in position.maps.indices {
            position.maps[k].noise = position.noises[best]
            position.maps[k].noiseID = best
        }
        position.noiseBias = position.noises[best].meanOffset
    }

    /// How often the gateways' sensitivities are taken again from their readings (seconds of sighting time), how many
    /// readings a gateway needs first, and the share of its readings below the level taken for its sensitivity (a
    /// quiet outlier or two does not lower it).
    static let sensitivityRefreshSeconds = 60.0
    static let sensitivityReadings: Int32 = 1000
    static let sensitivityQuantile = 0.001

    /// Each gateway's sensitivity from the quietest of its readings: the level below which it reported only
    /// `sensitivityQuantile` of them, half a dB down (readings are whole dBm), never below the settings' `sensitivity`.
    /// A gateway that hears far enough reads down to where it stops hearing; one in a small room may stop short of
    /// that because nothing there is quieter, and is then expected to miss a little more than it would (its silence
    /// at those levels counts a little less).
    mutating func learnSensitivities() {
        let bins = PositionState.floorBins
        var changed = false
        var sensitivities = position.maps[position.choice].sensitivities
        for g in sensitivities.indices {
            let counts = position.floorCounts[g * bins..<(g + 1) * bins]
            let total = counts.reduce(0, +)
            guard total >= Self.sensitivityReadings else { continue }
            let below = Int32((Double(total) * Self.sensitivityQuantile).rounded(.down))
            var seen: Int32 = 0
            var level = PositionState.floorLowest
            for (k, count) in counts.enumerated() {
                seen += count
                if seen > below {
                    level = PositionState.floorLowest + k
                    break
                }
            }
            let learned = max(Float(settings.sensitivity), Float(level) - 0.5)
            if abs(learned - sensitivities[g]) >= 0.5 {
                sensitivities[g] = learned
                changed = true
            }
        }
        guard changed else { return }
        for k in position.maps.indices { position.maps[k].sensitivities = sensitivities }
        // The tables of every cell's silence were made with the old sensitivities.
        position.scratch.missedSums.removeAll()
    }

    /// `position`: each gateway's sensitivity as the engine takes it (`learnsSensitivity`), dBm, by gateway.
    public var positionSensitivities: [GatewayID: Double] {
        guard !position.maps.isEmpty else { return [:] }
        let map = position.maps[position.choice]
        return Dictionary(
            uniqueKeysWithValues: model.gateways.enumerated().map { ($0.element, Double(map.sensitivities[$0.offset])) }
        )
    }

    /// `position`: the observation model in use (the one the readings favour, `learnsNoise`); nil for other methods.
    public var positionNoise: ObservationModel? {
        guard !position.maps.isEmpty else { return nil }
        return position.noiseModels.isEmpty ? nil : position.noiseModels[position.noiseChoice]
    }

    /// One belief's update under one map; the evidence of the readings (0 when the belief had to start again). With
    /// `probesNoise` the observation models are weighed on the prediction first (`weighNoise`).
    private mutating func advance(
        _ belief: inout PositionBelief, track: TagTrack, readings: [PendingReading], dt: Double, map: PositionMap,
        probesNoise: Bool = false
    ) -> Double {
        let tick = settings.tickSeconds
        let power = Float(track.txPower ?? model.referencePower)
        let interval = track.linkInterval > 0 ? track.linkInterval : max(track.interval, 1)
        let expected = Float(min(belief.isEmpty ? tick : dt, 5) / max(interval, 0.02))
        let weight = Float(settings.readingWeight)
        var loudest = readings[0]
        for reading in readings where reading.rssi > loudest.rssi { loudest = reading }
        var picks: [Int32] = []
        swap(&picks, &position.scratch.reseed)
        defer { swap(&picks, &position.scratch.reseed) }
        if belief.isEmpty {
            // A tag first heard may be wherever a tag may start and its loudest gateway could read it within
            // `startMarginDB` (any offset, for a tag of unknown power); at most 2 × `maxCells` of those cells, every
            // k-th (by level: rings round the gateway), the walk fills in between. Spread over every zone's cells,
            // the first update of each tag cost more than a minute of its later ones on a large venue.
            let margin = Self.startMarginDB + (track.txPower == nil ? Double(Self.candidateOffsets.last ?? 0) : 0)
            map.startCells(
                near: Int(loudest.gateway), atLeast: Float(loudest.rssi) - power - Float(margin),
                most: 2 * Int(settings.maxCells), into: &picks)
            belief.spread(over: picks.isEmpty ? map.startCells : picks)
        } else {
            let ticks = min(max(Int((dt / tick).rounded()), 1), Self.maxDiffusionTicks)
            belief.diffuse(
                ticks: ticks, stay: Float(settings.stayShare), spreadFloor: Self.spreadFloor, grid: map.grid,
                scratch: &position.scratch)
        }
        // A little probability goes where the loudest reading says the tag may be (within `reseedMarginDB` of the
        // level there), so that a belief gone wrong recovers: at most a quarter of `maxCells`, every k-th of them
        // (spread thinner, the reseed lost every pruning to the old belief's cells, and a 20 m jump took 10 s to
        // follow on 0.5 m cells), and only in zones: reseeded outside them too, where no door leads from inside, a
        // belief of faint readings settled out there and held the tag's zone for as long as it stayed
        // (`WeakStartTests`).
        let candidates = map.cells(
            of: Int(loudest.gateway), atLeast: Float(loudest.rssi) - power - belief.offset - Self.reseedMarginDB)
        map.reseedCells(candidates, most: max(Int(settings.maxCells) / 4, 1), into: &picks)
        belief.mix(picks[...], share: Self.reseedShare, scratch: &position.scratch)
        if track.txPower == nil {
            chooseOffset(&belief, readings: readings, expected: expected, power: power, dt: dt, map: map)
        }
        if probesNoise && !belief.isEmpty {
            // At whole `noisePowerStepDB`: the tables of every cell's silence are kept per power, and a tag of unknown
            // power moves its offset by fractions of a dB.
            let step = Self.noisePowerStepDB
            weighNoise(
                belief: belief, readings: readings, expected: expected,
                power: ((power + belief.offset) / step).rounded() * step, at: track.lastHeard, map: map)
        }
        var evidence = 0.0
        if let value = belief.observe(
            readings: readings, expected: expected, power: power, weight: weight, map: map, scratch: &position.scratch)
        {
            evidence = value
        } else {
            // No cell explains the readings: start again from everywhere a tag may be.
            belief.spread(over: map.startCells)
            _ = belief.observe(
                readings: readings, expected: expected, power: power, weight: weight, map: map,
                scratch: &position.scratch)
        }
        belief.prune(floor: Self.positionFloor, limit: Int(settings.maxCells), scratch: &position.scratch)
        return evidence
    }
}

extension ZoneEngine {
    /// `position`: the path-loss exponent of the map in use (the one the probe tags' readings favour); nil for other
    /// methods.
    public var positionExponent: Double? { position.maps.isEmpty ? nil : position.maps[position.choice].exponent }

    /// `position`: the bytes of the tags' position state (their beliefs' and probes' cells and masses, offsets'
    /// evidence and pending readings, by the arrays' capacities), and the most cells any belief holds.
    public var positionStateBytes: (total: Int, largestBelief: Int) {
        func bytes(_ belief: PositionBelief) -> Int {
            belief.cells.capacity * 4 + belief.mass.capacity * 4 + belief.offsetEvidence.capacity * 8
                + MemoryLayout<PositionBelief>.stride
        }
        var total = 0
        var largest = 0
        for track in tracks {
            total +=
                bytes(track.belief) + track.probes.reduce(0) { $0 + bytes($1) }
                + track.pending.capacity * MemoryLayout<PendingReading>.stride
            largest = max(largest, track.belief.cells.count)
        }
        return (total, largest)
    }
}
