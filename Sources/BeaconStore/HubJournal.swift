/// Everything the hub has to store since its last commit, written by `HubStore.commit(_:)` in one transaction: the
/// batches' ledger rows together with their effects, so that an acknowledgement (published after the commit) never
/// covers a batch whose effects could still be lost.
///
/// Tag ids in `key` fields are the ids the analytics tables hold: the tag id, or its pseudonym when the hub
/// pseudonymises (docs/storage.md, "Privacy"). `liveTag` and `beacon` are the real ids, kept only in `live_tags`
/// while a tag is in a zone (the same as its retained MQTT state).
public struct HubJournal: Sendable, Hashable {
    /// A batch taken in: its ledger row.
    public struct Batch: Sendable, Hashable {
        public var gateway: String
        public var boot: String
        public var seq: Int64
        /// Hub clock, unix seconds.
        public var received: Double
        public var sightings: Int

        public init(gateway: String, boot: String, seq: Int64, received: Double, sightings: Int) {
            self.gateway = gateway
            self.boot = boot
            self.seq = seq
            self.received = received
            self.sightings = sightings
        }
    }

    /// Sequences a gateway will never send (its outbox dropped them): acknowledged past, recorded as lost.
    public struct LostBatches: Sendable, Hashable {
        public var gateway: String
        public var boot: String
        public var first: Int64
        public var last: Int64
        public var t: Double

        public init(gateway: String, boot: String, first: Int64, last: Int64, t: Double) {
            self.gateway = gateway
            self.boot = boot
            self.first = first
            self.last = last
            self.t = t
        }
    }

    /// An acknowledgement another hub (or this one, with another database) published, read back on start: every batch
    /// of the boot up to `seq` is in that hub's keeping, and this database continues after it.
    public struct AdoptedAck: Sendable, Hashable {
        public var gateway: String
        public var boot: String
        public var seq: Int64
        public var t: Double

        public init(gateway: String, boot: String, seq: Int64, t: Double) {
            self.gateway = gateway
            self.boot = boot
            self.seq = seq
            self.t = t
        }
    }

    /// A tag's change of zone (the engine's `ZoneMove`): closes its open visit, opens the next, records the
    /// transition.
    public struct Move: Sendable, Hashable {
        public var key: String
        public var beaconKey: String
        public var liveTag: String
        public var beacon: String
        public var region: String?
        public var from: String?
        public var to: String?
        public var t: Double
        public var confidence: Double

        public init(
            key: String, beaconKey: String, liveTag: String, beacon: String, region: String?, from: String?,
            to: String?, t: Double, confidence: Double
        ) {
            self.key = key
            self.beaconKey = beaconKey
            self.liveTag = liveTag
            self.beacon = beacon
            self.region = region
            self.from = from
            self.to = to
            self.t = t
            self.confidence = confidence
        }
    }

    /// An event as published (enter, exit, stayed, unknown, suspect, alert).
    public struct Event: Sendable, Hashable {
        public var t: Double
        public var type: String
        public var key: String?
        /// The real tag id, for `unknown` events (the live state becomes unknown).
        public var liveTag: String?
        public var zone: String?
        public var previousZone: String?
        public var confidence: Double
        public var dwell: Double?
        public var region: String?
        public var code: String?
        public var gateway: String?
        public var reason: String

        public init(
            t: Double, type: String, key: String?, liveTag: String?, zone: String?, previousZone: String?,
            confidence: Double, dwell: Double?, region: String?, code: String?, gateway: String?, reason: String
        ) {
            self.t = t
            self.type = type
            self.key = key
            self.liveTag = liveTag
            self.zone = zone
            self.previousZone = previousZone
            self.confidence = confidence
            self.dwell = dwell
            self.region = region
            self.code = code
            self.gateway = gateway
            self.reason = reason
        }
    }

    /// A gateway's status as it said it (`source` "gateway") or as the hub decided it (`source` "hub": silence).
    public struct GatewayStatus: Sendable, Hashable {
        public var gateway: String
        public var t: Double
        public var state: String
        public var boot: String?
        public var reason: String?
        public var source: String

        public init(gateway: String, t: Double, state: String, boot: String?, reason: String?, source: String) {
            self.gateway = gateway
            self.t = t
            self.state = state
            self.boot = boot
            self.reason = reason
            self.source = source
        }
    }

    /// One raw sighting (stored only when `store.rawSightings` is on).
    public struct Sighting: Sendable, Hashable {
        public var t: Double
        public var gateway: String
        public var beaconKey: String
        public var rssi: Int
        public var txPower: Int?

