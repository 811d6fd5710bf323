import BeaconModel
import BeaconStore
import Foundation
import ZoneInference

/// The live hub's state machine: decoded messages and clock ticks in, messages to publish out. Pure and synchronous
/// (time passed in), owned by one task of `Hub`; tests drive it directly.
///
/// It validates and deduplicates batches, re-bases unsynchronised clocks, feeds the zone engine, keeps each
/// gateway's health and acknowledgement, and turns the engine's events and states into the contract's topics.
public struct HubCore: Sendable {
    /// A message to publish, QoS 1.
    public struct Outgoing: Sendable, Hashable {
        public var topic: String
        public var payload: [UInt8]
        public var retain: Bool
        /// What `payload` encodes, for the hub's own consumers; nil for acknowledgements and discovery configs.
        public var value: PublishedValue? = nil

        public init(topic: String, payload: [UInt8], retain: Bool, value: PublishedValue? = nil) {
            self.topic = topic
            self.payload = payload
            self.retain = retain
            self.value = value
        }
    }

    /// Counts since the core started (published in the hub's status).
    public typealias Counters = HubStatus.Ingest

    /// What the hub knows of one gateway.
    public struct GatewayHealth: Sendable, Hashable {
        public var online: Bool
        public var heartbeatSeconds: Double
        /// Last status or batch, on the hub's clock.
        public var lastContact: Double
        /// Whether the gateway speaks the contract (status, batches) and is watched for silence; ESPresense and
        /// OpenMQTTGateway nodes are not.
        public var monitored: Bool
        public var boot: String?
        /// Batches received (deduplication).
        var tracker = AcknowledgementTracker()
        /// Batches committed to the store (what is acknowledged when the hub has one).
        var committed = AcknowledgementTracker()
        var lastStatus: [String?] = []
        var ackDirty = false
        /// Per boot with a sequence gap: seconds waited for it while the gateway was online.
        var gapWaited: [String: Double] = [:]
        /// Per boot, the lowest sequence the agent's outbox still holds, from its latest status
        /// (`outbox.resendFrom`); empty for agents that do not say.
        var holdsFrom: [String: UInt64] = [:]
        /// Per boot with an unsynchronised clock: the offset (hub − gateway) its scan times are re-based by.
        var offsets: [String: Double] = [:]
        /// The gateway's own beacon, as its latest status announced it.
        public var selfBeacon: GatewayStatus.SelfBeacon?
        /// Boots the gateway ended with a clean goodbye (offline, `shutdown`): what still arrives of them (a last
        /// batch overtaken by the goodbye) is data, not a sign of life.
        var endedBoots: Set<String> = []
    }

    /// How the core journals for the history database.
    public struct Persistence: Sendable {
        public var pseudonyms: TagPseudonyms
        public var rawSightings: Bool
        public var maxBacklogBatches: Int

        public init(pseudonyms: TagPseudonyms = .none, rawSightings: Bool = false, maxBacklogBatches: Int = 10_000) {
            self.pseudonyms = pseudonyms
            self.rawSightings = rawSightings
            self.maxBacklogBatches = maxBacklogBatches
        }

        public init(_ settings: HubStoreSettings, pseudonyms: TagPseudonyms) {
            self.init(
                pseudonyms: pseudonyms, rawSightings: settings.rawSightings,
                maxBacklogBatches: settings.maxBacklogBatches)
        }
    }

