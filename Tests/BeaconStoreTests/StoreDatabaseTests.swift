import BrokerTestSupport
import Foundation
import Testing

@testable import BeaconStore

@Suite struct StoreDatabaseTests {
    /// Deleted with the suite's instance, which Swift Testing drops once the test has ended, pass or fail.
    let temporaryDirectory: TemporaryDirectory
    var directory: URL { temporaryDirectory.url }

    init() throws {
        temporaryDirectory = try TemporaryDirectory(prefix: "store")
    }

    func schema(_ count: Int) -> StoreSchema {
        var schema = StoreSchema()
        for index in 1...count {
            schema.register("v\(index)", sql: "CREATE TABLE t\(index) (id INTEGER PRIMARY KEY)")
        }
        return schema
    }

    @Test func opensRealFileInWALWithChosenDurability() throws {
        let path = directory.appendingPathComponent("hub.db").path
        let normal = try StoreDatabase(path: path, schema: schema(1))
        #expect(try normal.pragma("journal_mode") == "wal")
        #expect(try normal.pragma("synchronous") == "1")
        let full = try StoreDatabase(
            path: directory.appendingPathComponent("full.db").path, durability: .full, schema: schema(1))
        #expect(try full.pragma("synchronous") == "2")
        #expect(FileManager.default.fileExists(atPath: path))
    }

    @Test func upgradesAnOlderDatabaseInPlace() async throws {
        let path = directory.appendingPathComponent("hub.db").path
        let old = try StoreDatabase(path: path, schema: schema(1))
        try await old.execute("INSERT INTO t1 (id) VALUES (7)")
        try old.close()
        let upgraded = try StoreDatabase(path: path, schema: schema(3))
        #expect(try StoreSchema.appliedMigrations(in: upgraded) == ["v1", "v2", "v3"])
        #expect(try await upgraded.fetchInteger("SELECT id FROM t1") == 7)
        #expect(try await upgraded.integrityCheck() == "ok")
    }

    @Test func refusesADatabaseFromANewerVersion() throws {
        let path = directory.appendingPathComponent("hub.db").path
        try StoreDatabase(path: path, schema: schema(3)).close()
        do {
            _ = try StoreDatabase(path: path, schema: schema(2))
            Issue.record("opened a newer database")
        } catch {
            #expect(error.code == .newerSchema)
            #expect(error.message.contains("upgrade"))
        }
    }

    @Test func unwritableDirectoryIsAClearError() {
        do {
            _ = try StoreDatabase(path: "/nonexistent-dir/hub.db", schema: schema(1))
            Issue.record("opened a database in a missing directory")
        } catch {
            #expect(error.code == .cannotOpen)
            #expect(error.message.contains("/nonexistent-dir/hub.db"))
        }
    }
}

/// The outbox's deletes commit without waiting for the disk; everything else on that connection still does.
@Suite struct LazyCommitTests {
    struct Refused: Error {}

    /// Deleted with the suite's instance, which Swift Testing drops once the test has ended, pass or fail.
    let temporaryDirectory: TemporaryDirectory
    var directory: URL { temporaryDirectory.url }

    init() throws {
        temporaryDirectory = try TemporaryDirectory(prefix: "store")
    }

    @Test func aCommitThatDoesNotWaitForTheDiskLeavesTheConnectionAtFull() async throws {
        var schema = StoreSchema()
        schema.register("v1", sql: "CREATE TABLE t (id INTEGER PRIMARY KEY)")
        let database = try StoreDatabase(
            path: directory.appendingPathComponent("full.db").path, durability: .full, schema: schema)
        defer { try? database.close() }
        try await database.execute("INSERT INTO t (id) VALUES (1), (2)")
        try await database.writeWithoutWaitingForDisk { db in try db.execute(sql: "DELETE FROM t WHERE id = 1") }
        #expect(try database.pragma("synchronous") == "2")
        #expect(try await database.fetchInteger("SELECT COUNT(*) FROM t") == 1)
        // A failing change is rolled back, and the level is restored all the same.
        await #expect(throws: Refused.self) {
            try await database.writeWithoutWaitingForDisk { db in
                try db.execute(sql: "DELETE FROM t")
                throw Refused()
            }
        }
        #expect(try database.pragma("synchronous") == "2")
        #expect(try await database.fetchInteger("SELECT COUNT(*) FROM t") == 1)
    }
}
