import BeaconModel

#if canImport(Glibc)
    import Glibc
#endif

/// Fitting a map to a calibration route: per gateway its gain, and a smooth residual map round the points where the
/// walk measured it (what the geometry misses: shadowing, antennas, the walls' real losses).
extension PositionMap {
    /// How the fit went for one gateway.
    struct GatewayFit: Sendable, Hashable {
        /// Points that taught it, areas (zones walked about) whose levels it was corrected over, areas where it went
        /// unheard and was lowered (`unheardReadings`), and the gain fitted to the points: how much louder (+) than
        /// the geometric model it reads, dB.
        var points: Int
        var areas = 0
        var lowered = 0
        var gain: Double
        /// Root-mean-square residual of those points against the geometric model, after the gain alone, and after the
        /// whole fit with each point left out of its own correction (what it says of places the walk did not reach).
        var geometricRMS: Double
        var gainRMS: Double
        var fittedRMS: Double
        /// The front-to-back ratio of its antenna the map now shades by, dB; nil for a gateway whose venue entry gives
        /// no facing.
        var frontToBack: Double?
    }

    /// The residual map's smoothing length (metres; the radio's shadowing is correlated over 1–5 m), and how many
    /// points' worth of prior hold a cell's correction at the gateway's gain, and a gain at 0. Chosen on the training
    /// venues' strolling walks: lengths 0.7 / 1 / 1.5 / 3 m gave medians 73.9 / 76.2 / 75.1 / 73.3 %, a cell prior of
    /// 0.3 / 1 / 2 at 1.5 m or 1 m gave 73.1 / 75.1 / 73.7 %; gains alone 71.7 %.
    static let fitLengthMetres = 1.0
    static let fitCellPrior = 1.0
    static let fitGainPrior = 3.0
    /// What the walker's body takes from a gateway it stands fully between the tag and (dB): a person at 2.4 GHz,
    /// as the simulator has it. Not the tracking's `bodyLossDB` (6), which is a noise model's width chosen on the
    /// training venues; on their strolling walks the fit did 0.24 points better (mean per venue) with 10 than with 6,
    /// and only with 10 does a simulated walk give back the simulator's exponent and gains.
    static let fitBodyLossDB = 10.0
    /// A gateway whose venue entry says which way its antenna faces gets its front-to-back ratio fitted with its gain
    /// (the cardioid the links fit, −F·(1 − cos θ)/2), with this many points' worth of prior at `fitAntennaMeanDB` (the
    /// links' prior), or at what the links already shaded by. Without it the pattern is only where the walk stood: the
    /// residual map's few metres round each point. Phone walks (60 s a zone, standing) of training seeds 1–30: prior
    /// weights 0.2 / 1 / 3 gave 76.2 / 76.3 / 76.2 % (mean of venues), no fitted pattern 75.7 %, the simulator's true
    /// patterns 76.3 %.
    static let fitAntennaPrior = 1.0
    static let fitAntennaMeanDB = 10.0
    /// What the walk's readings in a zone tapped (an area) teach: only the zone's own level, each gateway's mean over
    /// the zone corrected evenly over its cells, as far as the area's weight — its windows' worth of a standing
    /// point's, times `areaWeight` — outweighs the cell prior. Not the gains nor the antennas: where in the zone the
    /// readings came from is unknown, so a gain fitted to whole zones' means carries their errors to the places the
    /// walk did not reach. Strolling phone walks (60 s a zone, zones tapped) of training seeds 1–30: areas fitting
    /// gains too 74.5 % (mean of venues; below uncalibrated on 8), gains held at 0 (a prior of 10⁶ points) 77.9 %
    /// (5), neither gains nor antennas with an area weight of 1 / ⅓ / 0.1 77.7 / 78.8 / 77.9 % (4 / 2 / 1); the
    /// offsets alone, as before, 70.6 % (10).
    static let areaWeight = 1.0 / 3
    /// A gateway that heard the walker's tag less than twice in a zone walked about says the zone is quiet there: its
    /// level over the zone is lowered, if need be, until the readings the noise would let through over the stay come
    /// to no more than this many (or as many as it heard), the readings sent taken as the most any gateway heard there.
    /// Without it the geometry stood, and a gateway it has loud in a zone where it heard nothing counted against the
    /// zone whenever it was silent. Strolling phone walks (60 s a zone, zones tapped) of training seeds 1–30: not
    /// lowered, as before, 78.8 % (mean of venues; median 80.4 %); lowered to 3 / 1 / 0.3 / 0.1 readings (one heard
    /// once lowered as far) 78.9 / 79.0 / 79.2 / 79.3 %; 0.1, one heard once to 1: 79.3 % (median 80.9 %; better than
    /// before on 21 venues, worse on 7; below uncalibrated on 1 instead of 2).
    static let unheardReadings = 0.1