    public let topics: Topics
    public let settings: HubLiveSettings
    /// `nil`: no database; batches are acknowledged once applied.
    public let persistence: Persistence?
    public internal(set) var engine: ZoneEngine
    /// The calibration walk being recorded (docs/dashboard.md, "The calibration page"), nil when none.
    public internal(set) var calibrationWalk: CalibrationSession?
    public internal(set) var counters = Counters()
    public internal(set) var gateways: [GatewayID: GatewayHealth] = [:]
    /// What the gateways hear of each other's own beacons.
    public internal(set) var links = GatewayLinks()
    /// Each gateway beacon's advertising interval as its receptions show it: for a beacon whose gateway's status
    /// does not give it (a beacon of the venue file's `beacon:` entries that is not the agent's own, an agent that
    /// does not advertise).
    var advertisingIntervals = AdvertisingIntervals()
    /// How late sightings arrive; the engine's clock is held back by it (`holdback`).
    public internal(set) var lag = DeliveryLag()
    /// Tags' batteries, telemetry and last sightings, and their alerts.
    public internal(set) var health: TagHealth
    /// When `health` last looked for missing tags.
    var missingCheckedAt = -Double.infinity
    /// While an active period catches up (`catchUp(from:at:)`): the engine's clock stands still.
    public internal(set) var catchingUp: CatchUp?
    /// When the active period began (`catchUp(from:at:)`): sightings made before it that arrive once the engine decides
    /// are history, not news.
    var periodSince = -Double.infinity
    var published: [TagID: (state: TagState.State, zone: ZoneID?, at: Double)] = [:]
    var pending: Set<TagID> = []
    var inside: [ZoneID: Set<TagID>] = [:]
    var unknownIn: [ZoneID: Set<TagID>] = [:]
    var dirtyZones: Set<ZoneID> = []
    var occupancyChanged: [ZoneID: Double] = [:]
    var alertedAt: [String: Double] = [:]
    var events: [ZoneEvent] = []
    var outgoing: [Outgoing] = []
    var publishing = false
    var journal = HubJournal()
    /// When `watchGaps` last ran: gaps wait by the time elapsed since.
    var gapsCheckedAt: Double?
    var keys: [String: String] = [:]
    /// The database's failures as operators hear of them: since when it fails (nil while commits succeed), whether a
    /// failure alert is out without its `store-recovered`, and when the last failure alert went out.
    var storeFailingSince: Double?
    var storeAlertOpen = false
    var storeAlertedAt: Double?

    /// `now` is the hub's clock when it starts: gateways of the venue are given their heartbeat timeout from then.
    /// With `persistence`, the core journals what to store (`takeJournal()`) and acknowledges only what was
    /// committed (`committed(_:batches:at:)`).
    public init(configuration: HubConfiguration, engine: ZoneEngine, now: Double, persistence: Persistence? = nil) {
        topics = configuration.mqtt.topics(site: configuration.site)
        settings = configuration.live
        health = TagHealth(settings: configuration.tagHealth.settings)
        self.persistence = persistence
        self.engine = engine
        self.engine.recordsMoves = persistence != nil
        if persistence != nil { counters.store = HubStatus.Store() }
        let foreignOnly = configuration.espresense != nil || configuration.openMQTTGateway != nil
        for gateway in engine.model.gateways {
            gateways[gateway] = GatewayHealth(
                online: true, heartbeatSeconds: settings.heartbeatSeconds, lastContact: now, monitored: !foreignOnly)
        }
        for (gateway, beacon) in engine.model.gatewayBeacons { links.announce(beacon, by: gateway) }
        for zone in engine.model.zones { occupancyChanged[zone] = now }
        for gateway in engine.model.gateways { setHeartbeat(gateway, settings.heartbeatSeconds) }
    }

    /// A gateway's heartbeat: offline after 3 × it; until then its silence does not make its tags exit.
    mutating func setHeartbeat(_ gateway: GatewayID, _ seconds: Double) {
        gateways[gateway]?.heartbeatSeconds = seconds
        let monitored = gateways[gateway]?.monitored ?? false
        engine.setSilenceGrace(gateway, seconds: monitored ? 3 * seconds + 5 * settings.tickSeconds + 1 : 0)
    }

    // MARK: Input

    /// Applies one decoded message received at `now` (hub clock).
    public mutating func apply(_ input: HubInput, at now: Double) {
        switch input {
        case .batch(let batch): receive(batch, at: now)
        case .gatewayStatus(let status): receive(status, at: now)
        case .acknowledgement(let ack):
            guard gateways[ack.gateway] != nil else { return }
            for entry in ack.acks {
                gateways[ack.gateway]?.tracker.seed(boot: entry.boot, seq: entry.seq)
                // Batches up to it are in another hub's keeping (or another database's): this database carries on
                // after it, or its acknowledgement would wait for them forever.
                if persistence != nil && gateways[ack.gateway]!.committed.contiguous(boot: entry.boot) < entry.seq {
                    journal.adopted.append(
                        HubJournal.AdoptedAck(
                            gateway: ack.gateway.rawValue, boot: entry.boot, seq: Int64(entry.seq), t: now))
                }
                gateways[ack.gateway]?.committed.seed(boot: entry.boot, seq: entry.seq)
            }
        case .tagState(let state):
            // A retained state of a tag the database did not have inside a zone (another hub's, or from before the
            // database): its visit opens in the history at the state's `since`.
            engine.restore(state, at: now, reportingMove: true)
        case .foreign(let sighting):
            guard gateways[sighting.gateway] != nil else {
                reject(
                    "unknown-gateway", "no gateway \(sighting.gateway) in the venue", gateway: sighting.gateway, at: now
                )
                return
            }
            contact(sighting.gateway, at: now, viaContract: false)
            counters.foreign += 1
            counters.sightings += 1
            // A calibration walk may be heard by ESPresense or OpenMQTTGateway nodes as well.
            if calibrationWalk != nil { calibrationWalk!.add(sighting) }
            ingest(sighting)
            flushEvents()
        case .rejected(let code, let message, let gateway):
            reject(code, message, gateway: gateway, at: now)
        case .ignored:
            break
        }
    }

