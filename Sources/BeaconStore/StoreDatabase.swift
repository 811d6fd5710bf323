import Foundation
import GRDB

/// One SQLite database file with its single writer connection (GRDB's `DatabaseQueue`, which runs every access on
/// its own serial queue, off the cooperative thread pool), WAL journaling and versioned migrations.
///
/// One writer connection per file is deliberate: SQLite 3.40 (Debian 12) has a WAL bug when two connections write or
/// checkpoint at once.
public final class StoreDatabase: Sendable {
    /// How hard SQLite works to survive crashes (docs/decisions/0002-sqlite-through-grdb.md).
    public enum Durability: String, Sendable, Hashable, CaseIterable {
        /// WAL + synchronous=NORMAL: survives a killed process; the last commits may be lost on power loss.
        case normal
        /// WAL + synchronous=FULL: also survives power loss, at a cost per commit.
        case full
    }

    public let path: String
    let queue: DatabaseQueue
    /// The level every transaction commits at, unless `writeWithoutWaitingForDisk` says otherwise.
    let durability: Durability

    /// Opens (creating if needed) the database at `path` and brings its schema up to date.
    ///
    /// A database written by a newer BeaconTracker (it holds migrations this build does not know) is refused rather
    /// than altered.
    public init(path: String, durability: Durability = .normal, schema: StoreSchema) throws(StoreError) {
        if let problem = Self.locationProblem(path) { throw problem }
        self.durability = durability
        var configuration = Configuration()
        configuration.busyMode = .timeout(5)
        configuration.prepareDatabase { db in
            try db.execute(sql: "PRAGMA synchronous = \(durability == .full ? "FULL" : "NORMAL")")
            try db.execute(sql: "PRAGMA foreign_keys = ON")
        }
        do {
            queue = try DatabaseQueue(path: path, configuration: configuration)
            try queue.writeWithoutTransaction { db in
                try db.execute(sql: "PRAGMA journal_mode = WAL")
            }
        } catch {
            throw StoreError(
                .cannotOpen,
                "cannot open database \(path) (\(error)): check the directory exists and is writable, and the disk "
                    + "has space")
        }
        self.path = path
        do {
            let superseded = try queue.read { db in try schema.migrator.hasBeenSuperseded(db) }
            if superseded {
                throw StoreError(
                    .newerSchema,
                    "database \(path) was written by a newer BeaconTracker: upgrade this program, or restore a backup "
                        + "made by this version")
            }
            try schema.migrator.migrate(queue)
        } catch let error as StoreError {
            throw error
        } catch {
            throw StoreError(.io, "cannot migrate database \(path): \(error)")
        }
    }

    /// Opens an existing database read-only, for queries beside a running writer. Its schema must be one this
    /// build knows (older ones are read as they are only if no migration is missing).
    public init(readingFrom path: String, schema: StoreSchema) throws(StoreError) {
        durability = .normal
        var configuration = Configuration()
        configuration.readonly = true
        configuration.busyMode = .timeout(5)
        do {
            queue = try DatabaseQueue(path: path, configuration: configuration)
        } catch {
            throw StoreError(.cannotOpen, "cannot open database \(path) for reading (\(error)): check it is readable")
        }
        self.path = path
        let state: (superseded: Bool, complete: Bool)
        do {
            state = try queue.read { db in
                (try schema.migrator.hasBeenSuperseded(db), try schema.migrator.hasCompletedMigrations(db))
            }
        } catch {
            throw StoreError(.io, "cannot read database \(path): \(error)")
        }
        if state.superseded {
            throw StoreError(
                .newerSchema, "database \(path) was written by a newer BeaconTracker: upgrade this program to read it")
        }
        if !state.complete {
            throw StoreError(
                .olderSchema,
                "database \(path) has an older schema: start beacon-hub run (or any writing command) once to upgrade it"
            )
        }
    }

