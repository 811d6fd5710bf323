import BeaconStore
import Foundation
import Logging
import PostgresNIO

extension PostgresHistory {
    /// The one connection through which this hub writes its site, holding the site's writer lock (a session advisory
    /// lock) for as long as it is open. Commits are serialised here; a failed one drops the connection, and the next
    /// reconnects and takes the lock again (or is refused with `locked` while another hub holds it).
    actor Writer {
        let configuration: PostgresConnection.Configuration
        let location: String
        let site: String
        let tripGapSeconds: Double
        let logger: Logger
        var connection: PostgresConnection?
        /// Partitions known to exist (created by this process or found).
        var partitions: Set<String> = []
        var nextConnectionID = 1

        init(
            configuration: PostgresConnection.Configuration, location: String, site: String, tripGapSeconds: Double,
            logger: Logger
        ) {
            self.configuration = configuration
            self.location = location
            self.site = site
            self.tripGapSeconds = tripGapSeconds
            self.logger = logger
        }

        deinit {
            // PostgresNIO requires a connection closed before it goes; kept alive until it is.
            if let connection { connection.close().whenComplete { _ in _ = connection } }
        }

        /// The lock's key: one per site, in a name space of our own (`hashtextextended` of a fixed prefix and the site).
        nonisolated var lockName: String { "beacontracker writer " + site }

        func connect() async throws -> PostgresConnection {
            do {
                nextConnectionID += 1
                return try await PostgresConnection.connect(
                    configuration: configuration, id: nextConnectionID, logger: logger)
            } catch {
                throw StoreError(postgres: error, location: location)
            }
        }

        /// The writer's connection, holding the writer lock.
        func locked() async throws -> PostgresConnection {
            if let connection, !connection.isClosed { return connection }
            connection = nil
            let fresh = try await connect()
            do {
                var held = false
                for try await value in try await fresh.query(
                    "SELECT pg_try_advisory_lock(hashtextextended(\(lockName), 0))", logger: logger
                ).decode(Bool.self) { held = value }
                guard held else {
                    try? await fresh.close()
                    throw StoreError(
                        .locked,
                        "\(location): another hub writes site \(site)'s history (it holds the writer lock): only "
                            + "one hub of a site writes at a time; this one waits until that hub stops or loses the "
                            + "database")
                }
            } catch let error as StoreError {
                throw error
            } catch {
                try? await fresh.close()
                throw StoreError(postgres: error, location: location)
            }
            connection = fresh
            return fresh
        }

        /// Closes the connection: the writer lock is free when this returns (released by the server before the
        /// connection closes, so that a standby can take it at once; a closed socket alone frees it only once the
        /// server's backend notices).
        /// After a failure (`releasing: false`) the connection is in doubt and is only closed.
        func disconnect(releasing: Bool = true) async {
            guard let connection else { return }
            self.connection = nil
            if releasing, !connection.isClosed {
                _ = try? await connection.query("SELECT pg_advisory_unlock_all()", logger: logger)
            }
            try? await connection.close()
        }

        /// Runs `work` in one transaction on the locked connection. Any failure rolls back and drops the connection
        /// (a connection in doubt must not keep the lock), so the next call starts clean.
        func transaction<T: Sendable>(
            _ work: (PostgresConnection) async throws -> T
        ) async throws -> T {
            let connection = try await locked()
            do {
                return try await connection.withTransaction(logger: logger) { connection in
                    try await work(connection)
                }
            } catch {
                await disconnect(releasing: false)
                throw StoreError(postgres: error, location: location)
            }
        }

        // MARK: Schema

        /// Applies missing migrations on a connection of its own (no writer lock: query tools migrate too).
        func migrate() async throws {
            let connection = try await connect()
            defer { Task { try? await connection.close() } }
            do {
                try await connection.withTransaction(logger: logger) { connection in
                    try await connection.query(
                        "SELECT pg_advisory_xact_lock(hashtextextended('beacontracker schema', 0))", logger: logger)
                    try await connection.query(
                        """
                        CREATE TABLE IF NOT EXISTS schema_migrations (
                            identifier text PRIMARY KEY, applied timestamptz NOT NULL DEFAULT now()
                        )
                        """, logger: logger)
                    var applied: Set<String> = []
                    for try await identifier in try await connection.query(
                        "SELECT identifier FROM schema_migrations", logger: logger
                    ).decode(String.self) { applied.insert(identifier) }
                    if let newer = newerSchema(applied) { throw newer }
                    for migration in PostgresSchema.migrations where !applied.contains(migration.identifier) {
                        // One statement per query: the extended protocol takes no more.
                        for statement in PostgresSchema.statements(of: migration.sql) {
                            try await connection.query(PostgresQuery(unsafeSQL: statement), logger: logger)
                        }
                        try await connection.query(
                            "INSERT INTO schema_migrations (identifier) VALUES (\(migration.identifier))",
                            logger: logger)
                    }
                }
            } catch {
                throw StoreError(postgres: error, location: location)
            }
        }

        /// Checks, on a connection of its own and without writing, that the database holds exactly the migrations
        /// this build knows: what a reader (`migrates: false`) does instead of `migrate`, so that a role that may
        /// only read can query.
        func checkSchema() async throws {
            let connection = try await connect()
            defer { Task { try? await connection.close() } }
            var applied: Set<String> = []
            do {
                var exists = false
                for try await value in try await connection.query(
                    "SELECT to_regclass('schema_migrations') IS NOT NULL", logger: logger
                ).decode(Bool.self) { exists = value }
                guard exists else {
                    throw StoreError(
                        .cannotOpen,
                        "\(location) holds no BeaconTracker history (no schema_migrations table): start the hub that "
                            + "writes it once (it creates the schema), or check that store.postgres.url names its "
                            + "database")
                }
                for try await identifier in try await connection.query(
                    "SELECT identifier FROM schema_migrations", logger: logger
                ).decode(String.self) { applied.insert(identifier) }
            } catch let error as StoreError {
                throw error
            } catch {
                throw StoreError(postgres: error, location: location)
            }
            if let newer = newerSchema(applied) { throw newer }
            let known = PostgresSchema.migrations.map(\.identifier)
            if let missing = known.first(where: { !applied.contains($0) }) {
                throw StoreError(
                    .olderSchema,
                    "\(location) lacks migration \(missing) of this beacon-hub: its schema is older. The hub that "
                        + "writes it applies the migration when it starts with this version; until then read it with "
                        + "the version that wrote it")
            }
        }

        /// The error for a database holding a migration this build does not know (a newer hub wrote it), if it does.
        func newerSchema(_ applied: Set<String>) -> StoreError? {
            let known = Set(PostgresSchema.migrations.map(\.identifier))
            guard let unknown = applied.subtracting(known).sorted().first else { return nil }
            return StoreError(
                .newerSchema,
                "\(location) has migration \(unknown), which this beacon-hub does not know: a newer hub wrote it; "
                    + "upgrade this hub")
        }

        /// Creates the partitions holding `times` that are not known to exist, each in a short transaction of its own
        /// under an advisory lock (hubs of several sites create the same month's partition).
        func ensurePartitions(covering times: [Double]) async throws {
            var missing: [String: (table: String, from: Double, to: Double)] = [:]
            for table in PostgresSchema.partitioned {
                for t in Set(times.map { ($0 / 86_400).rounded(.down) }) {
                    let partition = PostgresSchema.partition(of: table, at: t * 86_400)
                    if !partitions.contains(partition.name) {
                        missing[partition.name] = (table.table, partition.from, partition.to)
                    }
                }
            }
            guard !missing.isEmpty else { return }
            let connection = try await locked()
            do {
                for (name, partition) in missing.sorted(by: { $0.key < $1.key }) {
                    try await connection.withTransaction(logger: logger) { connection in
                        try await connection.query(
                            "SELECT pg_advisory_xact_lock(hashtextextended('beacontracker partitions', 0))",
                            logger: logger)
                        try await connection.query(
                            PostgresQuery(
                                unsafeSQL: """
                                    CREATE TABLE IF NOT EXISTS \(name) PARTITION OF \(partition.table)
                                    FOR VALUES FROM (\(partition.from)) TO (\(partition.to))
                                    """), logger: logger)
                    }
                    partitions.insert(name)
                }
            } catch {
                await disconnect(releasing: false)
                throw StoreError(postgres: error, location: location)
            }
        }

        // MARK: Start-up

        func recover(recentBoots: Int) async throws -> HubStore.Recovered {
            let site = self.site
            return try await transaction { connection in
                var recovered = HubStore.Recovered()
                var perGateway: [String: [(boot: String, acked: Int64)]] = [:]
                for try await (gateway, boot, acked) in try await connection.query(
                    "SELECT gateway, boot, acked FROM boots WHERE site = \(site) ORDER BY first_seen, id",
                    logger: logger
                ).decode((String, String, Int64).self) {
                    recovered.acks.append(HubStore.Ack(gateway: gateway, boot: boot, seq: acked))
                    perGateway[gateway, default: []].append((boot, acked))
                }
                for (gateway, list) in perGateway.sorted(by: { $0.key < $1.key }) {
                    for entry in list.suffix(recentBoots) {
                        for try await seq in try await connection.query(
                            """
                            SELECT seq FROM batches WHERE site = \(site) AND gateway = \(gateway)
                            AND boot = \(entry.boot) AND seq > \(entry.acked) ORDER BY seq
                            """, logger: logger
                        ).decode(Int64.self) {
                            recovered.committedBeyondAck.append(
                                HubStore.Ack(gateway: gateway, boot: entry.boot, seq: seq))
                        }
                    }
                }
                for try await (tag, beacon, state, zone, since, confidence, updated) in try await connection.query(
                    """
                    SELECT tag, beacon, state, zone, since, confidence, updated FROM live_tags
                    WHERE site = \(site) ORDER BY tag
                    """, logger: logger
                ).decode((String, String, String, String, Double, Double, Double).self) {
                    recovered.liveTags.append(
                        HubStore.LiveTag(
                            tag: tag, beacon: beacon, state: state, zone: zone, since: since, confidence: confidence,
                            updated: updated))
                }
                for try await row in try await connection.query(
                    """
                    SELECT tag, region, last_seen, last_zone, last_gateway, battery_low, missing, tlm_t, milli_volts,
                    temperature, advertising_count, uptime FROM tag_health WHERE site = \(site) ORDER BY tag
                    """, logger: logger
                ) {
                    let (tag, region, seen, zone, gateway, low, missing, tlmT, milliVolts, temperature, count, uptime) =
                        try row.decode(
                            (
                                String, String?, Double?, String?, String?, Bool, Bool, Double?, Int32?, Double?,
                                Int64?,
                                Double?
                            ).self)
                    recovered.tagHealth.append(
                        HubJournal.TagHealthRow(
                            liveTag: tag, region: region, lastSeen: seen, lastZone: zone, lastGateway: gateway,
                            batteryLow: low, missing: missing, tlmT: tlmT, milliVolts: milliVolts.map(Int.init),
                            temperature: temperature, advertisingCount: count, uptime: uptime))
                }
                let since =
                    Int64((Date().timeIntervalSince1970 / 3600).rounded(.down)) - HubStore.Recovered.batteryHours
                for try await (tag, hour, milliVolts) in try await connection.query(
                    """
                    SELECT tag, hour, milli_volts FROM battery_hourly WHERE site = \(site) AND hour >= \(since)
                    ORDER BY tag, hour
                    """, logger: logger
                ).decode((String, Int64, Int32).self) {
                    recovered.batteryReadings.append(
                        HubJournal.BatteryReading(key: tag, hour: hour, milliVolts: Int(milliVolts)))
                }
                return recovered
            }
        }
    }
}