    mutating func receive(_ batch: SightingBatch, at now: Double) {
        guard gateways[batch.gateway] != nil else {
            reject(
                "unknown-gateway",
                "gateway \(batch.gateway) is not in the venue file: add it (docs/venue.md) or fix the agent's gateway id",
                gateway: batch.gateway, at: now)
            return
        }
        if !gateways[batch.gateway]!.endedBoots.contains(batch.boot) {
            contact(batch.gateway, at: now, viaContract: true)
        }
        if let persistence, counters.store!.backlogBatches >= persistence.maxBacklogBatches,
            gateways[batch.gateway]!.tracker.contiguous(boot: batch.boot) < batch.seq
        {
            // Not recorded as received: the agent keeps it and resends once the database takes writes again.
            reject(
                "store-backlog",
                "\(counters.store!.backlogBatches) batches wait for the database (disk full?): batch refused, the "
                    + "agent resends it later", gateway: batch.gateway, at: now)
            return
        }
        guard gateways[batch.gateway]!.tracker.record(boot: batch.boot, seq: batch.seq) else {
            // A resend: the agent missed the acknowledgement, so say it again.
            counters.duplicates += 1
            gateways[batch.gateway]!.ackDirty = true
            return
        }
        // With a store, the acknowledgement moves when the commit says so.
        if persistence == nil { gateways[batch.gateway]!.ackDirty = true }
        var offset = 0.0
        let newestScan = batch.sightings.lazy.map(\.t).max()
        if batch.clockSynced {
            let newest = max(batch.sent, newestScan ?? batch.sent)
            if newest > now + settings.maxFutureSeconds {
                // Looked at and refused: its ledger row (no sightings) lets the acknowledgement move past it.
                journalBatch(batch, sightings: 0, at: now)
                reject(
                    "future-dated",
                    "batch \(batch.seq) is dated \(Int(newest - now)) s ahead of the hub's clock although the gateway "
                        + "says its clock is synchronised: check NTP on the gateway and the hub",
                    gateway: batch.gateway, at: now)
                alert(
                    "clock-skew", gateway: batch.gateway, at: now,
                    reason: "\(batch.gateway)'s clock is \(Int(newest - now)) s ahead of the hub's; its batches are "
                        + "rejected until NTP fixes it")
                return
            }
        } else {
            // The smallest (arrival − sent) seen is the closest to the clock offset: any delay only adds to it.
            let observed = now - batch.sent
            let known = gateways[batch.gateway]!.offsets[batch.boot]
            offset = min(known ?? observed, observed)
            gateways[batch.gateway]!.offsets[batch.boot] = offset
            if known == nil || abs(offset - known!) > settings.skewAlertSeconds {
                let skew = abs(offset)
                if skew > settings.skewAlertSeconds {
                    alert(
                        "clock-skew", gateway: batch.gateway, at: now,
                        reason: "\(batch.gateway)'s clock is not synchronised and is \(Int(skew.rounded())) s "
                            + (offset > 0 ? "behind" : "ahead of") + " the hub's; scan times re-based on arrival")
                }
            }
            counters.rebased += batch.sightings.count
        }
        counters.batches += 1
        if let newestScan { lag.note(now - (newestScan + offset), at: now) }
        if let newestScan, let since = catchingUp?.since, newestScan + offset >= since {
            catchingUp!.expected.insert(batch.gateway)
            catchingUp!.delivered.insert(batch.gateway)
        }
        journalBatch(batch, sightings: batch.sightings.count, at: now)
        let raw = persistence?.rawSightings ?? false
        var linkSightings = 0
        for sighting in batch.sightings {
            if let tx = links.gateway(advertising: sighting.beacon) {
                // Another gateway's own beacon: a link, not a tag (a gateway hearing itself is left out).
                if tx != batch.gateway {
                    advertisingIntervals.note(tx: tx, rx: batch.gateway, at: sighting.t + offset)
                    links.note(
                        tx: tx, rx: batch.gateway, rssi: sighting.rssi, t: sighting.t + offset,
                        measuredPower: sighting.txPower)
                }
                linkSightings += 1
                continue
            }
            var line = SightingLine(sighting, gateway: batch.gateway)
            line.t += offset
            if calibrationWalk != nil { calibrationWalk!.add(line) }
            // Made before this period began and arriving after its engine started deciding (batches the agents
            // resend once the hub taken over from did not acknowledge them): stored and acknowledged, not judged.
            // Taken as current, ten seconds late, they pulled tags back to where they had been.
            if catchingUp != nil || line.t >= periodSince { ingest(line) }
            if let tag = engine.tag(ofBeacon: line.beacon) {
                health.heard(tag, by: batch.gateway, at: line.t)
                if let tlm = sighting.extras?.tlm, tlm.version == 0 { observe(tlm, of: tag, at: line.t) }
            }
            if raw {
                journal.sightings.append(
                    HubJournal.Sighting(
                        t: line.t, gateway: batch.gateway.rawValue, beaconKey: key(line.beacon), rssi: line.rssi,
                        txPower: line.txPower))
            }
        }
        counters.sightings += batch.sightings.count - linkSightings
        if linkSightings > 0 { counters.gatewayBeacons = (counters.gatewayBeacons ?? 0) + linkSightings }
        flushEvents()
    }

