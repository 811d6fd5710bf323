import GRDB

extension HubStore {
    /// A stored event (the `events` table); `tag` is the stored id (a pseudonym when the store pseudonymises).
    public struct StoredEvent: Sendable, Hashable, Codable {
        public var id: Int64
        public var t: Double
        public var type: String
        public var tag: String?
        public var zone: String?
        public var previousZone: String?
        public var confidence: Double
        public var dwellSeconds: Double?
        public var region: String?
        public var code: String?
        public var gateway: String?
        public var reason: String

        public init(
            id: Int64, t: Double, type: String, tag: String?, zone: String?, previousZone: String?, confidence: Double,
            dwellSeconds: Double?, region: String?, code: String?, gateway: String?, reason: String
        ) {
            self.id = id
            self.t = t
            self.type = type
            self.tag = tag
            self.zone = zone
            self.previousZone = previousZone
            self.confidence = confidence
            self.dwellSeconds = dwellSeconds
            self.region = region
            self.code = code
            self.gateway = gateway
            self.reason = reason
        }
    }

    /// Which events: each set field narrows; `types` empty means every type.
    public struct EventFilter: Sendable, Hashable {
        public var types: [String]
        public var tag: String?
        public var zone: String?
        public var since: Double?
        public var until: Double?

        public init(
            types: [String] = [], tag: String? = nil, zone: String? = nil, since: Double? = nil, until: Double? = nil
        ) {
            self.types = types
            self.tag = tag
            self.zone = zone
            self.since = since
            self.until = until
        }
    }

    /// Events in [since, until), newest first (what a reader of recent events wants), `offset` skipping that many.
    public func events(_ filter: EventFilter, limit: Int, offset: Int = 0) async throws -> [StoredEvent] {
        try await database.read { db in
            var clauses: [String] = []
            var arguments: StatementArguments = []
            if !filter.types.isEmpty {
                clauses.append("type IN (" + filter.types.map { _ in "?" }.joined(separator: ", ") + ")")
                for type in filter.types { arguments += [type] }
            }
            if let tag = filter.tag {
                clauses.append("tag = ?")
                arguments += [tag]
            }
            if let zone = filter.zone {
                clauses.append("(zone = ? OR previous_zone = ?)")
                arguments += [zone, zone]
            }
            if let since = filter.since {
                clauses.append("t >= ?")
                arguments += [since]
            }
            if let until = filter.until {
                clauses.append("t < ?")
                arguments += [until]
            }
            var sql = """
                SELECT id, t, type, tag, zone, previous_zone, confidence, dwell, region, code, gateway, reason
                FROM events
                """
            if !clauses.isEmpty { sql += " WHERE " + clauses.joined(separator: " AND ") }
            sql += " ORDER BY t DESC, id DESC LIMIT \(max(0, limit)) OFFSET \(max(0, offset))"
            return try Row.fetchAll(db, sql: sql, arguments: arguments).map { row in
                StoredEvent(
                    id: row["id"], t: row["t"], type: row["type"], tag: row["tag"], zone: row["zone"],
                    previousZone: row["previous_zone"], confidence: row["confidence"], dwellSeconds: row["dwell"],
                    region: row["region"], code: row["code"], gateway: row["gateway"], reason: row["reason"])
            }
        }
    }

    /// One zone's occupancy over time: the number of tags with a visit covering each sample time.
    public struct OccupancySeries: Sendable, Hashable, Codable {
        public var zone: String
        /// Sample times: `since`, `since + step`, … below `until`.
        public var t: [Double]
        public var count: [Int]
    }
}
