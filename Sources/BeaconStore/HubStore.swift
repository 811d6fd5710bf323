import Foundation
import GRDB
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// The hub's database (docs/storage.md): the batch ledger, zone visits, transitions, events, gateway status history,
/// optional raw sightings and dwell statistics, written by one writer connection in WAL mode.
///
/// One process writes a file at a time: the writer holds an exclusive lock on `<file>-writer.lock`, so a second hub
/// (or `beacon-hub forget`) pointed at the same file is refused instead of racing it (SQLite 3.40's WAL bug makes two
/// writers unsafe anyway). Query commands open the file read-only and need no lock.
public final class HubStore: HistoryStore {
    /// A gateway boot's acknowledgement as the database knows it: every batch up to `seq` is committed (or lost).
    public struct Ack: Sendable, Hashable {
        public var gateway: String
        public var boot: String
        public var seq: Int64

        public init(gateway: String, boot: String, seq: Int64) {
            self.gateway = gateway
            self.boot = boot
            self.seq = seq
        }
    }

    /// A tag in a zone (or unknown in it) at the last commit: what a restarted hub carries on from.
    public struct LiveTag: Sendable, Hashable {
        public var tag: String
        public var beacon: String
        /// `inside` or `unknown`.
        public var state: String
        public var zone: String
        public var since: Double
        public var confidence: Double
        public var updated: Double

        public init(
            tag: String, beacon: String, state: String, zone: String, since: Double, confidence: Double,
            updated: Double
        ) {
            self.tag = tag
            self.beacon = beacon
            self.state = state
            self.zone = zone
            self.since = since
            self.confidence = confidence
            self.updated = updated
        }
    }

    /// What a starting hub reads back.
    public struct Recovered: Sendable, Hashable {
        /// Per gateway boot (oldest first), the committed acknowledgement.
        public var acks: [Ack] = []
        /// Batches committed beyond a gap (not yet acknowledged) of each gateway's recent boots: a resend of one is a
        /// duplicate.
        public var committedBeyondAck: [Ack] = []
        public var liveTags: [LiveTag] = []
        /// Tags' health, and their hourly battery readings of the last `batteryHours` hours, oldest first.
        public var tagHealth: [HubJournal.TagHealthRow] = []
        public var batteryReadings: [HubJournal.BatteryReading] = []
        /// Hours of battery readings a starting hub reads back: the eight weeks its trend looks at.
        public static let batteryHours: Int64 = 8 * 7 * 24

        public init() {}
    }

    /// What one commit did.
    public struct CommitResult: Sendable, Hashable {
        /// Acknowledgements that moved, to publish.
        public var acks: [Ack] = []
        /// Ledger rows already present (a batch committed twice: never expected; counted).
        public var duplicateBatches = 0
        public var rows = 0

        public init(acks: [Ack] = [], duplicateBatches: Int = 0, rows: Int = 0) {
            self.acks = acks
            self.duplicateBatches = duplicateBatches
            self.rows = rows
        }
    }

    public let path: String
    public var location: String { path }
    public let database: StoreDatabase
    /// A visit that starts within this many seconds of the tag's previous exit continues the same trip: a transition
    /// is recorded, and routes join them.
    public let tripGapSeconds: Double
    /// The writer lock's file descriptor while held.
    let lockDescriptor: Mutex<Int32?>

    /// The schema: append migrations, never edit them (each shipped database has them applied in order).
    public static var schema: StoreSchema {
        var schema = StoreSchema()
        for (identifier, sql) in migrations { schema.register(identifier, sql: sql) }
        return schema
    }

