import BeaconModel

#if canImport(Glibc)
    import Glibc
#endif

/// The hub's zone engine: sightings in, enter / exit / stayed / suspect events out. Pure and synchronous, with the
/// clock passed in — the same code runs live and in `beacon-hub replay`, and tests drive it with exact times.
///
/// Per (tag, gateway) a robust RSSI filter; per tag an HMM forward filter over the venue's zones and "no zone",
/// whose transitions follow the doors and whose emissions compare the smoothed levels with each zone's expected
/// levels (geometry, or a calibration), marginalising the tag's unknown power offset. A zone is reported only once
/// it has stayed the most likely, with `enterProbability`, for `confirmSeconds`; a tag unheard for `absenceSeconds`
/// exits. docs/inference.md explains the model and every setting.
public struct ZoneEngine: Sendable {
    /// What became of one sighting.
    public enum Ingest: Sendable, Hashable {
        case applied
        /// Older than the newest sighting by more than the reorder window: keep it for storage, but it changes
        /// nothing already decided.
        case late
        /// No configured tag or region names the beacon.
        case untracked
        /// The gateway is not in the venue.
        case unknownGateway
    }

    /// Counts since the engine started.
    public struct Counters: Sendable, Hashable, Codable {
        public var applied = 0
        public var late = 0
        public var untracked = 0
        public var unknownGateway = 0
        public var events: [String: Int] = [:]
    }

    public internal(set) var model: VenueModel
    public let settings: InferenceSettings
    /// The venue file the engine was made from, kept to fold in what is learned later: its grid, and its gateways
    /// where the file puts them.
    public let venueFile: Venue
    /// Where the gateways stand: the venue file with the calibration's placements (`Calibration.placements`).
    public internal(set) var venue: Venue
    public internal(set) var calibration: Calibration?
    /// What the gateways' links taught (`apply(_:)`); empty until then.
    public internal(set) var learned = LearnedRadio()
    public let directory: TagDirectory
    public internal(set) var counters = Counters()
    /// The engine's clock: the latest time passed to `advance(to:)`.
    public private(set) var now = -Double.infinity
    /// The first time passed to `advance(to:)`: when the engine began tracking (the `since` of a tag never heard).
    public private(set) var startedAt = -Double.infinity
    /// The newest scan time ingested.
    public private(set) var newest = -Double.infinity

    var tracks: [TagTrack] = []
    var trackByBeacon: [String: Int] = [:]
    var trackByTag: [TagID: Int] = [:]
    var dirty: [Int] = []
    /// Tracks changed or heard since the last `takeTouched()`.
    var touched: [Int] = []
    /// Zone changes since the last `takeMoves()`, kept only while `recordsMoves` is set.
    var moves: [ZoneMove] = []
    /// Whether zone changes are kept for `takeMoves()` (the hub's history); off by default, so that an engine
    /// nobody drains does not grow.
    public var recordsMoves = false
    /// Gateways reported offline (`setGateway(_:online:at:events:)`): their silence is no evidence.
    var gatewayOffline: [Bool]
    /// Each gateway's latest sign of life: its newest sighting (of any beacon), or `noteAlive`.
    var gatewayLastAlive: [Double]
    /// Per gateway, how long its own silence may stand for a tag's silence (0: never; replay). The live hub sets
    /// it a little above the gateway's heartbeat timeout, so a Pi that loses power makes its tags unknown, not exited.
    var gatewaySilenceGrace: [Double]
    var lastTick = -Double.infinity
    /// Earliest absence or stayed deadline among tracked tags.
    var nextDeadline = Double.infinity
    /// Gateway pairs far enough apart (and in zones without a door between them) that hearing a tag strongly at
    /// both at once means two transmitters.
    var distantPairs: [Bool]
    // Scratch buffers, reused by every step.
    var logLikelihood: [Double]
    var heardMask: [Bool]
    var heard: [(gateway: Int, level: Double)] = []
    var scratchPosterior: [Float]
    /// `position`: the maps, what they learned, and the buffers every tag's update reuses.
    var position: PositionState

    public init(
        venue: Venue, settings: InferenceSettings, directory: TagDirectory, calibration: Calibration? = nil
    ) {
        self.init(
            model: VenueModel(
                venue: venue.placed(by: calibration?.placements), settings: settings, calibration: calibration),
            venue: venue, settings: settings, directory: directory, calibration: calibration)
    }

