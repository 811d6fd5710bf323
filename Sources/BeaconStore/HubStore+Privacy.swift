import GRDB

extension HubStore {
    /// Rows deleted by `forget`, per table.
    public typealias Forgotten = [String: Int]

    /// Deletes every row about one tag: its visits, transitions, events, raw sightings of its beacon, its `tags` and
    /// `live_tags` rows; the dwell statistics its visits counted in are recomputed without them. `key` is the id the
    /// analytics tables hold (the tag id or its pseudonym), `liveTag` the real id, `beaconKey` the beacon as stored
    /// in raw sightings (read from `tags` when `nil`).
    public func forget(key: String, liveTag: String, beaconKey: String?) async throws -> Forgotten {
        try await database.write { db in
            var deleted: Forgotten = [:]
            let storedBeacon = try String.fetchOne(db, sql: "SELECT beacon FROM tags WHERE tag = ?", arguments: [key])
            let hours = try Row.fetchAll(
                db, sql: "SELECT DISTINCT zone, enter FROM visits WHERE tag = ? AND exit IS NOT NULL", arguments: [key]
            ).map { DwellKey(zone: $0["zone"], hour: Self.hour(of: $0["enter"])) }
            for (table, column, value) in [
                ("visits", "tag", key), ("transitions", "tag", key), ("events", "tag", key), ("tags", "tag", key),
                ("live_tags", "tag", liveTag), ("sightings", "beacon", beaconKey ?? storedBeacon ?? key),
                ("tag_health", "tag", liveTag), ("battery_hourly", "tag", key),
            ] {
                try db.execute(sql: "DELETE FROM \(table) WHERE \(column) = ?", arguments: [value])
                deleted[table] = db.changesCount
            }
            for hour in Set(hours) { try Self.recomputeDwell(hour, db) }
            return deleted
        }
    }
}