    /// How much of gateway `gateway`'s front-to-back ratio shades a tag at (dx, dy) from it, 0 (ahead) … 1 (behind); 0
    /// for a gateway whose venue entry gives no facing.
    static func behind(_ gateway: Venue.Gateway, dx: Double, dy: Double) -> Double {
        guard let antenna = gateway.antenna else { return 0 }
        let dz = gateway.height - 1.2
        let distance = max(0.5, (dx * dx + dy * dy + dz * dz).squareRoot())
        return (1 - antenna.cosine(towardsX: dx, y: dy, distance: distance)) / 2
    }

    /// The gain and the front-to-back ratio beyond `shaded` that fit `samples` best (residual = gain − ratio·behind),
    /// with their priors; the ratio is 0 for a gateway whose antenna faces no way, and never takes the map's whole
    /// ratio below 0. `holdsGain`: the gain is held at 0 and the ratio alone fitted.
    static func gainAndRatio(
        of samples: [FitSample], gateway: Venue.Gateway, shaded: Double, holdsGain: Bool = false
    ) -> (gain: Double, ratio: Double) {
        var sums = (weight: 0.0, residual: 0.0, behind: 0.0, behindSquared: 0.0, behindResidual: 0.0)
        for sample in samples {
            let shade = sample.shade(of: gateway)
            sums.weight += sample.weight
            sums.residual += sample.weight * sample.residual
            sums.behind += sample.weight * shade
            sums.behindSquared += sample.weight * shade * shade
            sums.behindResidual += sample.weight * shade * sample.residual
        }
        let gainWeight = sums.weight + fitGainPrior
        guard gateway.antenna != nil else { return (holdsGain ? 0 : sums.residual / gainWeight, 0) }
        // The normal equations of the weighted least squares, each prior one more row.
        let mean = shaded > 0 ? 0 : fitAntennaMeanDB
        let ratioWeight = sums.behindSquared + fitAntennaPrior
        if holdsGain { return (0, max((fitAntennaPrior * mean - sums.behindResidual) / ratioWeight, -shaded)) }
        let determinant = gainWeight * ratioWeight - sums.behind * sums.behind
        let solved =
            (gainWeight * (fitAntennaPrior * mean - sums.behindResidual) + sums.behind * sums.residual) / determinant
        let ratio = max(solved, -shaded)
        return ((sums.residual + ratio * sums.behind) / gainWeight, ratio)
    }

    /// One point's reading of one gateway: where, its residual against the geometric level there, its weight. An
    /// area's (a zone the walker went about) stands at one of its zone's cells, and carries the zone's cells and its
    /// antenna shading averaged over them.
    struct FitSample {
        var x: Double
        var y: Double
        var residual: Double
        var weight: Double
        var cells: [Int]? = nil
        var averageShade: Double? = nil
        /// An area where the gateway went unheard: its residual lowers the zone to a bound, not to a measured mean.
        var unheard = false

        /// How much of `gateway`'s front-to-back ratio shades the sample (`PositionMap.behind`).
        func shade(of gateway: Venue.Gateway) -> Double {
            averageShade ?? behind(gateway, dx: x - gateway.position.x, dy: y - gateway.position.y)
        }
    }

