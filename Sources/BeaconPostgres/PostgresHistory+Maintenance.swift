import BeaconStore
import Foundation
import Logging
import PostgresNIO

extension PostgresHistory {
    /// Runs `work` in one transaction on a pooled connection (no writer lock: identity, venue and `forget` are safe
    /// beside the writing hub, whose rows PostgreSQL locks row by row).
    func pooledTransaction<T: Sendable>(
        _ work: @Sendable (PostgresConnection) async throws -> T
    ) async throws -> T {
        do {
            return try await client.withTransaction(logger: logger) { connection in try await work(connection) }
        } catch {
            throw StoreError(postgres: error, location: location)
        }
    }

    func adoptRows(site: String, keyID: String?) async throws {
        let location = self.location
        let logger = self.logger
        try await pooledTransaction { connection in
            var stored: [String: String] = [:]
            for try await (key, value) in try await connection.query(
                "SELECT key, value FROM meta WHERE site = \(site) FOR UPDATE", logger: logger
            ).decode((String, String).self) { stored[key] = value }
            let storedKey = stored["pseudonym_key"] ?? "none"
            if stored["site"] != nil, storedKey != (keyID ?? "none") {
                let problem =
                    storedKey == "none"
                    ? "site \(site)'s history in \(location) holds real tag ids, but store.pseudonymise is on: use "
                        + "another database, or turn pseudonymise off"
                    : keyID == nil
                        ? "site \(site)'s history in \(location) holds pseudonymised ids, but store.pseudonymise is "
                            + "off: turn it on with the same key file"
                        : "site \(site)'s history in \(location) was pseudonymised with another key (fingerprint "
                            + "\(storedKey)): restore that key file (every hub of the site needs the same key)"
                throw StoreError(.mismatch, problem)
            }
            for (key, value) in [("site", site), ("pseudonym_key", keyID ?? "none")] {
                try await connection.query(
                    """
                    INSERT INTO meta (site, key, value) VALUES (\(site), \(key), \(value))
                    ON CONFLICT (site, key) DO UPDATE SET value = excluded.value
                    """, logger: logger)
            }
        }
    }

    func describeRows(zones: [HubStore.ZoneRow], gateways: [HubStore.GatewayRow]) async throws {
        let site = self.site
        let logger = self.logger
        let zoneIDs = zones.map(\.id)
        let zoneNames = zones.map { $0.name ?? "" }
        let named = zones.map { $0.name != nil }
        let gatewayIDs = gateways.map(\.id)
        let gatewayZones = gateways.map { $0.zone ?? "" }
        let inZone = gateways.map { $0.zone != nil }
        let xs = gateways.map(\.x)
        let ys = gateways.map(\.y)
        try await pooledTransaction { connection in
            try await connection.query(
                """
                INSERT INTO zones (site, id, name)
                SELECT \(site), i, CASE WHEN hn THEN n END FROM unnest(\(zoneIDs), \(zoneNames), \(named)) AS u(i, n, hn)
                ON CONFLICT (site, id) DO UPDATE SET name = excluded.name
                """, logger: logger)
            try await connection.query(
                """
                INSERT INTO gateways (site, id, zone, x, y)
                SELECT \(site), i, CASE WHEN hz THEN z END, x, y
                FROM unnest(\(gatewayIDs), \(gatewayZones), \(inZone), \(xs), \(ys)) AS u(i, z, hz, x, y)
                ON CONFLICT (site, id) DO UPDATE SET zone = excluded.zone, x = excluded.x, y = excluded.y
                """, logger: logger)
        }
    }

