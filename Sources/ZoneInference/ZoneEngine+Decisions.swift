import BeaconModel

#if canImport(Glibc)
    import Glibc
#endif

extension ZoneEngine {
    /// A tag may leave for "no zone" from a zone with no entrance when the zones with one held this share of its
    /// belief together within the last `entranceSeconds`, after it entered its zone. Chosen on training seeds 1–30
    /// given the exact map (shares 0.05 / 0.1 / 0.25 / 0.5 within 10 s: 85.7 / 85.8 / 85.5 / 85.0 % mean of venues;
    /// 10 / 20 s at 0.1: 85.8 / 85.7 %; docs/inference.md, "The `position` method").
    static let entranceShare = 0.1
    static let entranceSeconds = 10.0

    /// One update at time `t`: every tag heard since the last tick is stepped, then due deadlines are handled.
    mutating func tick(at t: Double, events: inout [ZoneEvent]) {
        let pending = dirty
        dirty.removeAll(keepingCapacity: true)
        for index in pending {
            tracks[index].dirty = false
            step(index, at: t, events: &events)
        }
        if t >= nextDeadline { sweep(at: t, events: &events) }
    }

    /// Absence exits and stayed events that fall due at `t`; recomputes the next deadline.
    mutating func sweep(at t: Double, events: inout [ZoneEvent]) {
        var next = Double.infinity
        for index in tracks.indices where tracks[index].state != model.noZone {
            let track = tracks[index]
            let absence = absenceFor(track)
            if t - max(track.lastHeard, track.resumeAt) >= absence {
                // Silence of offline gateways is not absence: the tag is unknown, not gone.
                if lastHeardOnlyOffline(index) {
                    if !track.unknown { becomeUnknown(index, at: t, events: &events) }
                    continue
                }
                // Its gateways fell silent with it: wait for the hub to hear from them or call them offline.
                if lastHeardOnlyBySilent(index, at: t) {
                    tracks[index].resumeAt = t
                    next = min(next, t + settings.tickSeconds)
                    continue
                }
                let seconds = Int(absence.rounded())
                move(
                    index, to: model.noZone, at: t, confidence: 1, reason: "not heard by any gateway for \(seconds) s",
                    events: &events)
                tracks[index].unknown = false
                tracks[index].belief = PositionBelief()
                if !tracks[index].posterior.isEmpty {
                    tracks[index].posterior = [Float](
                        repeating: 1 / Float(model.zones.count + 1), count: model.zones.count + 1)
                }
                tracks[index].candidate = -1
                continue
            }
            next = min(next, max(track.lastHeard, track.resumeAt) + absence)
            if !track.stayedReported, !track.unknown, let stayed = stayedFor(track) {
                if t - track.since >= stayed {
                    tracks[index].stayedReported = true
                    emit(
                        .stayed, index, zone: model.zones[track.state], previous: nil, at: t,
                        confidence: track.confidence, reason: "in \(model.zones[track.state]) for \(Int(stayed)) s",
                        dwell: t - track.since, events: &events)
                } else {
                    next = min(next, track.since + stayed)
                }
            }
        }
        nextDeadline = next
    }