    /// The samples of gateway `g` among `areas`, as `fitSamples` makes a point's, against the mean of its geometric
    /// levels over the zone's cells (`cellsOf`, per zone of the venue): the walker's place in the zone is unknown, and
    /// strolling round it they were anywhere in it. The walker's heading is unknown too: the body is in `bias`. An area
    /// weighs `areaWeight` of a standing point's windows over as many seconds.
    static func areaSamples(
        gateway: Venue.Gateway, g: Int, areas: [Calibration.Area], zoneIndex: [ZoneID: Int], cellsOf: [[Int]],
        level: [Float], grid: FloorGrid, referencePower: Double, bias: Double, sensitivity: Double
    ) -> [FitSample] {
        var samples: [FitSample] = []
        let heardMean = HeardMean.turning
        for area in areas {
            guard let zone = zoneIndex[area.zone] else { continue }
            let cells = cellsOf[zone].filter { level[g * grid.count + $0] > -200 }
            guard !cells.isEmpty else { continue }
            let residual: Double
            let windows: Double
            var unheard = false
            if let profile = area.levels[gateway.id.rawValue], profile.samples >= 2 {
                guard profile.mean >= sensitivity else { continue }
                let expected = cells.reduce(0.0) { $0 + Double(level[g * grid.count + $1]) } / Double(cells.count)
                let cut = heardMean.excess(heardMean: profile.mean, sensitivity: sensitivity)
                residual = min(max(profile.mean - cut - referencePower - expected - bias, -20), 20)
                windows = min(Double(profile.samples) / 4, profile.heard * area.seconds / Calibrator.pointSeconds)
            } else {
                let sent = Double(area.levels.values.map(\.samples).max() ?? 0)
                let allowed = max(unheardReadings, Double(area.levels[gateway.id.rawValue]?.samples ?? 0))
                guard
                    let lowered = quietOffset(
                        levels: cells.map { Double(level[g * grid.count + $0]) + referencePower }, sent: sent,
                        allowed: allowed, sensitivity: sensitivity)
                else { continue }
                // As a heard area's residual would be for a zone that much quieter: its level plus the noise's mean
                // offset far above sensitivity, less the bias every residual is taken against.
                residual = max(lowered + heardMean.offsets[heardMean.offsets.count - 1] - bias, -20)
                windows = area.seconds / Calibrator.pointSeconds
                unheard = true
            }
            let shade =
                cells.reduce(0.0) { sum, cell in
                    let centre = grid.centre(cell)
                    return sum + behind(gateway, dx: centre.x - gateway.position.x, dy: centre.y - gateway.position.y)
                } / Double(cells.count)
            // Any of its cells will do as its place: its correction is the same over all of them.
            let place = grid.centre(cells[cells.count / 2])
            samples.append(
                FitSample(
                    x: place.x, y: place.y, residual: residual, weight: areaWeight * max(windows, 0.5), cells: cells,
                    averageShade: shade, unheard: unheard))
        }
        return samples
    }

    /// How much quieter (dB, < 0) a zone whose cells a gateway has at `levels` (dBm, the calibration's tag) must be
    /// for the noise to let through no more than `allowed` of `sent` readings from a walker going evenly over them;
    /// nil when it already does, or when too few were sent to tell (fewer than 10).
    static func quietOffset(levels: [Double], sent: Double, allowed: Double, sensitivity: Double) -> Double? {
        guard sent >= 10, !levels.isEmpty else { return nil }
        let heardMean = HeardMean.turning
        func expected(_ offset: Double) -> Double {
            sent * levels.reduce(0.0) { $0 + heardMean.share(margin: $1 + offset - sensitivity) } / Double(levels.count)
        }
        guard expected(0) > allowed else { return nil }
        var bounds = (low: -60.0, high: 0.0)
        for _ in 0..<40 {
            let middle = (bounds.low + bounds.high) / 2
            if expected(middle) > allowed { bounds.high = middle } else { bounds.low = middle }
        }
        return (bounds.low + bounds.high) / 2
    }