    init(
        model: VenueModel, venue: Venue, settings: InferenceSettings, directory: TagDirectory,
        calibration: Calibration? = nil
    ) {
        self.model = model
        self.settings = settings
        self.directory = directory
        venueFile = venue
        let placed = venue.placed(by: calibration?.placements)
        self.venue = placed
        self.calibration = calibration
        let count = model.gateways.count
        distantPairs = Self.distantPairs(venue: placed, model: model, settings: settings)
        position =
            settings.method == .position
            ? PositionState(venue: venue, model: model, settings: settings, calibration: calibration)
            : PositionState()
        logLikelihood = [Double](repeating: 0, count: model.zones.count + 1)
        scratchPosterior = [Float](repeating: 0, count: model.zones.count + 1)
        heardMask = [Bool](repeating: false, count: count)
        gatewayOffline = [Bool](repeating: false, count: count)
        gatewayLastAlive = [Double](repeating: -.infinity, count: count)
        gatewaySilenceGrace = [Double](repeating: 0, count: count)
        // Named tags exist from the start, so a state query can say "unknown" for one never heard.
        for named in directory.named.sorted(by: { $0.key < $1.key }) { _ = track(for: named.key) }
    }

    static func distantPairs(venue: Venue, model: VenueModel, settings: InferenceSettings) -> [Bool] {
        let count = model.gateways.count
        var distant = [Bool](repeating: false, count: count * count)
        for a in 0..<count {
            for b in 0..<count where a != b {
                let apart = venue.gateways[a].position.distance(to: venue.gateways[b].position)
                let zoneA = model.gatewayZone[a]
                let zoneB = model.gatewayZone[b]
                let joined = zoneA != nil && zoneB != nil && (zoneA == zoneB || model.adjacent(zoneA!, zoneB!))
                distant[a * count + b] = apart >= settings.cloneDistanceMetres && !joined
            }
        }
        return distant
    }

    // MARK: Input

    /// Applies one sighting. Call `advance(to:)` with the sighting's time first so that decisions due before it are
    /// taken on what was known then.
    @discardableResult
    public mutating func ingest(_ sighting: SightingLine) -> Ingest {
        guard let gateway = model.gatewayIndex[sighting.gateway] else {
            counters.unknownGateway += 1
            return .unknownGateway
        }
        gatewayLastAlive[gateway] = max(gatewayLastAlive[gateway], sighting.t)
        if sighting.t < newest - settings.reorderWindowSeconds {
            counters.late += 1
            return .late
        }
        guard let index = track(for: sighting.beacon) else {
            counters.untracked += 1
            return .untracked
        }
        newest = max(newest, sighting.t)
        counters.applied += 1
        if !position.floorCounts.isEmpty {
            let bin = min(max(sighting.rssi - PositionState.floorLowest, 0), PositionState.floorBins - 1)
            position.floorCounts[gateway * PositionState.floorBins + bin] += 1
        }
        // In place: a copy of the track out of the array and back costs a retain and release of each of its buffers
        // per sighting: a third of the engine's ingest time (perf, `beacon-bench hub`).
        let newlyDirty = Self.apply(
            sighting, gateway: Int32(gateway), to: &tracks[index], settings: settings, noZone: model.noZone)
        if newlyDirty { dirty.append(index) }
        markTouched(index)
        return .applied
    }

    /// One sighting's changes to its tag's track; true when the track became dirty (needs an update at the next tick).
    static func apply(
        _ sighting: SightingLine, gateway: Int32, to track: inout TagTrack, settings: InferenceSettings, noZone: Int
    ) -> Bool {
        let resetAfter = staleSeconds(interval: track.interval, settings: settings) * 2
        let robust = settings.method == .hmm
        var linkGap: Double?
        track.withReading(gateway: gateway) { reading in
            if var filter = reading {
                linkGap = sighting.t - filter.lastSeen
                filter.add(
                    Double(sighting.rssi), at: sighting.t, tau: settings.smoothingSeconds, resetAfter: resetAfter,
                    robust: robust)
                reading = filter
            } else {
                reading = RSSIFilter(gateway: gateway, rssi: Double(sighting.rssi), at: sighting.t)
            }
        }
        if settings.method == .position {
            if let linkGap { track.noteGap(linkGap) }
            track.pending.append(PendingReading(gateway: gateway, rssi: Int16(clamping: sighting.rssi)))
        }
        if let txPower = sighting.txPower { track.txPower = Double(txPower) }
        let gap = sighting.t - track.lastAdvertisement
        if gap > 0.05 {
            if track.lastAdvertisement > -Double.infinity {
                track.interval = track.interval == 0 ? gap : track.interval + 0.1 * (min(gap, 120) - track.interval)
            }
            track.lastAdvertisement = sighting.t
        }
        track.lastHeard = max(track.lastHeard, sighting.t)
        if !track.everHeard && track.state == noZone {
            // Known from now on, and outside every zone until a zone is decided.
            track.since = sighting.t
        }
        track.everHeard = true
        guard !track.dirty else { return false }
        track.dirty = true
        return true
    }

