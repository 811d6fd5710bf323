import BeaconModel

extension ZoneEngine {
    /// Whether the gateway is taken as online (every gateway is, until reported otherwise).
    public func isOnline(_ gateway: GatewayID) -> Bool {
        guard let index = model.gatewayIndex[gateway] else { return false }
        return !gatewayOffline[index]
    }

    /// A gateway went offline or came back (its status, or its silence past the heartbeat timeout, as the hub sees
    /// it). Offline: a tag in a zone that was last heard only by offline gateways becomes `unknown` — its zone is
    /// kept, no exit is decided — and the gateway's silence stops counting against the zones it covers. Back: such
    /// tags get a fresh absence period, so they return to their zone with no new enter once heard again, and exit
    /// only if the gateway does not hear them.
    public mutating func setGateway(_ gateway: GatewayID, online: Bool, at t: Double, events: inout [ZoneEvent]) {
        guard let g = model.gatewayIndex[gateway], gatewayOffline[g] == online else { return }
        gatewayOffline[g] = !online
        for index in tracks.indices where tracks[index].state != model.noZone {
            if online {
                guard tracks[index].unknown, tracks[index].readings.contains(where: { Int($0.gateway) == g }) else {
                    continue
                }
                tracks[index].resumeAt = max(tracks[index].resumeAt, t)
                nextDeadline = min(nextDeadline, t + absenceFor(tracks[index]))
            } else if !tracks[index].unknown && lastHeardOnlyOffline(index) {
                becomeUnknown(index, at: t, events: &events)
            }
        }
    }

    /// A sign of life from a gateway other than a sighting (its status heartbeat), at `t`.
    public mutating func noteAlive(_ gateway: GatewayID, at t: Double) {
        guard let g = model.gatewayIndex[gateway] else { return }
        gatewayLastAlive[g] = max(gatewayLastAlive[g], t)
    }

    /// How long the gateway's own silence is taken for "cannot tell" rather than "the tag left": a tag last heard
    /// only by gateways that fell silent with it does not exit until the grace has passed — by then the hub has
    /// declared the gateway offline (the tag becomes unknown) or heard from it again. 0 turns it off (replay).
    public mutating func setSilenceGrace(_ gateway: GatewayID, seconds: Double) {
        guard let g = model.gatewayIndex[gateway] else { return }
        gatewaySilenceGrace[g] = max(seconds, 0)
    }

    /// True while every gateway that heard the tag last has itself been silent since, within its grace.
    func lastHeardOnlyBySilent(_ index: Int, at t: Double) -> Bool {
        let track = tracks[index]
        let since = track.lastHeard - staleFor(track)
        var any = false
        for reading in track.readings where reading.lastSeen >= since {
            let g = Int(reading.gateway)
            let quiet = gatewayLastAlive[g] <= track.lastHeard + settings.staleSeconds
            guard quiet, t - gatewayLastAlive[g] < gatewaySilenceGrace[g] else { return false }
            any = true
        }
        return any
    }

    /// True when every gateway that heard the tag last (within its stale time of the last sighting) is offline.
    func lastHeardOnlyOffline(_ index: Int) -> Bool {
        let track = tracks[index]
        let since = track.lastHeard - staleFor(track)
        var any = false
        for reading in track.readings where reading.lastSeen >= since {
            if !gatewayOffline[Int(reading.gateway)] { return false }
            any = true
        }
        return any
    }

    mutating func becomeUnknown(_ index: Int, at t: Double, events: inout [ZoneEvent]) {
        let track = tracks[index]
        let since = track.lastHeard - staleFor(track)
        let silent = track.readings.filter { $0.lastSeen >= since }.map { model.gateways[Int($0.gateway)].rawValue }
            .sorted().joined(separator: ", ")
        tracks[index].unknown = true
        tracks[index].candidate = -1
        markTouched(index)
        emit(
            .unknown, index, zone: model.zones[track.state], previous: nil, at: t, confidence: track.confidence,
            reason: "last heard only by \(silent), now offline; not an exit", dwell: nil, events: &events)
    }

