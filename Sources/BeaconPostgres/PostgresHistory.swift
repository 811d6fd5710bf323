import BeaconStore
import Foundation
import Logging
import NIOSSL
import PostgresNIO
import Synchronization

/// The hub's history in PostgreSQL (`store.backend: postgres`, docs/storage.md): the tables of the SQLite store, each
/// row under its `site`, so that a standby hub carries on the same history and many sites share one database.
///
/// Writes go through one connection per hub (`Writer`), which holds the site's **writer lock**, a session advisory
/// lock: only one hub writes a site at a time, whatever the broker says, and a hub that dies (or loses the database)
/// loses the lock with its connection. Queries go through a small pool and read `readSites` (every site when `nil`).
///
/// A history opened with `migrates: false` (queries, `beacon-hub serve`) never changes the schema: it checks that the
/// database holds this build's migrations, so a role with only `pg_read_all_data` can read it.
public final class PostgresHistory: HistoryStore {
    public let endpoint: Endpoint
    /// The site this process writes (its acknowledgements, visits and events go under it).
    public let site: String
    /// The sites queries read; `nil`: every site in the database.
    public let readSites: [String]?
    public let tripGapSeconds: Double
    /// Whether the first operation applies missing migrations (a writing hub), or only checks the schema (a reader).
    public let migrates: Bool
    public var location: String { endpoint.description }
    let writer: Writer
    let pool: Pool
    var client: PostgresClient { pool.client }
    let logger: Logger

    /// Connects lazily: nothing is sent to the server before the first operation. `migrates: false` for a reader.
    public init(
        endpoint: Endpoint, site: String, readSites: [String]? = nil, tripGapSeconds: Double = 600,
        migrates: Bool = true, logger: Logger = Logger(label: "beacontracker.postgres")
    ) throws(StoreError) {
        self.endpoint = endpoint
        self.migrates = migrates
        self.site = site
        self.readSites = readSites
        self.tripGapSeconds = tripGapSeconds
        self.logger = logger
        var configuration = PostgresClient.Configuration(
            host: endpoint.host, port: endpoint.port, username: endpoint.user, password: endpoint.password,
            database: endpoint.database, tls: try endpoint.clientTLS())
        configuration.options.maximumConnections = 4
        configuration.options.connectTimeout = .seconds(10)
        // The pool's own warnings (a query leased before its run task started, which it then serves) are noise on a
        // command's output; real failures reach the caller as StoreErrors.
        var background = logger
        background.logLevel = max(logger.logLevel, .error)
        pool = Pool(PostgresClient(configuration: configuration, backgroundLogger: background))
        writer = Writer(
            configuration: try endpoint.connectionConfiguration(), location: endpoint.description, site: site,
            tripGapSeconds: tripGapSeconds, logger: logger)
    }

    init(_ other: PostgresHistory, readSites: [String]?) {
        endpoint = other.endpoint
        site = other.site
        self.readSites = readSites
        tripGapSeconds = other.tripGapSeconds
        migrates = other.migrates
        logger = other.logger
        pool = other.pool
        writer = other.writer
    }

    /// The same history read for other sites (`nil`: all), over the same connections.
    public func reading(_ sites: [String]?) -> any HistoryStore { PostgresHistory(self, readSites: sites) }

    /// The sites with a history in the database, sorted.
    public func sites() async throws -> [String] {
        try await ensureSchema()
        return try await rows("SELECT DISTINCT site FROM meta ORDER BY site") { try $0.decode(String.self) }
    }

    /// Ends the pool and the writer's connection (releasing the writer lock).
    public func close() throws {
        pool.close()
        let writer = self.writer
        Task { await writer.disconnect() }
    }

    /// The query connections, shared by the views of one history on several sites; closed when the last goes.
    final class Pool: Sendable {
        let client: PostgresClient
        let runTask: Mutex<Task<Void, Never>?>
        /// The migrations, checked (and, by a writer, applied) once per process.
        let schemaReady = Mutex<Task<Void, any Error>?>(nil)

        init(_ client: PostgresClient) {
            self.client = client
            runTask = Mutex(Task { await client.run() })
        }

        func close() {
            runTask.withLock { task in
                task?.cancel()
                task = nil
            }
        }

        deinit { close() }
    }

    /// Ends the writer's connection and waits for it: the writer lock is free when this returns.
    public func stopWriting() async { await writer.disconnect() }

    // MARK: Identity

    public func adopt(site: String, keyID: String?) async throws {
        guard site == self.site else {
            throw StoreError(.mismatch, "this connection to \(location) writes site \(self.site), not \(site)")
        }
        try await ensureSchema()
        try await adoptRows(site: site, keyID: keyID)
    }

    /// Of the site read (a view on one other site, `reading([name])`, answers for that site), else of the site
    /// written.
    public func meta(_ key: String) async throws -> String? {
        try await ensureSchema()
        let site = readSites?.count == 1 ? readSites![0] : self.site
        return try await rows("SELECT value FROM meta WHERE site = \(site) AND key = \(key)") {
            try $0.decode(String.self)
        }.first
    }