    /// The usual way in: moves the clock to the sighting's time (taking the decisions due before it), then applies it.
    @discardableResult
    public mutating func ingest(_ sighting: SightingLine, events: inout [ZoneEvent]) -> Ingest {
        advance(to: sighting.t, events: &events)
        return ingest(sighting)
    }

    /// Moves the clock to `t`, updating every tag heard since the last update and taking the decisions (absence
    /// exits, stayed) that fall due. Events come out in time order.
    public mutating func advance(to t: Double, events: inout [ZoneEvent]) {
        guard t > now else { return }
        if now == -.infinity { startedAt = t }
        now = t
        if lastTick == -.infinity { lastTick = t }
        while lastTick + settings.tickSeconds <= t {
            lastTick += settings.tickSeconds
            // Skip quiet stretches in one go: nothing changes until the next sighting or deadline.
            if dirty.isEmpty && nextDeadline > t {
                lastTick += ((t - lastTick) / settings.tickSeconds).rounded(.down) * settings.tickSeconds
                break
            }
            tick(at: lastTick, events: &events)
        }
    }

    // MARK: Queries

    /// Where a tag is, in CoreLocation's terms for one zone: inside, outside, or unknown (never heard).
    public func presence(of tag: TagID, in zone: ZoneID) -> PresenceState {
        guard let index = trackByTag[tag], tracks[index].everHeard, !tracks[index].unknown else { return .unknown }
        return model.zones.firstIndex(of: zone) == tracks[index].state ? .inside : .outside
    }

    /// A region's state for a zone (nil: anywhere in the venue): inside when one of its tags is, unknown when none
    /// is and some were never heard, outside otherwise.
    public func presence(ofRegion region: String, in zone: ZoneID?) -> PresenceState {
        guard let regionIndex = directory.regions.firstIndex(where: { $0.id == region }) else { return .unknown }
        let target = zone.flatMap { model.zones.firstIndex(of: $0) }
        if zone != nil && target == nil { return .unknown }
        var anyUnknown = false
        var anyMember = false
        for track in tracks where track.region == regionIndex {
            anyMember = true
            if !track.everHeard || track.unknown {
                anyUnknown = true
            } else if let target, track.state == target {
                return .inside
            } else if target == nil && track.state != model.noZone {
                return .inside
            }
        }
        return anyUnknown || !anyMember ? .unknown : .outside
    }

    /// A tag's reported state and zone, as `tagState` gives them, without building the gateway readings.
    public func reportedState(_ tag: TagID) -> (state: TagState.State, zone: ZoneID?)? {
        guard let index = trackByTag[tag] else { return nil }
        let track = tracks[index]
        let inside = track.state != model.noZone
        return (
            !track.everHeard || track.unknown ? .unknown : inside ? .inside : .outside,
            inside ? model.zones[track.state] : nil
        )
    }

    /// The retained state of a tag (docs/mqtt.md, "Tag state"); nil for a tag the engine has not met.
    public func tagState(_ tag: TagID) -> TagState? {
        guard let index = trackByTag[tag], let summary = reportedState(tag) else { return nil }
        let track = tracks[index]
        let stale = staleFor(track)
        // Without an advertised power a distance needs a calibration (its offsets carry the walk tag's power);
        // otherwise it is absent, as the contract says, and proximity unknown.
        let power = track.txPower ?? (model.calibrated ? model.referencePower : nil)
        let readings = track.readings.filter { now - $0.lastSeen <= stale }.map { reading in
            let level = Double(reading.level)
            let distance = Ranging.distance(
                rssi: level - model.gatewayOffset[Int(reading.gateway)], measuredPower: power,
                pathLossExponent: settings.pathLossExponent)
            return TagState.GatewayReading(
                gateway: model.gateways[Int(reading.gateway)], rssi: Int(level.rounded()), distance: distance,
                proximity: Ranging.proximity(distance: distance), lastSeen: reading.lastSeen)
        }
        return TagState(
            tag: track.tag, beacon: track.beacon, state: summary.state, zone: summary.zone,
            since: track.since.isFinite ? track.since : startedAt.isFinite ? startedAt : max(now, 0),
            confidence: track.confidence,
            lastSeen: track.everHeard ? track.lastHeard : nil, gateways: readings,
            position: estimatedPosition(track))
    }