    /// Opens `path` as its only writer, creating it or upgrading its schema in place.
    public init(
        path: String, durability: StoreDatabase.Durability = .normal, tripGapSeconds: Double = 600
    ) throws(StoreError) {
        if let problem = StoreDatabase.locationProblem(path) { throw problem }
        let lockPath = path + "-writer.lock"
        let descriptor = open(lockPath, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else {
            throw StoreError(
                .cannotOpen,
                "cannot create \(lockPath): \(String(cString: strerror(errno))): check the directory exists and is "
                    + "writable by the hub's user")
        }
        guard flock(descriptor, LOCK_EX | LOCK_NB) == 0 else {
            Glibc.close(descriptor)
            throw StoreError(
                .locked,
                "\(path) is in use by another writer (a running beacon-hub?): stop it first, or use another "
                    + "database file")
        }
        do {
            database = try StoreDatabase(path: path, durability: durability, schema: Self.schema)
        } catch {
            Glibc.close(descriptor)
            throw error
        }
        self.path = path
        self.tripGapSeconds = tripGapSeconds
        lockDescriptor = Mutex(descriptor)
    }

    /// Opens an existing database for queries only (no lock; safe beside a running hub).
    public init(readingFrom path: String, tripGapSeconds: Double = 600) throws(StoreError) {
        guard FileManager.default.fileExists(atPath: path) else {
            throw StoreError(
                .cannotOpen, "no database at \(path): check --db (or store.path in hub.yaml) and that the hub has run")
        }
        database = try StoreDatabase(readingFrom: path, schema: Self.schema)
        self.path = path
        self.tripGapSeconds = tripGapSeconds
        lockDescriptor = Mutex(nil)
    }

    deinit { releaseLock() }

    /// Closes the connection (checkpointing the WAL) and releases the writer lock.
    public func close() throws {
        defer { releaseLock() }
        try database.close()
    }

    func releaseLock() {
        lockDescriptor.withLock { descriptor in
            if let held = descriptor { Glibc.close(held) }
            descriptor = nil
        }
    }

    // MARK: Identity

    /// Checks that the database belongs to `site` and was written with the same pseudonymisation (`keyID`: a
    /// fingerprint of the key, `nil` when ids are stored as they are), recording both in a new database. Mixing sites
    /// or keys in one file would make its history meaningless.
    public func adopt(site: String, keyID: String?) async throws {
        let path = self.path
        try await database.write { db in try Self.adopt(site: site, keyID: keyID, path: path, db) }
    }

    /// `adopt(site:keyID:)` blocking the calling thread (offline tools).
    public func adoptNow(site: String, keyID: String?) throws {
        try database.writeNow { db in try Self.adopt(site: site, keyID: keyID, path: path, db) }
    }

    static func adopt(site: String, keyID: String?, path: String, _ db: Database) throws {
        let stored = try Dictionary(
            uniqueKeysWithValues: Row.fetchAll(db, sql: "SELECT key, value FROM meta").map {
                (row: Row) -> (String, String) in (row["key"], row["value"])
            })
        if let storedSite = stored["site"], storedSite != site {
            throw StoreError(
                .mismatch, "\(path) holds the history of site \(storedSite), not \(site): use another store.path")
        }
        let storedKey = stored["pseudonym_key"] ?? "none"
        if stored["site"] != nil, storedKey != (keyID ?? "none") {
            let problem =
                storedKey == "none"
                ? "\(path) holds real tag ids, but store.pseudonymise is on: use a new database file, or turn "
                    + "pseudonymise off"
                : keyID == nil
                    ? "\(path) holds pseudonymised ids, but store.pseudonymise is off: turn it on with the same key "
                        + "file, or use a new database file"
                    : "\(path) was pseudonymised with another key (fingerprint \(storedKey)): restore that key file, "
                        + "or use a new database file"
            throw StoreError(.mismatch, problem)
        }
        for (key, value) in [("site", site), ("pseudonym_key", keyID ?? "none")] {
            try db.execute(sql: "INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)", arguments: [key, value])
        }
    }

    public func sites() async throws -> [String] { try await meta("site").map { [$0] } ?? [] }

    public func reading(_ sites: [String]?) -> any HistoryStore { self }

    /// A value of the `meta` table (`site`, `pseudonym_key`).
    public func meta(_ key: String) async throws -> String? {
        try await database.read { db in
            try String.fetchOne(db, sql: "SELECT value FROM meta WHERE key = ?", arguments: [key])
        }
    }

    /// A zone as recorded for reports.
    public typealias ZoneRow = (id: String, name: String?)
    /// A gateway as recorded for reports.
    public typealias GatewayRow = (id: String, zone: String?, x: Double, y: Double)

    /// Records the venue's zones and gateways (names and positions, for reports and the dashboard).
    public func describeVenue(zones: [ZoneRow], gateways: [GatewayRow]) async throws {
        let zones = zones.map { [$0.id, $0.name] }
        let gateways = gateways.map { Gateway(id: $0.id, zone: $0.zone, x: $0.x, y: $0.y) }
        try await database.write { db in try Self.describe(zones: zones, gateways: gateways, db) }
    }

    /// `describeVenue` blocking the calling thread (offline tools).
    public func describeVenueNow(zones: [ZoneRow], gateways: [GatewayRow]) throws {
        let gateways = gateways.map { Gateway(id: $0.id, zone: $0.zone, x: $0.x, y: $0.y) }
        try database.writeNow { db in try Self.describe(zones: zones.map { [$0.id, $0.name] }, gateways: gateways, db) }
    }

    struct Gateway: Sendable {
        var id: String
        var zone: String?
        var x: Double
        var y: Double
    }

    static func describe(zones: [[String?]], gateways: [Gateway], _ db: Database) throws {
        for zone in zones {
            try db.execute(
                sql: "INSERT INTO zones (id, name) VALUES (?, ?) ON CONFLICT(id) DO UPDATE SET name = excluded.name",
                arguments: [zone[0], zone[1]])
        }
        for gateway in gateways {
            try db.execute(
                sql: """
                    INSERT INTO gateways (id, zone, x, y) VALUES (?, ?, ?, ?)
                    ON CONFLICT(id) DO UPDATE SET zone = excluded.zone, x = excluded.x, y = excluded.y
                    """, arguments: [gateway.id, gateway.zone, gateway.x, gateway.y])
        }
    }

    /// Whether the database holds any zone visit (a replay into it would mix two histories).
    public func hasVisitsNow() throws -> Bool {
        try database.readNow { db in
            try Int.fetchOne(db, sql: "SELECT count(*) FROM (SELECT 1 FROM visits LIMIT 1)")! > 0
        }
    }

    // MARK: Start-up

    static func tagHealth(_ row: Row) -> HubJournal.TagHealthRow {
        HubJournal.TagHealthRow(
            liveTag: row["tag"], region: row["region"], lastSeen: row["last_seen"], lastZone: row["last_zone"],
            lastGateway: row["last_gateway"], batteryLow: row["battery_low"], missing: row["missing"],
            tlmT: row["tlm_t"], milliVolts: row["milli_volts"], temperature: row["temperature"],
            advertisingCount: row["advertising_count"], uptime: row["uptime"])
    }

    /// The acknowledgements, committed-but-unacknowledged batches and live tags a starting hub carries on from.
    /// `recentBoots`: how many of each gateway's latest boots to read batches of (the acknowledgement's own limit).
    public func recover(recentBoots: Int) async throws -> Recovered {
        try await database.read { db in
            var recovered = Recovered()
            let boots = try Row.fetchAll(
                db, sql: "SELECT gateway, boot, acked FROM boots ORDER BY first_seen, rowid")
            var perGateway: [String: [(boot: String, acked: Int64)]] = [:]
            for row in boots {
                let ack = Ack(gateway: row["gateway"], boot: row["boot"], seq: row["acked"])
                recovered.acks.append(ack)
                perGateway[ack.gateway, default: []].append((ack.boot, ack.seq))
            }
            let beyond = try db.cachedStatement(
                sql: "SELECT seq FROM batches WHERE gateway = ? AND boot = ? AND seq > ? ORDER BY seq")
            for (gateway, list) in perGateway.sorted(by: { $0.key < $1.key }) {
                for entry in list.suffix(recentBoots) {
                    for seq in try Int64.fetchAll(beyond, arguments: [gateway, entry.boot, entry.acked]) {
                        recovered.committedBeyondAck.append(Ack(gateway: gateway, boot: entry.boot, seq: seq))
                    }
                }
            }
            recovered.liveTags = try Row.fetchAll(
                db, sql: "SELECT tag, beacon, state, zone, since, confidence, updated FROM live_tags ORDER BY tag"
            ).map { row in
                LiveTag(
                    tag: row["tag"], beacon: row["beacon"], state: row["state"], zone: row["zone"],
                    since: row["since"], confidence: row["confidence"], updated: row["updated"])
            }
            recovered.tagHealth = try Row.fetchAll(db, sql: "SELECT * FROM tag_health ORDER BY tag").map(Self.tagHealth)
            let hour = Int64((Date().timeIntervalSince1970 / 3600).rounded(.down)) - Recovered.batteryHours
            recovered.batteryReadings = try Row.fetchAll(
                db, sql: "SELECT tag, hour, milli_volts FROM battery_hourly WHERE hour >= ? ORDER BY tag, hour",
                arguments: [hour]
            ).map { HubJournal.BatteryReading(key: $0["tag"], hour: $0["hour"], milliVolts: $0["milli_volts"]) }
            return recovered
        }
    }
}