    /// Updates one tag's belief from its fresh readings and decides whether its zone changes.
    mutating func step(_ index: Int, at t: Double, events: inout [ZoneEvent]) {
        let stale = staleFor(tracks[index])
        let dt = min(max(t - tracks[index].lastStep, settings.tickSeconds), 5)
        tracks[index].lastStep = t
        let adjust = (tracks[index].txPower ?? model.referencePower) - model.referencePower
        heard.removeAll(keepingCapacity: true)
        for reading in tracks[index].readings where t - reading.lastSeen <= stale {
            heard.append((Int(reading.gateway), Double(reading.level) - adjust))
        }
        guard !heard.isEmpty else { return }
        if tracks[index].unknown, heard.contains(where: { !gatewayOffline[$0.gateway] }) {
            // Heard again: back in its zone as far as anyone knows, with no new enter; the filter decides the rest.
            // Sightings that an offline gateway made before it went (a batch delivered after its goodbye) do not
            // count: they say nothing of where the tag is now.
            tracks[index].unknown = false
            markTouched(index)
        }
        checkClone(index, at: t, events: &events)
        let leader: Int
        let probability: Double
        // The reported state's probability (0 for `strongest`, whose leader has probability 1).
        var reported = 0.0
        // The zones with an entrance, together (none for `strongest`, which keeps the old rule: decide).
        var entrance = 0.0
        switch settings.method {
        case .strongest:
            var best: (gateway: Int, level: Double)?
            for reading in heard
            where model.gatewayZone[reading.gateway] != nil && reading.level > best?.level ?? -.infinity {
                best = reading
            }
            leader = best.flatMap { model.gatewayZone[$0.gateway] } ?? tracks[index].state
            probability = 1
            // As the baseline: the first zone is taken at once.
            if tracks[index].state == model.noZone && leader != model.noZone {
                tracks[index].candidateSince = t - settings.confirmSeconds
                tracks[index].candidate = leader
            }
        case .position:
            guard let update = updatePosition(index, dt: dt) else { return }
            leader = update.leader
            probability = update.probability
            tracks[index].confidence = update.reported
            reported = update.reported
            if update.reported >= 0.5 { tracks[index].lastConfident = t }
            entrance = update.entrance
        case .hmm:
            updatePosterior(index, dt: dt)
            let posterior = tracks[index].posterior
            var best = 0
            for state in posterior.indices where posterior[state] > posterior[best] { best = state }
            leader = best
            probability = Double(posterior[best])
            tracks[index].confidence = Double(posterior[tracks[index].state])
            reported = Double(posterior[tracks[index].state])
            if posterior[tracks[index].state] >= 0.5 { tracks[index].lastConfident = t }
            for zone in model.neighbours[model.noZone] { entrance += Double(posterior[zone]) }
        }
        if entrance >= Self.entranceShare { tracks[index].lastAtEntrance = t }
        decide(index, leader: leader, probability: probability, reported: reported, at: t, events: &events)
    }

    /// The HMM forward step: predict through the doors, weigh by the emission likelihoods.
    mutating func updatePosterior(_ index: Int, dt: Double) {
        let gatewayCount = model.gateways.count
        // A tag of unknown power may be 10 dB off the reference: only the pattern across gateways can tell.
        let offsetSigma = tracks[index].txPower == nil ? settings.unknownPowerSigmaDB : settings.tagOffsetSigmaDB
        let offsetVariance = offsetSigma * offsetSigma
        var best = -Double.infinity
        for state in 0...model.noZone {
            let base = state * gatewayCount
            // The tag's power offset that best explains the levels in this state (MAP, Gaussian prior).
            var numerator = 0.0
            var denominator = 1 / offsetVariance
            for reading in heard {
                let sd = Double(model.sigma[base + reading.gateway])
                let weight = 1 / (sd * sd)
                numerator += (reading.level - Double(model.mean[base + reading.gateway])) * weight
                denominator += weight
            }
            let bound = 3 * offsetSigma
            let offset = min(max(numerator / denominator, -bound), bound)
            var value = -offset * offset / (2 * offsetVariance)
            for reading in heard {
                heardMask[reading.gateway] = true
                var residual = reading.level - Double(model.mean[base + reading.gateway]) - offset
                // A body between tag and gateway only ever takes signal away: forgive that much of a shortfall.
                if residual < 0 { residual = min(residual + settings.bodyLossDB, 0) }
                let z = residual / Double(model.sigma[base + reading.gateway])
                value -= min(z * z / 2, settings.residualCap)
            }
            for gateway in model.audible[state] where !heardMask[Int(gateway)] && !gatewayOffline[Int(gateway)] {
                value += Double(model.missPenalty[base + Int(gateway)])
            }
            for reading in heard { heardMask[reading.gateway] = false }
            logLikelihood[state] = value
            best = max(best, value)
        }
        let stay = exp(-settings.moveRatePerSecond * dt)
        // A little mass reaches every zone (never "no zone", which only borders the entrances), so that a wrong
        // belief recovers even where the doors say it cannot.
        let floor = 0.0005 * dt / Double(model.noZone)
        var predicted = scratchPosterior
        for state in predicted.indices { predicted[state] = 0 }
        let posterior = tracks[index].posterior
        for state in posterior.indices {
            let mass = Double(posterior[state])
            let neighbours = model.neighbours[state]
            if neighbours.isEmpty {
                predicted[state] += Float(mass)
                continue
            }
            predicted[state] += Float(mass * stay)
            let share = Float(mass * (1 - stay) / Double(neighbours.count))
            for neighbour in neighbours { predicted[neighbour] += share }
        }
        let weight = settings.emissionWeight * dt
        var total: Float = 0
        for state in predicted.indices {
            let prior = predicted[state] + (state == model.noZone ? 0 : Float(floor))
            let value = prior * Float(exp(weight * (logLikelihood[state] - best)))
            predicted[state] = value
            total += value
        }
        for state in predicted.indices { predicted[state] = max(predicted[state] / total, 1e-7) }
        // Swap buffers: the tag keeps the new posterior, the old one becomes the next step's scratch.
        scratchPosterior = tracks[index].posterior
        tracks[index].posterior = predicted
    }