    /// Where `method: position` puts a tag inside its reported zone: the mean of its belief there, to centimetres.
    func estimatedPosition(_ track: TagTrack) -> TagState.Position? {
        guard settings.method == .position, !position.maps.isEmpty, track.state != model.noZone,
            let estimate = track.belief.estimate(in: track.state, grid: position.maps[position.choice].grid)
        else { return nil }
        let centimetres = { (value: Double) in (value * 100).rounded() / 100 }
        return TagState.Position(
            x: centimetres(estimate.x), y: centimetres(estimate.y), radius: centimetres(estimate.radius))
    }

    /// Every tag met so far.
    public var tags: [TagID] { tracks.map(\.tag) }

    /// The tag a beacon is tracked as, once it has been heard (or named).
    public func tag(ofBeacon beacon: String) -> TagID? { trackByBeacon[beacon].map { tracks[$0].tag } }

    /// The id of the region a tracked tag belongs to, if any.
    public func region(of tag: TagID) -> String? {
        trackByTag[tag].flatMap { tracks[$0].region }.map { directory.regions[$0].id }
    }

    /// The tags heard, moved or otherwise changed since the last call: the ones whose retained state may need
    /// publishing.
    public mutating func takeTouched() -> [TagID] {
        defer { touched.removeAll(keepingCapacity: true) }
        return touched.map { index in
            tracks[index].touched = false
            return tracks[index].tag
        }
    }

    /// The zone changes decided since the last call, in order (only while `recordsMoves` is set).
    public mutating func takeMoves() -> [ZoneMove] {
        // Called after every batch: most find nothing, and handing out the buffer would make the next append copy it.
        guard !moves.isEmpty else { return [] }
        defer { moves.removeAll(keepingCapacity: true) }
        return moves
    }

    mutating func markTouched(_ index: Int) {
        guard !tracks[index].touched else { return }
        tracks[index].touched = true
        touched.append(index)
    }

    // MARK: Tracks

    mutating func track(for beacon: String) -> Int? {
        if let index = trackByBeacon[beacon] { return index }
        guard let entry = directory.entry(for: beacon) else { return nil }
        let index = tracks.count
        tracks.append(
            TagTrack(
                tag: entry.tag, beacon: beacon, region: entry.region, stateCount: model.zones.count + 1,
                noZone: model.noZone, posterior: settings.method == .hmm))
        trackByBeacon[beacon] = index
        trackByTag[entry.tag] = index
        return index
    }

    func staleFor(_ track: TagTrack) -> Double { Self.staleSeconds(interval: track.interval, settings: settings) }
    /// How long a tag's readings stay current: `staleSeconds`, or three of its advertising intervals if longer.
    static func staleSeconds(interval: Double, settings: InferenceSettings) -> Double {
        max(settings.staleSeconds, 3 * interval)
    }
    func absenceFor(_ track: TagTrack) -> Double { max(settings.absenceSeconds, 4 * track.interval) }
    func stayedFor(_ track: TagTrack) -> Double? {
        guard let region = track.region else { return settings.stayedSeconds }
        return directory.regions[region].stayedSeconds
    }
}

/// CoreLocation's region states (requestState / didDetermineState).
public enum PresenceState: String, Sendable, Hashable, Codable {
    case inside, outside, unknown
}

extension TagTrack {
    /// Takes the gap between two sightings of one gateway into `linkInterval`: it falls fast and rises slowly, so
    /// it settles near the low tenth of the gaps (lost adverts make longer gaps, never shorter ones).
    mutating func noteGap(_ gap: Double) {
        guard gap > 0.02, gap < 120 else { return }
        if linkInterval == 0 {
            linkInterval = gap
        } else {
            linkInterval += (gap < linkInterval ? 0.25 : 0.03) * (gap - linkInterval)
        }
    }

    /// Finds the gateway's filter (adding one when `body` creates it).
    mutating func withReading(gateway: Int32, _ body: (inout RSSIFilter?) -> Void) {
        if let position = readings.firstIndex(where: { $0.gateway == gateway }) {
            var reading: RSSIFilter? = readings[position]
            body(&reading)
            if let reading { readings[position] = reading }
        } else {
            var reading: RSSIFilter? = nil
            body(&reading)
            if let reading { readings.append(reading) }
        }
    }
}