    /// Runs `work` in a write transaction on the writer's serial queue.
    func write<T: Sendable>(_ work: @escaping @Sendable (Database) throws -> T) async throws -> T {
        do {
            return try await queue.write(work)
        } catch let error as DatabaseError {
            throw StoreError(error, path: path)
        }
    }

    /// Runs `work` in a write transaction committed at synchronous=NORMAL whatever the database's durability: the
    /// commit does not wait for the disk, and a power cut may undo it (never a kill; and the next commit at FULL makes
    /// it durable with its own, as the WAL is synced in order). For changes whose loss is harmless: the outbox's
    /// deletes of acknowledged batches (one lost is sent again, and the hub drops the duplicate).
    func writeWithoutWaitingForDisk<T: Sendable>(_ work: @escaping @Sendable (Database) throws -> T) async throws -> T {
        guard durability == .full else { return try await write(work) }
        do {
            return try await queue.writeWithoutTransaction { db in
                try db.execute(sql: "PRAGMA synchronous = NORMAL")
                defer { try? db.execute(sql: "PRAGMA synchronous = FULL") }
                var result: T?
                try db.inTransaction {
                    result = try work(db)
                    return .commit
                }
                return result!
            }
        } catch let error as DatabaseError {
            throw StoreError(error, path: path)
        }
    }

    /// Runs `work` in a write transaction, blocking the calling thread: for offline tools (replay) that run on their
    /// own thread, never from async code.
    func writeNow<T>(_ work: (Database) throws -> T) throws -> T {
        do {
            return try queue.write(work)
        } catch let error as DatabaseError {
            throw StoreError(error, path: path)
        }
    }

    /// Runs `work` for reading, blocking the calling thread (offline tools).
    func readNow<T>(_ work: (Database) throws -> T) throws -> T {
        do {
            return try queue.read(work)
        } catch let error as DatabaseError {
            throw StoreError(error, path: path)
        }
    }

    /// Runs `work` for reading on the writer's serial queue.
    func read<T: Sendable>(_ work: @escaping @Sendable (Database) throws -> T) async throws -> T {
        do {
            return try await queue.read(work)
        } catch let error as DatabaseError {
            throw StoreError(error, path: path)
        }
    }

    /// Writes a consistent, compact copy of the database to `target` (which must not exist) with `VACUUM INTO`: one
    /// read transaction, so beside a running writer it copies the last commit without holding the writer up. Works on
    /// a read-only connection.
    public func copy(to target: String) async throws {
        do {
            try await queue.writeWithoutTransaction { db in
                try db.execute(sql: "VACUUM INTO ?", arguments: [target])
            }
        } catch let error as DatabaseError {
            throw StoreError(error, path: target)
        }
    }

    /// Executes SQL statements in one write transaction (administration and tests; callers never see GRDB).
    public func execute(_ sql: String) async throws {
        try await write { db in try db.execute(sql: sql) }
    }

    /// The first column of the first row of `sql` as an integer.
    public func fetchInteger(_ sql: String) async throws -> Int? {
        try await read { db in try Int.fetchOne(db, sql: sql) }
    }

    /// The first column of the first row of `sql` as text.
    public func fetchString(_ sql: String) async throws -> String? {
        try await read { db in try String.fetchOne(db, sql: sql) }
    }

    /// `PRAGMA integrity_check`: "ok" for a sound file, otherwise SQLite's list of problems.
    public func integrityCheck() async throws -> String {
        try await read { db in try String.fetchAll(db, sql: "PRAGMA integrity_check").joined(separator: "; ") }
    }

    /// Checkpoints and closes the connection now, rather than whenever the last reference goes: a second
    /// connection to the same file must never overlap this one (the SQLite 3.40 WAL bug).
    public func close() throws(StoreError) {
        do {
            try queue.close()
        } catch {
            throw StoreError(.io, "cannot close database \(path): \(error)")
        }
    }

    /// Current value of a pragma, for checks and diagnostics.
    public func pragma(_ name: String) throws -> String? {
        try queue.read { db in try String.fetchOne(db, sql: "PRAGMA \(name)") }
    }
}