    /// Deletes the tag's rows in every site and recomputes the dwell hours its visits counted in.
    func forgetRows(key: String, liveTag: String, beaconKey: String?) async throws -> HubStore.Forgotten {
        let logger = self.logger
        return try await pooledTransaction { connection in
            var deleted: HubStore.Forgotten = [:]
            var beacons: Set<String> = beaconKey.map { [$0] } ?? []
            if beaconKey == nil {
                for try await beacon in try await connection.query(
                    "SELECT beacon FROM tags WHERE tag = \(key)", logger: logger
                ).decode(String.self) { beacons.insert(beacon) }
                if beacons.isEmpty { beacons.insert(key) }
            }
            var hours: Set<Writer.DwellKey> = []
            for try await (site, zone, enter) in try await connection.query(
                "SELECT DISTINCT site, zone, enter FROM visits WHERE tag = \(key) AND exit IS NOT NULL", logger: logger
            ).decode((String, String, Double).self) {
                hours.insert(Writer.DwellKey(site: site, zone: zone, hour: Writer.hour(of: enter)))
            }
            for (table, column, values) in [
                ("visits", "tag", [key]), ("open_visits", "tag", [key]), ("transitions", "tag", [key]),
                ("events", "tag", [key]), ("tags", "tag", [key]), ("live_tags", "tag", [liveTag]),
                ("sightings", "beacon", beacons.sorted()), ("tag_health", "tag", [liveTag]),
                ("battery_hourly", "tag", [key]),
            ] {
                var count = 0
                for try await _ in try await connection.query(
                    "DELETE FROM \(unescaped: table) WHERE \(unescaped: column) = ANY(\(values)) RETURNING 1",
                    logger: logger
                ) { count += 1 }
                if table != "open_visits" { deleted[table] = count }
            }
            for hour in hours { try await Writer.recomputeDwell(hour, connection, logger) }
            return deleted
        }
    }
}

extension PostgresHistory.Writer {
    /// Deletes raw sightings before `cutoff`: whole days' partitions are dropped; the day the cutoff falls in loses
    /// its older rows by `DELETE` (retention is in hours). Sightings of every site share the partitions, so the
    /// retention of the hub that prunes applies to all: give every site's hub the same `rawRetentionHours`.
    func pruneSightings(before cutoff: Double) async throws -> Int {
        let logger = self.logger
        let day = PostgresSchema.partitioned.first { $0.daily }!
        let current = PostgresSchema.partition(of: day, at: cutoff)
        let connection = try await locked()
        do {
            var old: [String] = []
            for try await (name, bound) in try await connection.query(
                """
                SELECT c.relname, pg_get_expr(c.relpartbound, c.oid) FROM pg_inherits i
                JOIN pg_class c ON c.oid = i.inhrelid JOIN pg_class p ON p.oid = i.inhparent
                WHERE p.relname = 'sightings'
                """, logger: logger
            ).decode((String, String).self) where name < current.name && bound.contains("FOR VALUES") {
                old.append(name)
            }
            var removed = 0
            for name in old.sorted() {
                for try await count in try await connection.query(
                    "SELECT count(*) FROM \(unescaped: name)", logger: logger
                ).decode(Int.self) { removed += count }
                try await connection.query("DROP TABLE \(unescaped: name)", logger: logger)
                partitions.remove(name)
            }
            for try await _ in try await connection.query(
                "DELETE FROM sightings WHERE t < \(cutoff) RETURNING 1", logger: logger
            ) { removed += 1 }
            return removed
        } catch {
            await disconnect(releasing: false)
            throw StoreError(postgres: error, location: location)
        }
    }

    /// Deletes this site's hourly battery readings of hours before `cutoff`.
    func pruneBatteryReadings(before cutoff: Double) async throws -> Int {
        let logger = self.logger
        let connection = try await locked()
        do {
            var removed = 0
            let hour = Int64((cutoff / 3600).rounded(.down))
            for try await _ in try await connection.query(
                "DELETE FROM battery_hourly WHERE site = \(site) AND hour < \(hour) RETURNING 1", logger: logger
            ) { removed += 1 }
            return removed
        } catch {
            await disconnect(releasing: false)
            throw StoreError(postgres: error, location: location)
        }
    }
}