    /// Starts a restored tag's position belief where it was, as the HMM's posterior starts in its zone: on the cells
    /// of `zone` within the radius of the previous hub's estimate (`position`, at least `restoreRadius`), else on the
    /// whole zone. A belief started from the first readings alone (a few gateways' batches, just after a restart or a
    /// takeover) put tags in the next room; one spread over the zone drifted through its doors on readings the one
    /// that had followed the tag in did not.
    mutating func seedBelief(_ track: inout TagTrack, zone: Int, around estimate: TagState.Position?) {
        guard !position.maps.isEmpty else { return }
        let grid = position.maps[position.choice].grid
        var inZone: [Int32] = []
        var near: [Int32] = []
        let radius = max(estimate?.radius ?? 0, Self.restoreRadius)
        for c in 0..<grid.count where grid.zoneOfCell[c] == Int32(zone) {
            inZone.append(Int32(c))
            guard let estimate else { continue }
            let centre = grid.centre(c)
            let (dx, dy) = (centre.x - estimate.x, centre.y - estimate.y)
            if dx * dx + dy * dy <= radius * radius {
                near.append(Int32(c))
            }
        }
        let cells = near.isEmpty ? inZone : near
        if !cells.isEmpty { track.belief.spread(over: cells) }
    }

    /// The least radius (metres) a restored belief is spread over around the previous hub's estimate.
    static let restoreRadius = 0.75

    /// Takes a tag's state as a previous hub published it (its retained tag state), so that a restarted or standby
    /// hub carries on without a second enter. Ignored for a tag already heard (but a tag restored and
    /// not updated since takes the state's position), or one no tag or region names.
    /// Absence is counted from `t`.
    ///
    /// With `reportingMove` (a state the history does not hold: another hub's, or one from before the database) and
    /// `recordsMoves` set, the move into its zone at `state.since` is reported, so that the history opens the visit
    /// the state stands for — no event is emitted, the previous hub did that.
    public mutating func restore(_ state: TagState, at t: Double, reportingMove: Bool = false) {
        guard let index = track(for: state.beacon), tracks[index].tag == state.tag else { return }
        let zone = state.zone.flatMap { model.zones.firstIndex(of: $0) }
        if tracks[index].everHeard {
            // Restored already (from the database, which keeps no position) and not updated since: the retained
            // state's position says where in its zone the previous hub had it.
            if tracks[index].lastStep == -.infinity, let zone, zone == tracks[index].state,
                let position = state.position
            {
                var track = tracks[index]
                seedBelief(&track, zone: zone, around: position)
                track.restoredAt = t
                tracks[index] = track
            }
            return
        }
        guard state.state != .outside, let zone else { return }
        var track = tracks[index]
        track.state = zone
        track.since = state.since
        track.confidence = state.confidence
        track.everHeard = true
        track.unknown = state.state == .unknown
        track.lastHeard = state.lastSeen ?? t
        track.resumeAt = t
        track.restoredAt = t
        track.lastConfident = t
        if !track.posterior.isEmpty {
            let others = Float(0.1) / Float(model.noZone)
            track.posterior = [Float](repeating: others, count: model.noZone + 1)
            track.posterior[zone] = 0.9
        }
        seedBelief(&track, zone: zone, around: state.position)
        if let stayed = stayedFor(track), t - state.since >= stayed { track.stayedReported = true }
        tracks[index] = track
        if reportingMove && recordsMoves {
            moves.append(
                ZoneMove(
                    tag: track.tag, beacon: track.beacon, region: track.region.map { directory.regions[$0].id },
                    from: nil, to: model.zones[zone], t: state.since,
                    confidence: (min(max(state.confidence, 0), 1) * 1000).rounded() / 1000))
        }
        nextDeadline = min(nextDeadline, t + absenceFor(track))
        if let stayed = stayedFor(track), !track.stayedReported {
            nextDeadline = min(nextDeadline, state.since + stayed)
        }
        markTouched(index)
    }
}