    /// The samples of gateway `g` (at `position`) among `points`: residuals against `level` (the geometric map, 0 dBm
    /// tag) of a tag of `referencePower`, less the noise's mean offset `bias`. `bias` holds the carrier's body as an
    /// average over the ways a walker faces; where a point knows its walker's heading, the body's loss for that heading
    /// (`bodyLossDB` times how much of the body is between: max(0, −cos) of the angle from the heading to the
    /// gateway) replaces the walker's average body loss (1/π of `bodyLossDB`).
    ///
    /// Every link heard at least twice at a point teaches, the weak ones too. A weak link's heard readings overstate
    /// its level, since those that fade below `sensitivity` are lost; each point's mean is first taken back to the mean
    /// its readings would have had without that cut (`HeardMean`). The weak links are what tells a place far from
    /// every gateway from its neighbours. Phone walks (60 s a zone, standing) of training seeds 1–30: only links 8 dB
    /// above sensitivity and heard every second, as before, 71.6 % (mean of venues; below uncalibrated on 8); every
    /// link without the correction 71.7 %; with it 75.7 % (below uncalibrated on 4). Seeds 31–60, not used to choose:
    /// 69.6 → 73.6 % (below uncalibrated on 14 → 6).
    static func fitSamples(
        gateway id: String, g: Int, position: Point, points: [Calibration.Point], level: [Float], grid: FloorGrid,
        referencePower: Double, bias: Double, bodyLossDB: Double, sensitivity: Double
    ) -> [FitSample] {
        var samples: [FitSample] = []
        for point in points {
            // A mean below sensitivity is not what the noise model hears: nothing to take back.
            guard let profile = point.levels[id], profile.samples >= 2, profile.mean >= sensitivity,
                let cell = grid.cell(containing: Point(point.x, point.y))
            else { continue }
            let expected = Double(level[g * grid.count + cell])
            guard expected > -200 else { continue }
            var body = 0.0
            if let heading = point.heading {
                let angle = atan2(position.y - point.y, position.x - point.x) - heading * Double.pi / 180
                body = bodyLossDB * (max(0, -cos(angle)) - 1 / Double.pi)
            }
            let cut = (point.heading == nil ? HeardMean.turning : HeardMean.facing)
                .excess(heardMean: profile.mean, sensitivity: sensitivity)
            let residual = min(max(profile.mean - cut - referencePower - expected - bias + body, -20), 20)
            samples.append(
                FitSample(x: point.x, y: point.y, residual: residual, weight: Double(min(profile.samples, 4)) / 4))
        }
        return samples
    }