    mutating func journalBatch(_ batch: SightingBatch, sightings: Int, at now: Double) {
        guard persistence != nil else { return }
        journal.batches.append(
            HubJournal.Batch(
                gateway: batch.gateway.rawValue, boot: batch.boot, seq: Int64(batch.seq), received: now,
                sightings: sightings))
        counters.store!.backlogBatches += 1
    }

    /// The id the history tables hold for a raw sighting's beacon (memoised: HMAC per sighting would cost).
    mutating func key(_ id: String) -> String {
        guard let persistence, persistence.pseudonyms.keyID != nil else { return id }
        if let known = keys[id] { return known }
        let value = persistence.pseudonyms.key(for: id)
        keys[id] = value
        return value
    }

    mutating func receive(_ status: GatewayStatus, at now: Double) {
        guard var health = gateways[status.gateway] else {
            reject(
                "unknown-gateway", "status from gateway \(status.gateway), which is not in the venue file",
                gateway: status.gateway, at: now)
            return
        }
        health.monitored = true
        health.boot = status.boot
        if var own = status.selfBeacon {
            own.beacon = own.beacon.lowercased()
            health.selfBeacon = own
            links.announce(own.beacon, by: status.gateway)
        }
        let said = [status.state.rawValue, status.boot]
        if persistence != nil && said != health.lastStatus {
            health.lastStatus = said
            journal.statuses.append(
                HubJournal.GatewayStatus(
                    gateway: status.gateway.rawValue, t: now, state: status.state.rawValue, boot: status.boot,
                    reason: status.reason, source: "gateway"))
        }
        gateways[status.gateway] = health
        if let resendFrom = status.outbox?.resendFrom {
            gateways[status.gateway]!.holdsFrom = resendFrom
            noteResendFrom(resendFrom, of: status.gateway, at: now)
        }
        setHeartbeat(status.gateway, status.heartbeatSeconds.flatMap { $0 > 0 ? $0 : nil } ?? health.heartbeatSeconds)
        switch status.state {
        case .online:
            guard !health.endedBoots.contains(status.boot) else { break }
            catchingUp?.expected.insert(status.gateway)
            contact(status.gateway, at: now, viaContract: true)
            engine.noteAlive(status.gateway, at: now)
        case .offline:
            if status.reason == GatewayStatus.shutdownReason {
                gateways[status.gateway]!.endedBoots.insert(status.boot)
            }
            setOnline(
                status.gateway, false, at: now,
                reason: "\(status.gateway) went offline (\(status.reason ?? "no reason given"))")
        }
    }