        public init(t: Double, gateway: String, beaconKey: String, rssi: Int, txPower: Int?) {
            self.t = t
            self.gateway = gateway
            self.beaconKey = beaconKey
            self.rssi = rssi
            self.txPower = txPower
        }
    }

    /// A tag's health as the hub keeps it: upserted into `tag_health`, keyed by its real id (as
    /// `live_tags`: the hub's working state, removed by `forget`).
    public struct TagHealthRow: Sendable, Hashable {
        public var liveTag: String
        public var region: String?
        public var lastSeen: Double?
        public var lastZone: String?
        public var lastGateway: String?
        public var batteryLow: Bool
        public var missing: Bool
        /// The last TLM frame: when, and what it said.
        public var tlmT: Double?
        public var milliVolts: Int?
        public var temperature: Double?
        public var advertisingCount: Int64?
        public var uptime: Double?

        public init(
            liveTag: String, region: String?, lastSeen: Double?, lastZone: String?, lastGateway: String?,
            batteryLow: Bool, missing: Bool, tlmT: Double?, milliVolts: Int?, temperature: Double?,
            advertisingCount: Int64?, uptime: Double?
        ) {
            self.liveTag = liveTag
            self.region = region
            self.lastSeen = lastSeen
            self.lastZone = lastZone
            self.lastGateway = lastGateway
            self.batteryLow = batteryLow
            self.missing = missing
            self.tlmT = tlmT
            self.milliVolts = milliVolts
            self.temperature = temperature
            self.advertisingCount = advertisingCount
            self.uptime = uptime
        }
    }

    /// A tag's battery in one hour (the hour's last reading): upserted into `battery_hourly`, under the id the history
    /// tables hold (`key`: the tag id, or its pseudonym).
    public struct BatteryReading: Sendable, Hashable {
        public var key: String
        /// Unix hour (seconds / 3600, rounded down).
        public var hour: Int64
        public var milliVolts: Int

        public init(key: String, hour: Int64, milliVolts: Int) {
            self.key = key
            self.hour = hour
            self.milliVolts = milliVolts
        }
    }

    public var batches: [Batch] = []
    public var lost: [LostBatches] = []
    public var adopted: [AdoptedAck] = []
    public var moves: [Move] = []
    public var events: [Event] = []
    public var statuses: [GatewayStatus] = []
    public var sightings: [Sighting] = []
    public var tagHealth: [TagHealthRow] = []
    public var batteryReadings: [BatteryReading] = []

    public init() {}

    public var isEmpty: Bool {
        batches.isEmpty && lost.isEmpty && adopted.isEmpty && moves.isEmpty && events.isEmpty && statuses.isEmpty
            && sightings.isEmpty && tagHealth.isEmpty && batteryReadings.isEmpty
    }

    /// Rows this journal writes (for figures).
    public var rowCount: Int {
        batches.count + lost.count + adopted.count + moves.count + events.count + statuses.count + sightings.count
            + tagHealth.count + batteryReadings.count
    }

    /// Appends `later` (a journal taken after this one) so both commit together. A tag's health row and a tag's
    /// reading of an hour are states, not records: the later one replaces the earlier (PostgreSQL's bulk upsert
    /// refuses one key twice, and a long outage would otherwise pile up a row per tag and save).
    public mutating func append(_ later: HubJournal) {
        batches += later.batches
        lost += later.lost
        adopted += later.adopted
        moves += later.moves
        events += later.events
        statuses += later.statuses
        sightings += later.sightings
        tagHealth += later.tagHealth
        batteryReadings += later.batteryReadings
        keepLatestHealth()
    }

    /// Keeps the last tag health row of each tag and the last battery reading of each tag and hour. A journal can hold
    /// two (a tag saved twice between commits when a flag moved; a retried commit with the next one appended), and
    /// PostgreSQL's bulk upsert refuses one key twice in a statement.
    public mutating func keepLatestHealth() {
        tagHealth = Self.latest(tagHealth) { $0.liveTag }
        batteryReadings = Self.latest(batteryReadings) { BatteryKey(key: $0.key, hour: $0.hour) }
    }

    private struct BatteryKey: Hashable {
        var key: String
        var hour: Int64
    }

    /// The last of each key, in the order of their last occurrence.
    private static func latest<Row, Key: Hashable>(_ rows: [Row], by key: (Row) -> Key) -> [Row] {
        var last: [Key: Int] = [:]
        for (index, row) in rows.enumerated() { last[key(row)] = index }
        guard last.count < rows.count else { return rows }
        return rows.indices.filter { last[key(rows[$0])] == $0 }.map { rows[$0] }
    }
}