    /// How much louder (+) than the geometry the walk read, over every gateway and place it measured (dB; shrunk
    /// towards 0 by `fitGainPrior` points' worth): its route's points if it has any, else its zones walked about (those
    /// where a gateway heard); 0 for a walk without areas, whose points' gains carry it. The zones the walk never went
    /// about take it over all their cells, before the fit, so that the zones it measured and those it did not differ
    /// by what it measured in them, not by how loud its tag was: each area corrects only its own zone, and without
    /// this a walk tag louder than the reference (one that advertises no power: the TETAM hall's reads about +4 dB)
    /// left every unwalked zone quieter than its walked neighbours, and a tag in one was placed in a neighbour.
    /// Measured on training data only:
    /// - the hall's training walks, each scored by a calibration from the other four (`scripts/accuracy.sh`'s
    ///   leave-one-walk-out rows): with their route, straight_03 (the one walk into quadrant 3) 29.0 → 51.3 %, mean of
    ///   the five 68.2 → 72.8 %; tapped as zones, straight_03 52.4 → 77.4 %, mean 78.2 → 84.1 % (uncalibrated 70.4 %);
    /// - strolling walks that leave out every third zone, training seeds 1–30 (`beacon-sim bench --venues 30 --seeds
    ///   1..30 --duration 5m --also-calibrated --walk-skip-every 3`): calibrated 75.4 → 76.6 % (mean of venues;
    ///   below the uncalibrated hub by more than a point on 3 → 1); strolling phone walks, zones tapped (the same with
    ///   `--phone-walk 60 --phone-stroll`), 74.6 → 75.5 % (5 → 6);
    /// - a walk of every zone is fitted exactly as before (the same 30 seeds, every zone walked: identical).
    static func walkLevel(
        level: [Float], grid: FloorGrid, venue: Venue, calibration: Calibration, bias: Double, sensitivity: Double
    ) -> Double {
        let points = calibration.points ?? []
        let areas = calibration.areas ?? []
        guard !areas.isEmpty else { return 0 }
        let zoneIndex = Dictionary(uniqueKeysWithValues: venue.zones.enumerated().map { ($1.id, $0) })
        var cellsOf = [[Int]](repeating: [], count: venue.zones.count)
        for cell in 0..<grid.count where Int(grid.zoneOfCell[cell]) < venue.zones.count {
            cellsOf[Int(grid.zoneOfCell[cell])].append(cell)
        }
        var sums = (residual: 0.0, weight: 0.0)
        for (g, gateway) in venue.gateways.enumerated() {
            let samples =
                points.isEmpty
                ? areaSamples(
                    gateway: gateway, g: g, areas: areas, zoneIndex: zoneIndex, cellsOf: cellsOf, level: level,
                    grid: grid, referencePower: calibration.referencePower, bias: bias, sensitivity: sensitivity
                ).filter { !$0.unheard }
                : fitSamples(
                    gateway: gateway.id.rawValue, g: g, position: gateway.position, points: points, level: level,
                    grid: grid, referencePower: calibration.referencePower, bias: bias, bodyLossDB: fitBodyLossDB,
                    sensitivity: sensitivity)
            for sample in samples {
                sums.residual += sample.weight * sample.residual
                sums.weight += sample.weight
            }
        }
        return sums.residual / (sums.weight + fitGainPrior)
    }