    /// A sign of life: the gateway is online (again).
    mutating func contact(_ gateway: GatewayID, at now: Double, viaContract: Bool) {
        gateways[gateway]?.lastContact = now
        if viaContract && gateways[gateway]?.monitored == false {
            gateways[gateway]?.monitored = true
            setHeartbeat(gateway, gateways[gateway]!.heartbeatSeconds)
        }
        if gateways[gateway]?.online == false {
            setOnline(gateway, true, at: now, reason: "\(gateway) is back online")
        }
    }

    mutating func setOnline(_ gateway: GatewayID, _ online: Bool, at now: Double, reason: String) {
        guard gateways[gateway]?.online != online else { return }
        gateways[gateway]?.online = online
        if !online { catchingUp?.expected.remove(gateway) }
        if persistence != nil {
            journal.statuses.append(
                HubJournal.GatewayStatus(
                    gateway: gateway.rawValue, t: now, state: online ? "online" : "offline", boot: nil, reason: reason,
                    source: "hub"))
        }
        engine.setGateway(gateway, online: online, at: now, events: &events)
        events.append(
            ZoneEvent(
                type: .alert, tag: nil,
                zone: engine.model.gatewayZone[engine.model.gatewayIndex[gateway]!].map {
                    engine.model.zones[$0]
                }, t: now, confidence: 1, reason: reason, code: online ? "gateway-online" : "gateway-offline",
                gateway: gateway))
        flushEvents()
    }

    mutating func reject(_ code: String, _ message: String, gateway: GatewayID?, at now: Double) {
        counters.rejected[code, default: 0] += 1
        if code == "unknown-gateway", let gateway {
            alert("unknown-gateway", gateway: gateway, at: now, reason: message)
        }
    }

    /// Raises an alert, at most once per code and gateway in 300 s unless `repeating` (the caller damps it).
    mutating func alert(_ code: String, gateway: GatewayID?, at now: Double, reason: String, repeating: Bool = false) {
        let key = "\(code)/\(gateway?.rawValue ?? "")"
        if !repeating, let last = alertedAt[key], now - last < 300 { return }
        alertedAt[key] = now
        events.append(
            ZoneEvent(
                type: .alert, tag: nil, zone: nil, t: now, confidence: 1, reason: reason, code: code, gateway: gateway))
        flushEvents()
    }

    /// Sightings into the engine: at their time, or while catching up without moving its clock (they wait, in their
    /// tags' tracks, for the first update).
    mutating func ingest(_ sighting: SightingLine) {
        if catchingUp == nil {
            engine.ingest(sighting, events: &events)
        } else {
            _ = engine.ingest(sighting)
        }
    }

    /// An active period that began at `since` (a start, a restart, a takeover) and ingests from `now` on: the running
    /// gateways may have been heard by whoever ran before, and their batches arrive one after another: some at once,
    /// from the broker's keeping or live, others only with the agents' resend. An engine deciding on the first to
    /// come would place tags on a few gateways' readings (a standby taking over moved tags into the next room and
    /// back). So it gathers: for `settleSeconds`, while the gateways' retained statuses come in, and then until every
    /// gateway that said it is online has delivered a batch of sightings made since `since` (or went offline), for
    /// at most `live.catchUpSeconds`; then the engine's first update has them all. A gateway of the venue that says
    /// nothing (not installed, long dead) is not waited for. What was made before `since` and arrives once the engine
    /// decides (resent batches) is stored, not judged.
    public mutating func catchUp(from since: Double, at now: Double) {
        periodSince = since
        guard settings.catchUpSeconds > 0 else { return }
        catchingUp = CatchUp(
            since: since, settled: now + Self.settleSeconds, until: now + settings.catchUpSeconds)
    }

    /// How long a starting period gathers the gateways' statuses before it may decide.
    static let settleSeconds = 1.0

    /// A starting period's wait for its gateways (`catchUp(from:at:)`).
    public struct CatchUp: Sendable, Hashable {
        /// Batches of sightings made from here on count as the present.
        public var since: Double
        /// The engine decides no sooner than this.
        public var settled: Double
        /// The engine decides from here on, whatever still waits.
        public var until: Double
        /// The gateways that said they are online (or sent a batch of the present) in this period.
        public var expected: Set<GatewayID> = []
        /// Those of them that delivered a batch of sightings made since `since`.
        public var delivered: Set<GatewayID> = []
        /// The gateways the engine still waits for.
        public var waiting: Set<GatewayID> { expected.subtracting(delivered) }
    }

