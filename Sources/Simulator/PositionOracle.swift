import BeaconModel
import ZoneInference

#if canImport(Glibc)
    import Glibc
#endif

/// The practical limit of zone inference on a simulated run: a Bayes filter over each tag's position on a grid of
/// 0.5 m cells (1 m in large venues), given the simulator's own mean level of every gateway at every cell and its
/// noise model, with walking only through doors, deciding by the hub's rule (a zone leads with `enterProbability`
/// for `confirmSeconds`, checked every `tickSeconds`; unheard for `absenceSeconds` is no zone).
///
/// With `.nominal` the same filter knows only the propagation law (reference power, exponent or two slopes, walls),
/// not the shadowing field, the gateways' gains and antennas nor the tags' powers; their spreads count as extra
/// noise. With `.unshadowed` it knows all but the shadowing field: roughly what a calibration that measured every
/// gateway's gain, antenna and wall exactly, but not the field between the places it walked, could reach (taking the
/// static field for per-packet noise, it grows too sure of a tag heard for long). Approximations, all: slow fading and
/// body loss are treated as independent per packet (they last seconds), long silences are walked for at most
/// `maxDiffusionTicks` ticks, and the hub's walking-speed check is not applied. Interference bursts and the gateways'
/// clocks are unknown to all: noise.
public struct PositionOracle: Sendable {
    /// What the filter knows of the radio.
    public enum Knowledge: String, Sendable, Hashable, CaseIterable {
        /// The run's exact mean levels: shadowing, gateway gains and each tag's true power.
        case exact
        /// The propagation law only: `p0 − 10·n·log10(d) − walls`, with the venue's two slopes if it has them.
        case nominal
        /// The run's mean levels without the static shadowing: the law, the walls' true losses, the gateways' gains and
        /// antennas, each tag's true power; the shadowing's spread counts as extra noise.
        case unshadowed
    }

    let map: PositionOracleMap
    var tracks: [PositionOracleTrack]
    let trackByBeacon: [String: Int]
    let gatewayIndex: [GatewayID: Int]
    /// Each gateway's clock offset (the run's), in the venue's order, and how far apart the offset-free times of one
    /// advertisement's sightings can be: only to tell which sightings belong to one advertisement.
    let clockOffsets: [Double]
    let sameAdvertisement: Double
    let zones: [ZoneID]
    let settings: InferenceSettings
    /// Share of a cell's mass that stays put each tick (carriers dwell far longer than they walk).
    let stay: Float
    /// Longest walk simulated across a silence, in ticks: beyond it the belief walks no further (the reseed finds a
    /// tag that went further).
    static let maxDiffusionTicks = 40
    /// The reseed that finds a lost tag again (`PositionOracleTrack.observe`): once the cells near an advertisement's
    /// loudest gateway (where its mean level is at most `reseedMarginDB` below the reading; every k-th, at most
    /// `reseedCells`) have explained the readings better than every cell of the belief, by more than
    /// `reseedLeadNats` an advertisement, for `reseedAfterSeconds`, each advertisement gives them `reseedShare` of the
    /// belief until the belief explains the readings again. Chosen on training seeds 1–60: see docs/simulator.md.
    static let reseedShare: Float = 1e-3
    static let reseedMarginDB: Float = 10
    static let reseedCells = 500
    static let reseedLeadNats: Float = 3
    static let reseedAfterSeconds = 10.0
    /// The check (and the reseed) is made for at most one advertisement of a tag in this many seconds: weighing every
    /// advertisement at up to `reseedCells` more cells made the three filters of a test venue with fast tags 1.45
    /// times as slow, this 1.25 times, scoring within 0.02 points on each of training seeds 1–60 (2 s: 1.2 times, but
    /// seed 32 lost 2.8 points).
    static let reseedCheckSeconds = 0.5