    /// Adds the fitted gain, antenna pattern (a gateway facing one way) and residual map of every gateway to `level`,
    /// in place; what each gateway's fit found. `shaded`: per gateway, the front-to-back ratio `level` already shades
    /// by (the links'). Residuals are not smoothed across a wall: each side learns its own. With the patterns, phone
    /// walks of training seeds 1–30 went 75.7 → 76.3 % (mean of venues; below uncalibrated on 4 → 3); seeds 31–60,
    /// not used to choose, 73.6 → 74.6 % (6 → 4). A calibration with both points and areas is fitted in two stages,
    /// the areas and then the points with `holdsGain` (no gain of their own): strolling walks of training seeds 1–30
    /// with their route known, 78.3 % (the route's points alone) → 79.8 % (mean of venues); with the route as a phone's
    /// point taps every 5 s, 80.2 %, against 79.3 % for the zones tapped (docs/inference.md, "A stroll on a known
    /// route").
    static func fit(
        level: inout [Float], grid: FloorGrid, venue: Venue, walls: [Segment], calibration: Calibration, bias: Double,
        sensitivity: Double, shaded: [Double], holdsGain: Bool = false
    ) -> [GatewayFit] {
        let points = calibration.points ?? []
        let areas = calibration.areas ?? []
        // A walk with both: the areas first set each zone's level, then the points add the field within the zones
        // round them, against the zones' levels and with no gain of their own (a gain would shift every zone the
        // areas measured). The gain reported is what the two added where the points were: how much louder than the
        // geometry the gateway read over the walk.
        if !points.isEmpty, !areas.isEmpty {
            let geometric = level
            var zonesOnly = calibration
            zonesOnly.points = nil
            let first = fit(
                level: &level, grid: grid, venue: venue, walls: walls, calibration: zonesOnly, bias: bias,
                sensitivity: sensitivity, shaded: shaded)
            var pointsOnly = calibration
            pointsOnly.areas = nil
            let second = fit(
                level: &level, grid: grid, venue: venue, walls: walls, calibration: pointsOnly, bias: bias,
                sensitivity: sensitivity, shaded: zip(first, shaded).map { $0.frontToBack ?? $1 }, holdsGain: true)
            return zip(first, second).enumerated().map { g, fits in
                var both = fits.1
                both.areas = fits.0.areas
                both.lowered = fits.0.lowered
                let samples = fitSamples(
                    gateway: venue.gateways[g].id.rawValue, g: g, position: venue.gateways[g].position,
                    points: points, level: geometric, grid: grid, referencePower: calibration.referencePower,
                    bias: bias, bodyLossDB: fitBodyLossDB, sensitivity: sensitivity)
                var sums = (added: 0.0, weight: 0.0)
                for sample in samples {
                    guard let cell = grid.cell(containing: Point(sample.x, sample.y)) else { continue }
                    sums.added +=
                        sample.weight * Double(level[g * grid.count + cell] - geometric[g * grid.count + cell])
                    sums.weight += sample.weight
                }
                both.gain = sums.weight > 0 ? sums.added / sums.weight : 0
                return both
            }
        }
        let zoneIndex = Dictionary(uniqueKeysWithValues: venue.zones.enumerated().map { ($1.id, $0) })
        var cellsOf = [[Int]](repeating: [], count: venue.zones.count)
        if !areas.isEmpty {
            for cell in 0..<grid.count where Int(grid.zoneOfCell[cell]) < venue.zones.count {
                cellsOf[Int(grid.zoneOfCell[cell])].append(cell)
            }
        }
        let length = fitLengthMetres
        let cutoff = 3 * length
        let span = Int((cutoff / grid.cellSize).rounded(.up))
        var sums = [Double](repeating: 0, count: grid.count)
        var weights = [Double](repeating: 0, count: grid.count)
        var touched: [Int] = []
        var fits: [GatewayFit] = []
        for (g, gateway) in venue.gateways.enumerated() {
            let samples =
                fitSamples(
                    gateway: gateway.id.rawValue, g: g, position: gateway.position, points: points, level: level,
                    grid: grid, referencePower: calibration.referencePower, bias: bias, bodyLossDB: fitBodyLossDB,
                    sensitivity: sensitivity)
                + areaSamples(
                    gateway: gateway, g: g, areas: areas, zoneIndex: zoneIndex, cellsOf: cellsOf, level: level,
                    grid: grid, referencePower: calibration.referencePower, bias: bias, sensitivity: sensitivity)
            let total = samples.reduce(0) { $0 + $1.weight }
            let (gain, ratio) = gainAndRatio(
                of: samples.filter { $0.cells == nil }, gateway: gateway, shaded: shaded[g], holdsGain: holdsGain)
            // What is left of each sample for the residual map: its residual less the gain and the fitted pattern.
            let rests = samples.map { $0.residual - gain + ratio * $0.shade(of: gateway) }
            // Each point's kernel over the cells within `cutoff` on its side of every wall; an area's evenly over its
            // zone's cells.
            for (sample, rest) in zip(samples, rests) {
                if let cells = sample.cells {
                    for cell in cells {
                        if weights[cell] == 0 { touched.append(cell) }
                        sums[cell] += sample.weight * rest
                        weights[cell] += sample.weight
                    }
                    continue
                }
                let here = Point(sample.x, sample.y)
                let near = walls.filter { $0.distance(to: here) <= cutoff }
                let column = Int(((sample.x - grid.origin.x) / grid.cellSize).rounded(.down))
                let row = Int(((sample.y - grid.origin.y) / grid.cellSize).rounded(.down))
                for r in max(row - span, 0)...min(row + span, grid.rows - 1) {
                    for c in max(column - span, 0)...min(column + span, grid.columns - 1) {
                        let cell = r * grid.columns + c
                        guard level[g * grid.count + cell] > -200 else { continue }
                        let centre = grid.centre(cell)
                        let dx = centre.x - sample.x
                        let dy = centre.y - sample.y
                        let squared = dx * dx + dy * dy
                        guard squared <= cutoff * cutoff else { continue }
                        if !near.isEmpty {
                            let path = Segment(here, centre)
                            if near.contains(where: { boxesMeet(path, $0) && path.intersects($0) }) { continue }
                        }
                        let k = sample.weight * exp(-squared / (2 * length * length))
                        if weights[cell] == 0 { touched.append(cell) }
                        sums[cell] += k * rest
                        weights[cell] += k
                    }
                }
            }
            // The fit's quality: each sample against the correction of the others at its cell.
            var squares = (geometric: 0.0, gain: 0.0, fitted: 0.0)
            for (sample, rest) in zip(samples, rests) {
                let cell = grid.cell(containing: Point(sample.x, sample.y))!
                let centre = grid.centre(cell)
                let squared =
                    (centre.x - sample.x) * (centre.x - sample.x) + (centre.y - sample.y) * (centre.y - sample.y)
                let own = sample.cells == nil ? sample.weight * exp(-squared / (2 * length * length)) : sample.weight
                let others = weights[cell] - own
                let left = others > 0 ? (sums[cell] - own * rest) / (others + fitCellPrior) : 0
                squares.geometric += sample.weight * sample.residual * sample.residual
                squares.gain += sample.weight * rest * rest
                squares.fitted += sample.weight * (rest - left) * (rest - left)
            }
            func rms(_ sum: Double) -> Double { total > 0 ? (sum / total).squareRoot() : 0 }
            fits.append(
                GatewayFit(
                    points: samples.count { $0.cells == nil }, areas: samples.count { $0.cells != nil && !$0.unheard },
                    lowered: samples.count(where: \.unheard), gain: gain,
                    geometricRMS: rms(squares.geometric),
                    gainRMS: rms(squares.gain), fittedRMS: rms(squares.fitted),
                    frontToBack: gateway.antenna == nil ? nil : shaded[g] + ratio))
            let base = g * grid.count
            for cell in 0..<grid.count where level[base + cell] > -200 {
                let centre = grid.centre(cell)
                let shade = behind(gateway, dx: centre.x - gateway.position.x, dy: centre.y - gateway.position.y)
                level[base + cell] += Float(gain - ratio * shade)
            }
            for cell in touched {
                level[base + cell] += Float(sums[cell] / (weights[cell] + fitCellPrior))
                sums[cell] = 0
                weights[cell] = 0
            }
            touched.removeAll(keepingCapacity: true)
        }
        return fits
    }
}