    /// Seconds between two looks for missing tags; more often when a `missingAfterSeconds` is short (a quarter of it).
    static let missingCheckSeconds = 60.0

    /// A tag's Eddystone-TLM frame, for its battery and resets (after the engine took the sighting: it knows the tag).
    mutating func observe(_ tlm: Telemetry, of tag: TagID, at t: Double) {
        let reading = TagHealth.Reading(
            t: t, milliVolts: tlm.batteryMilliVolts, temperature: tlm.temperatureCelsius,
            advertisingCount: tlm.advertisingCount, uptime: tlm.secondsSinceBoot)
        for alert in health.observe(reading, of: tag) { tagAlert(alert) }
    }

    /// A tag's health alert: the event contract's `alert`, naming the tag; once per episode (TagHealth
    /// says when).
    mutating func tagAlert(_ alert: TagHealth.Alert) {
        // The retained state says it too (`battery.level`, `missing`): due at once.
        if published[alert.tag] != nil { published[alert.tag]!.at = -.infinity }
        pending.insert(alert.tag)
        events.append(
            ZoneEvent(
                type: .alert, tag: alert.tag, zone: nil, t: alert.t, confidence: 1, reason: alert.reason,
                code: alert.code))
    }

    // MARK: Clock

    /// Moves the engine's clock to `now`, watches gateways for silence and gaps, and queues what changed. Retained
    /// state and acknowledgements are queued only while `connected` (they wait, and go after the reconnect); events
    /// are queued always (libmosquitto keeps QoS 1 messages until delivered).
    public mutating func tick(at now: Double, connected: Bool) {
        // Health first: a gateway found offline makes its tags unknown before absence could make them exit.
        for (gateway, health) in gateways where health.monitored && health.online {
            let timeout = 3 * health.heartbeatSeconds
            if now - health.lastContact > timeout {
                setOnline(
                    gateway, false, at: now,
                    reason:
                        "\(gateway) silent for \(Int(now - health.lastContact)) s (heartbeat \(Int(health.heartbeatSeconds)) s)"
                )
            }
        }
        lag.roll(at: now)
        counters.lagSeconds = (lag.seconds * 10).rounded() / 10
        if let catchUp = catchingUp, now < catchUp.until, now < catchUp.settled || !catchUp.waiting.isEmpty {
            // Gathering: the engine decides once every gateway expected has delivered the present.
        } else {
            catchingUp = nil
            engine.advance(to: now - holdback, events: &events)
            learnFromLinks(at: now - holdback)
        }
        watchGaps(at: now)
        if now - missingCheckedAt >= min(Self.missingCheckSeconds, health.settings.shortestMissingAfter / 4) {
            missingCheckedAt = now
            let named = engine.directory.named.values.map { (tag: $0, region: engine.region(of: $0)) }
            for alert in health.check(at: now, named: named) { tagAlert(alert) }
        }
        // After the states (which note where tags were last heard), whichever way the tick ends.
        defer { if persistence != nil { journalHealth(at: now) } }
        flushEvents()
        guard publishing, connected else { return }
        updateStates(at: now)
        queueAcknowledgements(at: now)
        for zone in dirtyZones.sorted(by: { $0.rawValue < $1.rawValue }) {
            let unknown = unknownIn[zone, default: []].sorted { $0.rawValue < $1.rawValue }
            let occupancy = ZoneOccupancy(
                zone: zone, tags: inside[zone, default: []].sorted { $0.rawValue < $1.rawValue },
                t: occupancyChanged[zone] ?? now, unknown: unknown.isEmpty ? nil : unknown)
            queue(occupancy, to: topics.zoneOccupancy(zone), retain: true)
        }
        dirtyZones.removeAll()
    }

    /// Fits the gateways' links when due and hands the engine what they taught (`inference.linkFitSeconds`).
    mutating func learnFromLinks(at t: Double) {
        guard links.isFitDue(at: t) else { return }
        if let learned = links.fitIfDue(
            at: t, venue: engine.venue, settings: engine.settings, intervals: linkIntervals)
        {
            engine.apply(learned)
        }
        // Once per episode (GatewayLinks says when): not rate-limited as `alert` is.
        let raised = links.takeAlerts()
        guard !raised.isEmpty else { return }
        events += raised.map(\.event)
        flushEvents()
    }