    public func describeVenue(zones: [HubStore.ZoneRow], gateways: [HubStore.GatewayRow]) async throws {
        try await ensureSchema()
        try await describeRows(zones: zones, gateways: gateways)
    }

    public func recover(recentBoots: Int) async throws -> HubStore.Recovered {
        try await ensureSchema()
        return try await writer.recover(recentBoots: recentBoots)
    }

    public func commit(_ journal: HubJournal, at now: Double) async throws -> HubStore.CommitResult {
        try await ensureSchema()
        return try await writer.commit(journal, at: now)
    }

    public func pruneSightings(before cutoff: Double) async throws -> Int {
        try await ensureSchema()
        return try await writer.pruneSightings(before: cutoff)
    }

    public func pruneBatteryReadings(before cutoff: Double) async throws -> Int {
        try await ensureSchema()
        return try await writer.pruneBatteryReadings(before: cutoff)
    }

    /// Deletes the tag's rows in **every** site of the database (a person asking to be forgotten is forgotten
    /// everywhere).
    public func forget(key: String, liveTag: String, beaconKey: String?) async throws -> HubStore.Forgotten {
        try await ensureSchema()
        return try await forgetRows(key: key, liveTag: liveTag, beaconKey: beaconKey)
    }

    // MARK: Plumbing

    /// Collects a read's rows (the sequence must be read while the pool's lease lasts).
    func rows<Row: Sendable>(
        _ query: PostgresQuery, _ transform: @Sendable (PostgresRow) throws -> Row
    ) async throws -> [Row] {
        do {
            var result: [Row] = []
            for try await row in try await client.query(query, logger: logger) { result.append(try transform(row)) }
            return result
        } catch let error as StoreError {
            throw error
        } catch {
            throw StoreError(postgres: error, location: location)
        }
    }

    /// Applies the migrations this build knows and the database lacks (a reader only checks that none lacks), once
    /// per process (`PostgresSchema`).
    func ensureSchema() async throws {
        let task = pool.schemaReady.withLock { task -> Task<Void, any Error> in
            if let task { return task }
            let writer = self.writer
            let migrates = self.migrates
            let made = Task { try await migrates ? writer.migrate() : writer.checkSchema() }
            task = made
            return made
        }
        do {
            try await task.value
        } catch {
            // Tried again on the next operation (the server may come back).
            pool.schemaReady.withLock { $0 = nil }
            throw error
        }
    }
}

extension StoreError {
    /// PostgreSQL's error (or the connection's), with what to do.
    init(postgres error: any Error, location: String) {
        if let error = error as? StoreError {
            self = error
            return
        }
        if let psql = error as? PSQLError {
            if let server = psql.serverInfo {
                let state = server[.sqlState] ?? ""
                let message = server[.message] ?? "error"
                let detail = "\(message) (SQLSTATE \(state))"
                switch state {
                case "53100":
                    self.init(.diskFull, "\(location): disk full — \(detail): free space on the database server")
                case "28P01", "28000":
                    self.init(
                        .cannotOpen,
                        "\(location): \(detail): check store.postgres's user and passwordFile, and pg_hba.conf")
                case "3D000":
                    self.init(
                        .cannotOpen,
                        "\(location): \(detail): create the database (docs/operations.md, \"PostgreSQL\")")
                default: self.init(.io, "\(location): \(detail)")
                }
                return
            }
            self.init(
                .io,
                "\(location): \(psql.code) \(psql.underlying.map { "(\($0))" } ?? ""): check the server runs and "
                    + "accepts connections from this host (store.postgres.url)")
            return
        }
        if let transaction = error as? PostgresTransactionError {
            let cause = transaction.closureError ?? transaction.beginError ?? transaction.commitError
            self.init(postgres: cause ?? StoreError(.io, "\(location): transaction failed"), location: location)
            return
        }
        self.init(
            .io,
            "\(location): \(error): check the server runs and accepts connections from this host (store.postgres.url)")
    }
}

extension PostgresHistory {
    /// The value of a one-row, one-column query as an integer (counts and checks in tools and tests), `nil` for NULL
    /// or no row. Reads every site: `sql` names its own conditions.
    public func fetchInteger(_ sql: String) async throws -> Int? {
        try await ensureSchema()
        let values = try await rows(PostgresQuery(unsafeSQL: "SELECT ((\(sql)))::float8")) {
            try $0.decode(Double?.self)
        }
        return values.first.flatMap { $0 }.map { Int($0) }
    }
}

extension HistoryStore {
    /// A one-value query's result as an integer on either backend (checks in tools and tests); `sql` is written in
    /// the SQL both databases share.
    public func integer(_ sql: String) async throws -> Int? {
        switch self {
        case let store as HubStore: try await store.database.fetchInteger(sql)
        case let store as PostgresHistory: try await store.fetchInteger(sql)
        default: nil
        }
    }
}