/// What fitting the `position` method's radio map to a calibration's route and areas found: `beacon-hub calibrate`
/// prints it.
public struct RadioMapFit: Sendable {
    public struct Gateway: Sendable, Hashable {
        public var gateway: GatewayID
        /// Route points and areas that taught it; areas where it went unheard, its level lowered there; its gain
        /// over the geometric model, dB; their RMS residual against the geometry, after the gain, and after the whole
        /// fit with each left out of its own correction, dB (the lowered areas counted in).
        public var points: Int
        public var areas: Int
        public var lowered: Int
        public var gain: Double
        public var geometricRMS: Double
        public var gainRMS: Double
        public var fittedRMS: Double
        /// The front-to-back ratio fitted for a gateway whose venue entry says which way its antenna faces, dB.
        public var frontToBack: Double?
    }

    /// The path-loss exponent whose map fitted the route and areas best (the engine starts from it).
    public var exponent: Double
    public var gateways: [Gateway]

    /// Nil when the calibration has neither route points nor areas.
    public init?(venue: Venue, settings: InferenceSettings, calibration: Calibration) {
        guard !calibration.isOffsetsOnly else { return nil }
        var settings = settings
        settings.method = .position
        let (maps, choice) = ZoneEngine.positionMaps(venue: venue, settings: settings, calibration: calibration)
        exponent = maps[choice].exponent
        gateways = zip(venue.gateways, maps[choice].fits).map { gateway, fit in
            Gateway(
                gateway: gateway.id, points: fit.points, areas: fit.areas, lowered: fit.lowered, gain: fit.gain,
                geometricRMS: fit.geometricRMS,
                gainRMS: fit.gainRMS, fittedRMS: fit.fittedRMS, frontToBack: fit.frontToBack)
        }
    }
}