    /// Each gateway beacon's advertising interval as the links' fit takes it, seconds: its gateway's status's where
    /// that gives one, else the one its receptions show (`AdvertisingIntervals`; else the links' default, 0.2 s).
    var linkIntervals: [GatewayID: Double] {
        var intervals = advertisingIntervals.estimates
        for (gateway, health) in gateways {
            if let ms = health.selfBeacon?.intervalMs { intervals[gateway] = ms / 1000 }
        }
        return intervals
    }

    /// How far behind the hub's clock the engine's runs: the delivery lag beyond its first second (a normal batch
    /// arrives a fraction of a second after its sightings, and is judged as before), up to `live.maxLagSeconds`.
    public var holdback: Double { min(settings.maxLagSeconds, max(0, lag.seconds - 1)) }

    /// Acknowledgements of gateways with news: what was committed (with a store), or applied (without).
    mutating func queueAcknowledgements(at now: Double) {
        for (gateway, health) in gateways where health.ackDirty {
            let entries = persistence == nil ? health.tracker.entries : health.committed.entries
            gateways[gateway]!.ackDirty = false
            guard !entries.isEmpty else { continue }
            queue(
                Acknowledgement(gateway: gateway, t: now, acks: entries), to: topics.acknowledgement(gateway),
                retain: true)
        }
    }

    /// Gives up on sequence gaps no resend filled within `live.gapTimeoutSeconds` of the gateway being online: a
    /// gateway cut off from the broker cannot resend, and its outbox may still hold what is missing. A gap the agent
    /// says its outbox still holds (`outbox.resendFrom` at or below it) is never given up: the agent resends it, and
    /// acknowledging past it would make the agent delete a batch the hub never had. (The hub did that in a fresh demo:
    /// a batch sent before the hub's subscription, resent late on a loaded machine, was declared lost after 60 s.)
    mutating func watchGaps(at now: Double) {
        let elapsed = max(0, now - (gapsCheckedAt ?? now))
        gapsCheckedAt = now
        for (gateway, health) in gateways {
            let gaps = health.tracker.gaps
            guard !gaps.isEmpty || !health.gapWaited.isEmpty else { continue }
            let waiting = health.online || !health.monitored
            var waited = health.gapWaited.filter { entry in gaps.contains { $0.boot == entry.key } }
            for gap in gaps {
                if let held = health.holdsFrom[gap.boot], held <= gap.missing {
                    waited[gap.boot] = nil
                    continue
                }
                waited[gap.boot, default: 0] += waiting ? elapsed : 0
                guard waited[gap.boot]! >= settings.gapTimeoutSeconds,
                    let skipped = gateways[gateway]!.tracker.skipGap(boot: gap.boot)
                else { continue }
                waited[gap.boot] = nil
                recordLost(
                    gateway, boot: gap.boot, [skipped], at: now,
                    reason: "\(gateway) never sent batches \(skipped.lowerBound)…\(skipped.upperBound) of boot "
                        + "\(gap.boot) within \(Int(settings.gapTimeoutSeconds)) s online (its outbox dropped them?); "
                        + "acknowledging past them")
            }
            gateways[gateway]!.gapWaited = waited
        }
    }

    /// The agent's outbox holds nothing of these boots below these sequences: what has not arrived below them is lost.
    mutating func noteResendFrom(_ resendFrom: [String: UInt64], of gateway: GatewayID, at now: Double) {
        for (boot, first) in resendFrom.sorted(by: { $0.key < $1.key }) {
            guard gateways[gateway] != nil else { return }
            let skipped = gateways[gateway]!.tracker.skipMissing(boot: boot, below: first)
            guard let low = skipped.first?.lowerBound, let high = skipped.last?.upperBound else { continue }
            gateways[gateway]!.gapWaited[boot] = nil
            let count = skipped.reduce(0) { $0 + $1.count }
            recordLost(
                gateway, boot: boot, skipped, at: now,
                reason: "\(gateway)'s outbox no longer holds \(count) batches between \(low) and \(high) of boot "
                    + "\(boot) that never arrived (dropped when it was full or too old: see its outbox.maxBytes and "
                    + "maxAgeHours); acknowledging past them")
        }
    }

