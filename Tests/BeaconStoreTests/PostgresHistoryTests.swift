import BeaconPostgres
import BeaconStore
import BrokerTestSupport
import Foundation
import Testing

/// What only the PostgreSQL history does: one writer per site by its advisory lock, many sites in one database,
/// partitions by time, a server restart survived, and its schema's own checks. Against a real PostgreSQL 15.
@Suite struct PostgresHistoryTests {
    static func journal(_ tag: String, zone: String, at t: Double, seq: Int64, gateway: String = "gw-a")
        -> HubJournal
    {
        var journal = HubJournal()
        journal.batches = [HubJournal.Batch(gateway: gateway, boot: "b1", seq: seq, received: t, sightings: 2)]
        journal.moves = [
            HubJournal.Move(
                key: tag, beaconKey: "beacon-\(tag)", liveTag: tag, beacon: "beacon-\(tag)", region: nil, from: nil,
                to: zone, t: t, confidence: 0.9)
        ]
        return journal
    }

    static func history(
        _ server: PostgresServer, _ database: String, site: String, reading: [String]? = nil
    ) throws -> PostgresHistory {
        try PostgresHistory(endpoint: server.endpoint(database), site: site, readSites: reading ?? [site])
    }

    @Test func onlyOneHubWritesASiteAtATimeAndTheLockGoesWithItsConnection() async throws {
        let server = try await SharedPostgres.server()
        let database = try await server.createDatabase()
        let active = try Self.history(server, database, site: "museum")
        let standby = try Self.history(server, database, site: "museum")
        _ = try await active.commit(Self.journal("t1", zone: "hall", at: 1_800_000_000, seq: 1), at: 1_800_000_001)
        await #expect {
            _ = try await standby.recover()
        } throws: { error in
            (error as? StoreError)?.code == .locked && "\(error)".contains("another hub writes site museum")
        }
        await #expect(throws: StoreError.self) {
            _ = try await standby.commit(Self.journal("t2", zone: "hall", at: 1_800_000_002, seq: 2), at: 1_800_000_003)
        }
        // Another site's hub is not held up by it.
        let shop = try Self.history(server, database, site: "shop")
        _ = try await shop.commit(Self.journal("t9", zone: "till", at: 1_800_000_000, seq: 1), at: 1_800_000_001)
        // The active hub goes (its connection closes): the standby carries on from what it committed.
        await active.stopWriting()
        let recovered = try await standby.recover()
        #expect(recovered.acks == [HubStore.Ack(gateway: "gw-a", boot: "b1", seq: 1)])
        #expect(recovered.liveTags.map(\.tag) == ["t1"])
        let result = try await standby.commit(
            Self.journal("t2", zone: "hall", at: 1_800_000_002, seq: 2), at: 1_800_000_003)
        #expect(result.acks == [HubStore.Ack(gateway: "gw-a", boot: "b1", seq: 2)])
        #expect(try await standby.visits(HubStore.VisitFilter()).map(\.tag) == ["t1", "t2"])
    }

    @Test func sitesShareTheDatabaseAndAQueryOfAllSitesIsTheUnionOfEach() async throws {
        let server = try await SharedPostgres.server()
        let database = try await server.createDatabase()
        let hour = 1_800_000_000.0
        for (index, site) in ["north", "south"].enumerated() {
            let history = try Self.history(server, database, site: site)
            try await history.adopt(site: site, keyID: nil)
            var journal = Self.journal("t1", zone: "entrance", at: hour + 10, seq: 1)
            journal.moves.append(
                HubJournal.Move(
                    key: "t1", beaconKey: "beacon-t1", liveTag: "t1", beacon: "beacon-t1", region: nil,
                    from: "entrance", to: nil, t: hour + 70 + Double(index) * 60, confidence: 0.9))
            _ = try await history.commit(journal, at: hour + 200)
            await history.stopWriting()
        }
        let north = try Self.history(server, database, site: "north")
        let south = try Self.history(server, database, site: "south")
        let all = try PostgresHistory(endpoint: server.endpoint(database), site: "central", readSites: nil)
        let perSite = try await north.dwell(by: .zone) + south.dwell(by: .zone)
        #expect(perSite.map(\.statistics.total) == [60, 120])
        let pooled = try #require(try await all.dwell(by: .zone).first)
        #expect(pooled.statistics.visits == 2 && pooled.statistics.total == 180)
        let hourly = try await all.dwell(by: .hour)
        #expect(hourly.map(\.statistics.total).sorted() == [60, 120], "one row per site's zone and hour")
        #expect(try await all.visits(HubStore.VisitFilter()).count == 2)
        #expect(try await north.visits(HubStore.VisitFilter()).count == 1)
        // A view on another site answers for that site (the history commands check each site's pseudonym key).
        #expect(try await north.reading(["south"]).meta("site") == "south")
        // Each site's acknowledgements are its own, though the gateways share names.
        #expect(try await north.recover().acks == [HubStore.Ack(gateway: "gw-a", boot: "b1", seq: 1)])
        // And so are their calibrations' versions.
        for history in [north, south, north] {
            _ = try await history.addCalibration(
                CalibrationVersion(created: hour, who: "ana", kind: .walk, zones: 1, gateways: 1, body: "{}"))
        }
        #expect(try await north.calibrationVersions().map(\.version) == [2, 1])
        #expect(try await south.calibrationVersions().map(\.version) == [1])
    }

    @Test func bigTablesArePartitionedByMonthAndRetentionDropsWholeDays() async throws {
        let server = try await SharedPostgres.server()
        let database = try await server.createDatabase()
        let history = try Self.history(server, database, site: "museum")
        let november = 1_793_491_200.0  // 2026-11-01 00:00 UTC
        let december = 1_796_083_200.0  // 2026-12-01 00:00 UTC
        var journal = Self.journal("t1", zone: "hall", at: november + 3600, seq: 1)
        journal.moves.append(
            HubJournal.Move(
                key: "t1", beaconKey: "beacon-t1", liveTag: "t1", beacon: "beacon-t1", region: nil, from: "hall",
                to: "shop", t: december + 60, confidence: 0.9))
        journal.sightings = (0..<6).map { day in
            HubJournal.Sighting(
                t: november + Double(day) * 86_400 + 600, gateway: "gw-a", beaconKey: "beacon-t1", rssi: -60,
                txPower: day.isMultiple(of: 2) ? -59 : nil)
        }
        _ = try await history.commit(journal, at: december + 120)
        let partitions = try await server.psql(
            """
            SELECT string_agg(c.relname, ' ' ORDER BY c.relname) FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
            JOIN pg_class p ON p.oid = i.inhparent WHERE p.relname IN ('visits', 'sightings')
            """, database: database)
        #expect(
            partitions.split(separator: " ").map(String.init) == [
                "sightings_p20261101", "sightings_p20261102", "sightings_p20261103", "sightings_p20261104",
                "sightings_p20261105", "sightings_p20261106", "sightings_p20261201", "visits_p202611",
                "visits_p202612",
            ])
        #expect(try await history.fetchInteger("SELECT count(*) FROM sightings WHERE tx_power IS NULL") == 3)
        // Keep from day 3, 06:00: days 1 and 2 go as tables, day 3's one row before 06:00 is deleted.
        let removed = try await history.pruneSightings(before: november + 2 * 86_400 + 6 * 3600)
        #expect(removed == 3)
        #expect(try await history.fetchInteger("SELECT count(*) FROM sightings") == 3)
        let left = try await server.psql(
            "SELECT count(*) FROM pg_class WHERE relname IN ('sightings_p20261101', 'sightings_p20261102')",
            database: database)
        #expect(left == "0")
        // The visit that crossed the month: closed in November's partition, its successor in December's.
        let visits = try await history.visits(HubStore.VisitFilter())
        #expect(visits.map(\.zone) == ["hall", "shop"] && visits[0].duration == december + 60 - november - 3600)
    }

    @Test func aServerRestartFailsCommitsUntilItIsBackThenNothingIsLost() async throws {
        let server = try await PostgresServer()
        try await server.start()
        let database = try await server.createDatabase()
        let history = try Self.history(server, database, site: "museum")
        let t = 1_800_000_000.0
        _ = try await history.commit(Self.journal("t1", zone: "hall", at: t, seq: 1), at: t + 1)
        await server.kill()
        let pending = Self.journal("t2", zone: "hall", at: t + 2, seq: 2)
        await #expect {
            _ = try await history.commit(pending, at: t + 3)
        } throws: { error in
            (error as? StoreError)?.code == .io && "\(error)".contains(history.location)
        }
        try await server.start()
        // The first commit after may meet the connection the server dropped; the writer reconnects.
        var result: HubStore.CommitResult?
        for _ in 0..<3 where result == nil { result = try? await history.commit(pending, at: t + 4) }
        #expect(result?.acks == [HubStore.Ack(gateway: "gw-a", boot: "b1", seq: 2)])
        #expect(try await history.visits(HubStore.VisitFilter()).map(\.tag) == ["t1", "t2"])
        try history.close()
        await server.stop()
    }

    @Test func aDatabaseMigratedByANewerHubIsRefused() async throws {
        let server = try await SharedPostgres.server()
        let database = try await server.createDatabase()
        let history = try Self.history(server, database, site: "museum")
        _ = try await history.recover()
        try await server.psql("INSERT INTO schema_migrations (identifier) VALUES ('pg-999')", database: database)
        let newer = try Self.history(server, database, site: "shop")
        await #expect {
            _ = try await newer.recover()
        } throws: { error in
            (error as? StoreError)?.code == .newerSchema && "\(error)".contains("upgrade this hub")
        }
    }

    /// A reader (`migrates: false`: queries, `beacon-hub serve`) on a role granted only `pg_read_all_data` reads the
    /// history, and never writes: a database without the schema, or with one older or newer than the build, is an
    /// error that says so, and the reader created nothing.
    @Test func aReadOnlyRoleReadsTheHistoryAndAReaderNeverMigrates() async throws {
        let server = try await SharedPostgres.server()
        let database = try await server.createDatabase()
        let password = UUID().uuidString
        let role = "reader_\(database)"
        try await server.psql(
            "CREATE ROLE \(role) LOGIN PASSWORD '\(password)'; GRANT pg_read_all_data TO \(role);", database: database)
        var endpoint = server.endpoint(database)
        endpoint.user = role
        endpoint.password = password
        func reader() throws -> PostgresHistory {
            try PostgresHistory(endpoint: endpoint, site: "museum", readSites: ["museum"], migrates: false)
        }
        await #expect {
            _ = try await reader().visits(HubStore.VisitFilter())
        } throws: { error in
            (error as? StoreError)?.code == .cannotOpen && "\(error)".contains("holds no BeaconTracker history")
        }
        let tables = "SELECT count(*) FROM pg_tables WHERE schemaname = 'public'"
        #expect(try await server.psql(tables, database: database) == "0", "the reader created tables")

        let writer = try Self.history(server, database, site: "museum")
        try await writer.adopt(site: "museum", keyID: nil)
        _ = try await writer.commit(Self.journal("t1", zone: "hall", at: 1_800_000_000, seq: 1), at: 1_800_000_001)
        let history = try reader()
        #expect(try await history.visits(HubStore.VisitFilter()).map(\.tag) == ["t1"])
        #expect(try await history.sites() == ["museum"])
        #expect(try await history.meta("site") == "museum")
        try history.close()

        let last = try #require(PostgresSchema.migrations.last?.identifier)
        try await server.psql("DELETE FROM schema_migrations WHERE identifier = '\(last)'", database: database)
        await #expect {
            _ = try await reader().visits(HubStore.VisitFilter())
        } throws: { error in
            (error as? StoreError)?.code == .olderSchema && "\(error)".contains("lacks migration \(last)")
        }
        try await server.psql(
            "INSERT INTO schema_migrations (identifier) VALUES ('\(last)'), ('pg-999')", database: database)
        await #expect {
            _ = try await reader().dwell(by: .zone)
        } throws: { error in
            (error as? StoreError)?.code == .newerSchema && "\(error)".contains("upgrade this hub")
        }
        try writer.close()
    }

    @Test func aWrongPasswordOrDatabaseSaysWhatToCheck() async throws {
        let server = try await SharedPostgres.server()
        var endpoint = server.endpoint("postgres")
        endpoint.password = "wrong"
        await #expect {
            _ = try await PostgresHistory(endpoint: endpoint, site: "museum").recover()
        } throws: { error in
            (error as? StoreError)?.code == .cannotOpen && "\(error)".contains("passwordFile")
        }
        await #expect {
            _ = try await PostgresHistory(endpoint: server.endpoint("missing"), site: "museum").recover()
        } throws: { error in
            (error as? StoreError)?.code == .cannotOpen && "\(error)".contains("create the database")
        }
        let refused = try FreePort.Refused()
        var nowhere = server.endpoint("postgres")
        nowhere.port = refused.port
        await #expect {
            _ = try await PostgresHistory(endpoint: nowhere, site: "museum").recover()
        } throws: { error in
            (error as? StoreError)?.code == .io && "\(error)".contains("check the server runs")
        }
    }

    @Test func theURLNamesUserHostPortDatabaseAndTLSButNeverAPassword() throws {
        let endpoint = try PostgresHistory.Endpoint(
            url: "postgres://hub@db.example:6543/history?sslmode=verify-full", password: "secret")
        #expect(endpoint.host == "db.example" && endpoint.port == 6543 && endpoint.database == "history")
        #expect(endpoint.user == "hub" && endpoint.tls == .verifyFull && endpoint.password == "secret")
        #expect(endpoint.description == "postgres://hub@db.example:6543/history")
        #expect(throws: StoreError.self) {
            _ = try PostgresHistory.Endpoint(url: "postgres://hub:secret@db/history", password: nil)
        }
        #expect(throws: StoreError.self) { _ = try PostgresHistory.Endpoint(url: "mysql://hub@db/x", password: nil) }
        #expect(throws: StoreError.self) {
            _ = try PostgresHistory.Endpoint(url: "postgres://hub@db/x?sslmode=maybe", password: nil)
        }
    }
}