    /// A filter for every tag of a run; `radio` and `tags` must be the run's (`VenueSimulation.radio`, `.tags`).
    public init(
        venue: Venue, radio: RadioModel, tags: [SimulatedTag], knowledge: Knowledge,
        settings: InferenceSettings = InferenceSettings(), stay: Double = 0.3
    ) {
        let grid = FloorGrid(venue: venue, reach: settings.maxWalkingSpeed * settings.tickSeconds)
        let count = grid.count
        var means = [Float](repeating: 0, count: venue.gateways.count * count)
        let law = venue.radio
        for (g, gateway) in venue.gateways.enumerated() {
            for c in 0..<count {
                let point = grid.centre(c)
                switch knowledge {
                case .exact, .unshadowed:
                    means[g * count + c] = Float(
                        radio.meanRSSI(
                            tagP0: 0, at: point, gateway: gateway.id, bodyFactor: 0, shadowed: knowledge == .exact)
                            ?? -200)
                case .nominal:
                    let dx = point.x - gateway.position.x
                    let dy = point.y - gateway.position.y
                    let dz = gateway.height - RadioModel.tagHeight
                    let distance = max(0.1, (dx * dx + dy * dy + dz * dz).squareRoot())
                    means[g * count + c] = Float(
                        law.p0 - radio.pathLoss(distance: distance) - radio.wallLoss(from: point, to: gateway.position))
                }
            }
        }
        // Model error the filter must expect: within a cell the level varies (about 1 dB); the nominal model also
        // misses the shadowing, the gateway's gain and the tag's power (uniform ± spread: variance spread²/3); the
        // unshadowed map the shadowing alone.
        var extra = 1.0
        switch knowledge {
        case .exact:
            break
        case .nominal:
            extra +=
                law.shadowingSigma * law.shadowingSigma + law.gatewayGainSigma * law.gatewayGainSigma
                + law.p0Spread * law.p0Spread / 3
        case .unshadowed:
            extra += law.shadowingSigma * law.shadowingSigma
        }
        let map = PositionOracleMap(
            grid: grid, means: means, gatewayCount: venue.gateways.count, sensitivity: Float(law.sensitivity),
            walkingNoise: ReadingNoise(radio: law, extraVariance: extra, walking: true),
            stillNoise: ReadingNoise(radio: law, extraVariance: extra, walking: false))
        tracks = tags.map { tag in
            PositionOracleTrack(
                tag: tag, power: knowledge == .nominal ? 0 : tag.p0,
                absence: max(settings.absenceSeconds, 4 * tag.interval), map: map)
        }
        self.map = map
        trackByBeacon = Dictionary(tags.enumerated().map { ($1.beacon, $0) }, uniquingKeysWith: { first, _ in first })
        gatewayIndex = Dictionary(uniqueKeysWithValues: venue.gateways.enumerated().map { ($1.id, $0) })
        clockOffsets = venue.gateways.map { radio.clockOffsets[$0.id] ?? 0 }
        sameAdvertisement = law.clockJitterSeconds + 1e-4
        zones = venue.zones.map(\.id)
        self.settings = settings
        self.stay = Float(stay)
    }

    /// Cells in the grid, and their side in metres.
    public var cells: (count: Int, size: Double) { (map.grid.count, map.grid.cellSize) }

    /// The most cells any tag's belief visits: never more than the grid holds (a cell listed twice once doubled the
    /// list every tick, 24 GB in ten simulated minutes).
    public var largestBelief: Int { tracks.map(\.active.count).max() ?? 0 }

    /// Takes one sighting, in the order the simulator makes them, appending the decisions it makes due.
    public mutating func ingest(_ sighting: SightingLine, events: inout [ZoneEvent]) {
        guard let index = trackByBeacon[sighting.beacon], let gateway = gatewayIndex[sighting.gateway] else { return }
        let tick = settings.tickSeconds
        var track = take(index)
        // An advertisement's sightings come one after another, gateways in the venue's order, each stamped by its
        // gateway's clock; taking the clock offsets off tells them from the next advertisement's (bookkeeping only).
        // The filter goes by the first one's scan time as stamped, and like the hub never back in time.
        let sent = sighting.t - clockOffsets[gateway]
        let joins =
            track.group.last.map { gateway > $0.gateway && abs(sent - track.groupTime) <= sameAdvertisement } ?? false
        if !joins {
            flush(&track)
            track.groupTime = sent
            track.groupStamp = max(sighting.t, track.lastHeard)
        }
        let t = track.groupStamp
        let decidingTick = ((t / tick).rounded(.down) + 1) * tick
        if let pending = track.pendingTick, decidingTick > pending {
            decide(&track, at: pending, events: &events)
        }
        if track.state != map.grid.zoneCount {
            let exitAt = ((track.lastHeard + track.absence) / tick).rounded(.up) * tick
            if exitAt <= decidingTick - tick { move(&track, to: map.grid.zoneCount, at: exitAt, events: &events) }
        }
        if track.pendingTick == nil {
            if let predicted = track.predictedTick {
                let ticks = Int(((decidingTick - predicted) / tick).rounded())
                for _ in 0..<min(ticks, Self.maxDiffusionTicks) {
                    track.diffuse(stay: stay, map: map)
                }
            }
            track.pendingTick = decidingTick
        }
        track.group.append((gateway, sighting.rssi))
        track.lastHeard = t
        tracks[index] = track
    }