    /// Records sequences given up (counted, journalled as lost, alerted) and lets the acknowledgement move past them.
    mutating func recordLost(
        _ gateway: GatewayID, boot: String, _ ranges: [ClosedRange<UInt64>], at now: Double, reason: String
    ) {
        for range in ranges {
            counters.skippedSequences += range.count
            if persistence != nil {
                journal.lost.append(
                    HubJournal.LostBatches(
                        gateway: gateway.rawValue, boot: boot, first: Int64(range.lowerBound),
                        last: Int64(range.upperBound), t: now))
            }
        }
        gateways[gateway]!.ackDirty = true
        alert("batches-lost", gateway: gateway, at: now, reason: reason)
    }

    /// Publishes the retained states of tags that changed (at once) or were heard (at most every
    /// `tagStateSeconds`), and keeps zone membership.
    mutating func updateStates(at now: Double) {
        pending.formUnion(engine.takeTouched())
        guard !pending.isEmpty else { return }
        var done: [TagID] = []
        for tag in pending {
            // The cheap summary first: most pending tags are heard, unchanged and not yet due.
            guard let summary = engine.reportedState(tag) else {
                done.append(tag)
                continue
            }
            let last = published[tag]
            let changed = last == nil || last!.state != summary.state || last!.zone != summary.zone
            guard changed || now - last!.at >= settings.tagStateSeconds, let state = engine.tagState(tag) else {
                continue
            }
            if changed { move(tag, from: last.map { ($0.state, $0.zone) }, to: (state.state, state.zone), at: now) }
            if let seen = state.lastSeen {
                let loudest = state.gateways.max { $0.rssi < $1.rssi }?.gateway
                for alert in health.seen(
                    tag, region: engine.region(of: tag), zone: state.zone, gateway: loudest, at: seen)
                {
                    tagAlert(alert)
                }
            }
            var decorated = state
            health.decorate(&decorated)
            published[tag] = (state.state, state.zone, now)
            queue(decorated, to: topics.tagState(tag), retain: true)
            done.append(tag)
        }
        for tag in done { pending.remove(tag) }
    }

    mutating func move(
        _ tag: TagID, from old: (TagState.State, ZoneID?)?, to new: (TagState.State, ZoneID?), at now: Double
    ) {
        if let old, let zone = old.1 {
            if old.0 == .inside { inside[zone]?.remove(tag) } else { unknownIn[zone]?.remove(tag) }
            dirtyZones.insert(zone)
            occupancyChanged[zone] = now
        }
        if let zone = new.1 {
            if new.0 == .inside {
                inside[zone, default: []].insert(tag)
            } else {
                unknownIn[zone, default: []].insert(tag)
            }
            dirtyZones.insert(zone)
            occupancyChanged[zone] = now
        }
    }

    // MARK: Output

    /// Starts publishing retained state: every zone's occupancy, and the state of every tag known (restored or heard).
    public mutating func startPublishing() {
        publishing = true
        republishAll()
    }

    /// After a reconnect: acknowledgements, tag states and occupancy again (the broker may have lost them).
    public mutating func republishAll() {
        for gateway in gateways.keys where !gateways[gateway]!.tracker.entries.isEmpty {
            gateways[gateway]!.ackDirty = true
        }
        dirtyZones.formUnion(engine.model.zones)
        pending.formUnion(published.keys)
        pending.formUnion(engine.takeTouched())
        for tag in published.keys { published[tag]!.at = -.infinity }
    }

    /// The messages queued so far, in order; the queue is emptied.
    public mutating func takeOutgoing() -> [Outgoing] {
        defer { outgoing.removeAll(keepingCapacity: true) }
        return outgoing
    }

    mutating func flushEvents() {
        if let persistence {
            for move in engine.takeMoves() { journal.record(move, pseudonyms: persistence.pseudonyms) }
        }
        guard !events.isEmpty else { return }
        for event in events {
            counters.events[event.type.rawValue, default: 0] += 1
            queue(event, to: topics.events(event.type), retain: false)
            if let persistence { journal.record(event, pseudonyms: persistence.pseudonyms) }
        }
        events.removeAll(keepingCapacity: true)
    }

    mutating func queue(_ value: some Encodable, to topic: String, retain: Bool) {
        // Our own types always encode; a failure here is a programming error worth a crash in tests only.
        // Tag states are most of what a loaded hub publishes: written directly, as Foundation would (TagState+FastEncoding).
        guard let payload = (value as? TagState)?.fastEncoded() ?? (try? ContractCoding.encode(value)) else {
            assertionFailure("cannot encode \(type(of: value))")
            return
        }
        outgoing.append(Outgoing(topic: topic, payload: payload, retain: retain, value: PublishedValue(value)))
    }
}
