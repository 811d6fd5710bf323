import Foundation
import GRDB

/// The agent's durable outbox: every sighting batch is stored (with its boot and sequence number) before it is
/// published, and deleted only when the hub's acknowledgement covers it.
///
/// Opened with `synchronous=FULL`: a gateway is a Raspberry Pi whose power is pulled without warning, and a batch
/// the agent believed stored must still be there after the reboot (NORMAL survives a killed process, not power loss).
/// The cost, one fsync per stored batch, is a few commits per second at most; deleting acknowledged batches does not
/// wait for the disk (`acknowledge`).
public final class Outbox: Sendable {
    /// One stored batch.
    public struct Batch: Sendable, Hashable {
        public var boot: String
        public var seq: UInt64
        /// Unix seconds when it was stored.
        public var created: Double
        /// The encoded contract payload, sent as is.
        public var payload: [UInt8]
    }

    /// Depth, for the heartbeat.
    public struct Depth: Sendable, Hashable {
        public var batches: Int
        public var bytes: Int
        public var oldest: Double?
    }

    let database: StoreDatabase

    /// The outbox schema: append migrations, never edit them.
    static var schema: StoreSchema {
        var schema = StoreSchema()
        schema.register(
            "outbox-1",
            sql: """
                CREATE TABLE boots (
                    boot TEXT PRIMARY KEY,
                    started REAL NOT NULL,
                    last_seq INTEGER NOT NULL DEFAULT 0
                );
                CREATE TABLE batches (
                    boot TEXT NOT NULL REFERENCES boots(boot),
                    seq INTEGER NOT NULL,
                    created REAL NOT NULL,
                    bytes INTEGER NOT NULL,
                    payload BLOB NOT NULL,
                    PRIMARY KEY (boot, seq)
                );
                CREATE INDEX batches_created ON batches(created);
                CREATE TABLE counters (name TEXT PRIMARY KEY, value INTEGER NOT NULL);
                """)
        return schema
    }

    public init(path: String) throws(StoreError) {
        database = try StoreDatabase(path: path, durability: .full, schema: Self.schema)
    }

    /// Opens an outbox read-only, beside the agent that writes it (to look at its depth).
    public init(readingFrom path: String) throws(StoreError) {
        database = try StoreDatabase(readingFrom: path, schema: Self.schema)
    }

    public func close() throws(StoreError) { try database.close() }

    /// Starts a boot: batches stored from now on are numbered 1, 2, 3, … under `boot`.
    public func startBoot(_ boot: String, at time: Double) async throws {
        try await database.write { db in
            // Earlier boots are kept only while they still hold batches (their numbering must not restart).
            try db.execute(
                sql: "DELETE FROM boots WHERE NOT EXISTS (SELECT 1 FROM batches WHERE batches.boot = boots.boot)")
            try db.execute(sql: "INSERT INTO boots (boot, started) VALUES (?, ?)", arguments: [boot, time])
        }
    }

    /// Stores a batch under the boot's next sequence number; `encode` builds the payload for that number.
    /// Returns the stored batch.
    public func append(
        boot: String, at time: Double, encode: @escaping @Sendable (UInt64) throws -> [UInt8]
    ) async throws -> Batch {
        try await database.write { db in
            guard
                let last = try UInt64.fetchOne(db, sql: "SELECT last_seq FROM boots WHERE boot = ?", arguments: [boot])
            else { throw StoreError(.io, "boot \(boot) was not started in the outbox") }
            let seq = last + 1
            let payload = try encode(seq)
            try db.execute(sql: "UPDATE boots SET last_seq = ? WHERE boot = ?", arguments: [seq, boot])
            try db.execute(
                sql: "INSERT INTO batches (boot, seq, created, bytes, payload) VALUES (?, ?, ?, ?, ?)",
                arguments: [boot, seq, time, payload.count, Data(payload)])
            return Batch(boot: boot, seq: seq, created: time, payload: payload)
        }
    }

