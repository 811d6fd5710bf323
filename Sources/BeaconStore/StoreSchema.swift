import GRDB

/// A database's ordered list of migrations. Each migration is registered once and never edited after it ships:
/// upgrades apply the missing ones in order.
public struct StoreSchema: Sendable {
    var migrator = DatabaseMigrator()

    public init() {}

    /// Appends a migration named `identifier` running `sql`.
    public mutating func register(_ identifier: String, sql: String) {
        migrator.registerMigration(identifier) { db in
            try db.execute(sql: sql)
        }
    }

    /// Identifiers of every migration applied to `database`, known to this build or not, sorted.
    public static func appliedMigrations(in database: StoreDatabase) throws -> [String] {
        let identifiers: Set<String> = try database.queue.read { db in
            try DatabaseMigrator().appliedIdentifiers(db)
        }
        return identifiers.sorted()
    }
}