    /// Hysteresis (`InferenceSettings.confirmation`): a leader other than the reported state must hold
    /// `enterProbability` for `confirmSeconds`, or lead the reported state's `reported` by `leadRatio` for
    /// `leadSeconds`.
    mutating func decide(
        _ index: Int, leader: Int, probability: Double, reported: Double, at t: Double, events: inout [ZoneEvent]
    ) {
        let track = tracks[index]
        // "No zone" is reached through an entrance, or by silence (absence), never straight from inside: from a zone
        // with no entrance only when the belief was at one lately, since the tag entered its zone (the tag crossed an
        // entrance zone faster than the hub confirms a zone, and left).
        let leavesThroughWall =
            leader == model.noZone && !model.adjacent(track.state, leader)
            && (t - track.lastAtEntrance > Self.entranceSeconds || track.lastAtEntrance <= track.since)
        // A belief restored from a previous hub's estimate has not followed the tag: it must hold `enterProbability`
        // until it has had `leadSeconds` of readings, or a standby moves a tag that stands by a door into the next
        // room within seconds of a takeover, and back.
        let leads = t - track.restoredAt >= settings.leadSeconds
        guard leader != track.state,
            let needed = settings.confirmation(probability, reported: reported, leads: leads),
            !leavesThroughWall
        else {
            tracks[index].candidate = -1
            return
        }
        if track.candidate != leader {
            tracks[index].candidate = leader
            tracks[index].candidateSince = t
        }
        guard t - tracks[index].candidateSince >= needed, t >= track.holdUntil else { return }
        // A jump between zones without a door between them, faster than anyone walks, is not a move.
        if track.state != model.noZone && leader != model.noZone && !model.adjacent(track.state, leader) {
            let needed = model.walkDistance[track.state][leader] / settings.maxWalkingSpeed
            let elapsed = t - track.lastConfident
            if elapsed < needed {
                tracks[index].holdUntil = track.lastConfident + needed
                tracks[index].candidate = -1
                if t >= track.nextSuspectReport {
                    tracks[index].nextSuspectReport = t + 60
                    let metres = Int(model.walkDistance[track.state][leader].rounded())
                    emit(
                        .suspect, index, zone: model.zones[leader], previous: model.zones[track.state], at: t,
                        confidence: probability,
                        reason: "moved \(metres) m from \(model.zones[track.state]) in \(Int(elapsed.rounded())) s:"
                            + " faster than walking (cloned or spoofed beacon?); not counted as a move",
                        dwell: nil, events: &events)
                }
                return
            }
        }
        let reason =
            leader == model.noZone
            ? "no zone is likely any more (p=\(rounded(probability)))"
            : "most likely zone for \(rounded(t - tracks[index].candidateSince)) s (p=\(rounded(probability)))"
        move(index, to: leader, at: t, confidence: probability, reason: reason, events: &events)
    }