    /// Takes the decisions due up to `end` (the end of the run).
    public mutating func finish(at end: Double, events: inout [ZoneEvent]) {
        let tick = settings.tickSeconds
        for index in tracks.indices {
            var track = take(index)
            flush(&track)
            if let pending = track.pendingTick, pending <= end { decide(&track, at: pending, events: &events) }
            if track.state != map.grid.zoneCount {
                let exitAt = ((track.lastHeard + track.absence) / tick).rounded(.up) * tick
                if exitAt <= end { move(&track, to: map.grid.zoneCount, at: exitAt, events: &events) }
            }
            tracks[index] = track
        }
    }

    /// Track `index`, its buffers left to the copy alone (so updating them copies nothing); store it back after.
    private mutating func take(_ index: Int) -> PositionOracleTrack {
        let track = tracks[index]
        tracks[index].probability = []
        tracks[index].scratch = []
        tracks[index].active = []
        tracks[index].nextActive = []
        tracks[index].allMissed = []
        tracks[index].picks = []
        tracks[index].pickLikelihood = []
        return track
    }

    /// Applies the advertisement collected so far.
    private func flush(_ track: inout PositionOracleTrack) {
        guard !track.group.isEmpty else { return }
        track.observe(map: map)
        track.group.removeAll(keepingCapacity: true)
    }

    /// The hub's hysteresis at tick `t` (`InferenceSettings.confirmation`): a leader other than the reported state must
    /// hold `enterProbability` for `confirmSeconds`, or lead the reported state by `leadRatio` for `leadSeconds`.
    private func decide(_ track: inout PositionOracleTrack, at t: Double, events: inout [ZoneEvent]) {
        flush(&track)
        track.predictedTick = t
        track.pendingTick = nil
        let masses = track.zoneMasses(map: map)
        var leader = 0
        for state in masses.indices where masses[state] > masses[leader] { leader = state }
        let probability = masses[leader]
        guard leader != track.state, let needed = settings.confirmation(probability, reported: masses[track.state])
        else {
            track.candidate = -1
            return
        }
        if track.candidate != leader {
            track.candidate = leader
            track.candidateSince = t
        }
        guard t - track.candidateSince >= needed else { return }
        move(&track, to: leader, at: t, confidence: probability, events: &events)
    }

    /// Reports a change of state as the hub does: exit from the old zone, enter into the new one.
    private func move(
        _ track: inout PositionOracleTrack, to state: Int, at t: Double, confidence: Double = 1,
        events: inout [ZoneEvent]
    ) {
        let previous = track.state == map.grid.zoneCount ? nil : zones[track.state]
        let next = state == map.grid.zoneCount ? nil : zones[state]
        let reason = next == nil && confidence == 1 ? "oracle: not heard" : "oracle: position filter"
        let rounded = (min(max(confidence, 0), 1) * 1000).rounded() / 1000
        if let previous {
            events.append(
                ZoneEvent(type: .exit, tag: track.tag, zone: previous, t: t, confidence: rounded, reason: reason))
        }
        if let next {
            events.append(
                ZoneEvent(
                    type: .enter, tag: track.tag, zone: next, previousZone: previous, t: t, confidence: rounded,
                    reason: reason))
        }
        track.state = state
        track.candidate = -1
    }
}