    /// Up to `limit` stored batches, oldest first.
    public func pending(limit: Int) async throws -> [Batch] {
        try await database.read { db in
            try Row.fetchAll(
                db, sql: "SELECT boot, seq, created, payload FROM batches ORDER BY created, seq LIMIT ?",
                arguments: [limit]
            ).map { row in
                Batch(
                    boot: row["boot"], seq: row["seq"], created: row["created"], payload: Array(row["payload"] as Data))
            }
        }
    }

    /// Deletes the batches of `boot` with a sequence number up to `seq`; returns how many. Committed without waiting
    /// for the disk (one fsync fewer per acknowledgement): a delete that a power cut undoes only sends a batch again,
    /// which the hub drops as a duplicate; a stored batch is never lost that way.
    @discardableResult
    public func acknowledge(boot: String, upTo seq: UInt64) async throws -> Int {
        try await database.writeWithoutWaitingForDisk { db in
            try db.execute(sql: "DELETE FROM batches WHERE boot = ? AND seq <= ?", arguments: [boot, seq])
            return db.changesCount
        }
    }

    /// Drops the oldest batches beyond `maxBytes` of payload or older than `maxAge` seconds; returns how many were
    /// dropped (also added to the persistent `dropped` counter).
    @discardableResult
    public func enforceBounds(maxBytes: Int, maxAge: Double, now: Double) async throws -> Int {
        try await database.write { db in
            try db.execute(sql: "DELETE FROM batches WHERE created < ?", arguments: [now - maxAge])
            var dropped = db.changesCount
            var total = try Int.fetchOne(db, sql: "SELECT COALESCE(SUM(bytes), 0) FROM batches") ?? 0
            while total > maxBytes {
                guard
                    let row = try Row.fetchOne(
                        db, sql: "SELECT boot, seq, bytes FROM batches ORDER BY created, seq LIMIT 1")
                else { break }
                try db.execute(
                    sql: "DELETE FROM batches WHERE boot = ? AND seq = ?",
                    arguments: [row["boot"] as String, row["seq"] as Int64])
                total -= row["bytes"] as Int
                dropped += 1
            }
            if dropped > 0 {
                try db.execute(
                    sql: """
                        INSERT INTO counters (name, value) VALUES ('dropped', ?)
                        ON CONFLICT(name) DO UPDATE SET value = value + excluded.value
                        """, arguments: [dropped])
            }
            return dropped
        }
    }

    /// How much is waiting.
    public func depth() async throws -> Depth {
        try await database.read { db in
            let row = try Row.fetchOne(
                db, sql: "SELECT COUNT(*) AS n, COALESCE(SUM(bytes), 0) AS b, MIN(created) AS o FROM batches")
            return Depth(batches: row?["n"] ?? 0, bytes: row?["b"] ?? 0, oldest: row?["o"])
        }
    }

    /// Per boot — `current` and every boot with batches pending — the lowest sequence still held, or the next one
    /// when none is: what the hub has not received below it will never be sent (`GatewayStatus.Outbox.resendFrom`).
    public func resendFrom(current: String) async throws -> [String: UInt64] {
        try await database.read { db in
            let rows = try Row.fetchAll(
                db,
                sql: """
                    SELECT b.boot AS boot, COALESCE(MIN(p.seq), b.last_seq + 1) AS first
                    FROM boots b LEFT JOIN batches p ON p.boot = b.boot
                    WHERE b.boot = ? OR p.boot IS NOT NULL
                    GROUP BY b.boot
                    """, arguments: [current])
            var result: [String: UInt64] = [:]
            for row in rows { result[row["boot"]] = row["first"] }
            return result
        }
    }

    /// The highest sequence number stored under `boot`, if the outbox still knows the boot.
    public func lastSequence(boot: String) async throws -> UInt64? {
        try await database.read { db in
            try UInt64.fetchOne(db, sql: "SELECT last_seq FROM boots WHERE boot = ?", arguments: [boot])
        }
    }

    /// Batches dropped by the bounds since the outbox was created.
    public func droppedTotal() async throws -> Int {
        try await database.read { db in
            try Int.fetchOne(db, sql: "SELECT value FROM counters WHERE name = 'dropped'") ?? 0
        }
    }
}