    /// Reports a change of state: exit from the old zone, enter into the new one, as the region's flags allow.
    mutating func move(
        _ index: Int, to state: Int, at t: Double, confidence: Double, reason: String, events: inout [ZoneEvent]
    ) {
        let track = tracks[index]
        let previous = track.state == model.noZone ? nil : model.zones[track.state]
        let next = state == model.noZone ? nil : model.zones[state]
        let region = track.region.map { directory.regions[$0] }
        if let previous, region?.notifyOnExit ?? true {
            emit(
                .exit, index, zone: previous, previous: nil, at: t, confidence: confidence, reason: reason,
                dwell: t - track.since, events: &events)
        }
        if let next, region?.notifyOnEntry ?? true {
            emit(
                .enter, index, zone: next, previous: previous, at: t, confidence: confidence, reason: reason,
                dwell: nil, events: &events)
        }
        if recordsMoves {
            moves.append(
                ZoneMove(
                    tag: track.tag, beacon: track.beacon, region: region?.id, from: previous, to: next, t: t,
                    confidence: (min(max(confidence, 0), 1) * 1000).rounded() / 1000))
        }
        tracks[index].state = state
        tracks[index].since = t
        tracks[index].confidence = confidence
        tracks[index].candidate = -1
        tracks[index].stayedReported = false
        tracks[index].lastConfident = t
        markTouched(index)
        if state != model.noZone {
            var deadline = track.lastHeard + absenceFor(track)
            if let stayed = stayedFor(track) { deadline = min(deadline, t + stayed) }
            nextDeadline = min(nextDeadline, deadline)
        }
    }

    /// A tag heard strongly by two far-apart gateways at once is two transmitters: report it, and hold its zone.
    /// Runs on every step: no allocation, and pairs only among the gateways that hear the tag loudly.
    mutating func checkClone(_ index: Int, at t: Double, events: inout [ZoneEvent]) {
        let strong = model.referencePower - settings.strongMarginDB
        func loud(_ reading: (gateway: Int, level: Double)) -> Bool {
            reading.level - model.gatewayOffset[reading.gateway] >= strong
        }
        let count = model.gateways.count
        for i in heard.indices where loud(heard[i]) {
            let a = heard[i]
            for b in heard[(i + 1)...] where loud(b) && distantPairs[a.gateway * count + b.gateway] {
                tracks[index].holdUntil = max(tracks[index].holdUntil, t + staleFor(tracks[index]))
                guard t >= tracks[index].nextSuspectReport else { return }
                tracks[index].nextSuspectReport = t + 60
                let zone = model.gatewayZone[a.gateway].map { model.zones[$0] }
                emit(
                    .suspect, index, zone: zone, previous: nil, at: t, confidence: 1,
                    reason: "heard strongly by \(model.gateways[a.gateway]) and \(model.gateways[b.gateway]) at once,"
                        + " too far apart for one tag (cloned or spoofed beacon?)", dwell: nil, events: &events)
                return
            }
        }
    }

    mutating func emit(
        _ type: ZoneEventType, _ index: Int, zone: ZoneID?, previous: ZoneID?, at t: Double, confidence: Double,
        reason: String, dwell: Double?, events: inout [ZoneEvent]
    ) {
        let region = tracks[index].region.map { directory.regions[$0].id }
        events.append(
            ZoneEvent(
                type: type, tag: tracks[index].tag, zone: zone, previousZone: previous, t: t,
                confidence: (min(max(confidence, 0), 1) * 1000).rounded() / 1000, reason: reason,
                dwellSeconds: dwell.map { ($0 * 10).rounded() / 10 }, region: region))
        counters.events[type.rawValue, default: 0] += 1
    }

    /// Two decimals, for reasons (non-negative values: probabilities and seconds).
    func rounded(_ value: Double) -> String {
        let hundredths = Int((value * 100).rounded())
        return "\(hundredths / 100).\(hundredths % 100 < 10 ? "0" : "")\(hundredths % 100)"
    }
}
