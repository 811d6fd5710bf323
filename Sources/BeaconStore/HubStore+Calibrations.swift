import GRDB

extension HubStore {
    public func addCalibration(_ version: CalibrationVersion) async throws -> CalibrationVersion {
        try await database.write { db in
            var stored = version
            stored.version = (try Int.fetchOne(db, sql: "SELECT max(version) FROM calibrations") ?? 0) + 1
            try db.execute(
                sql: """
                    INSERT INTO calibrations (version, created, who, note, kind, restores, zones, gateways,
                        accuracy_before, accuracy_after, body)
                    VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                    """,
                arguments: [
                    stored.version, stored.created, stored.who, stored.note, stored.kind.rawValue, stored.restores,
                    stored.zones, stored.gateways, stored.before, stored.after, stored.body,
                ])
            return stored
        }
    }

    public func calibrationVersions() async throws -> [CalibrationVersion] {
        try await database.read { db in
            try Row.fetchAll(
                db,
                sql: """
                    SELECT version, created, who, note, kind, restores, zones, gateways, accuracy_before, accuracy_after,
                        NULL AS body
                    FROM calibrations ORDER BY version DESC
                    """
            ).map(Self.calibrationVersion)
        }
    }

    public func calibration(version: Int) async throws -> CalibrationVersion? {
        try await database.read { db in
            try Row.fetchOne(
                db,
                sql: """
                    SELECT version, created, who, note, kind, restores, zones, gateways, accuracy_before, accuracy_after,
                        body
                    FROM calibrations WHERE version = ?
                    """, arguments: [version]
            ).map(Self.calibrationVersion)
        }
    }

    static func calibrationVersion(_ row: Row) -> CalibrationVersion {
        CalibrationVersion(
            version: row["version"], created: row["created"], who: row["who"], note: row["note"],
            kind: CalibrationVersion.Kind(rawValue: row["kind"]) ?? .walk, restores: row["restores"],
            zones: row["zones"], gateways: row["gateways"], before: row["accuracy_before"],
            after: row["accuracy_after"],
            body: row["body"])
    }
}
