import BeaconStore
import PostgresNIO

extension PostgresHistory {
    public func addCalibration(_ version: CalibrationVersion) async throws -> CalibrationVersion {
        try await ensureSchema()
        let site = self.site
        let logger = self.logger
        return try await pooledTransaction { connection in
            // Two hubs of the site never number alike: the site's rows are locked while the next number is taken.
            let key = "calibrations/" + site
            _ = try await connection.query("SELECT pg_advisory_xact_lock(hashtext(\(key)))", logger: logger)
            var next = 1
            for try await newest in try await connection.query(
                "SELECT coalesce(max(version), 0) FROM calibrations WHERE site = \(site)", logger: logger
            ).decode(Int.self) { next = newest + 1 }
            var stored = version
            stored.version = next
            try await connection.query(
                """
                INSERT INTO calibrations (site, version, created, who, note, kind, restores, zones, gateways,
                        accuracy_before, accuracy_after, body)
                VALUES (\(site), \(stored.version), \(stored.created), \(stored.who), \(stored.note),
                    \(stored.kind.rawValue), \(stored.restores), \(stored.zones), \(stored.gateways), \(stored.before),
                    \(stored.after), \(stored.body))
                """, logger: logger)
            return stored
        }
    }

    public func calibrationVersions() async throws -> [CalibrationVersion] {
        try await ensureSchema()
        return try await rows(
            """
            SELECT version, created, who, note, kind, restores, zones, gateways, accuracy_before, accuracy_after,
                NULL::text
            FROM calibrations WHERE site = \(site) ORDER BY version DESC
            """, Self.calibrationVersion)
    }

    public func calibration(version: Int) async throws -> CalibrationVersion? {
        try await ensureSchema()
        return try await rows(
            """
            SELECT version, created, who, note, kind, restores, zones, gateways, accuracy_before, accuracy_after, body
            FROM calibrations WHERE site = \(site) AND version = \(version)
            """, Self.calibrationVersion
        ).first
    }

    @Sendable static func calibrationVersion(_ row: PostgresRow) throws -> CalibrationVersion {
        let (version, created, who, note, kind, restores, zones, gateways, before, after, body) = try row.decode(
            (Int, Double, String, String?, String, Int?, Int, Int, Double?, Double?, String?).self)
        return CalibrationVersion(
            version: version, created: created, who: who, note: note,
            kind: CalibrationVersion.Kind(rawValue: kind) ?? .walk, restores: restores, zones: zones,
            gateways: gateways, before: before, after: after, body: body)
    }
}
