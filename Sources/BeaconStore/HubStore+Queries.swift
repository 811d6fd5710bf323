import Foundation
import GRDB

extension HubStore {
    /// One zone visit.
    public struct Visit: Sendable, Hashable, Codable {
        public var id: Int64
        public var tag: String
        public var zone: String
        public var enter: Double
        /// `nil` while the tag is still in the zone.
        public var exit: Double?
        public var duration: Double?
        /// The lower of the enter and exit decisions' probabilities.
        public var confidence: Double
        /// A suspect event (a move faster than walking, a cloned beacon) was raised during the visit.
        public var suspect: Bool

        public init(
            id: Int64, tag: String, zone: String, enter: Double, exit: Double?, duration: Double?, confidence: Double,
            suspect: Bool
        ) {
            self.id = id
            self.tag = tag
            self.zone = zone
            self.enter = enter
            self.exit = exit
            self.duration = duration
            self.confidence = confidence
            self.suspect = suspect
        }
    }

    /// Which visits a query wants: those overlapping [since, until), of a tag and/or a zone.
    public struct VisitFilter: Sendable, Hashable {
        public var tag: String?
        public var zone: String?
        public var since: Double?
        public var until: Double?

        public init(tag: String? = nil, zone: String? = nil, since: Double? = nil, until: Double? = nil) {
            self.tag = tag
            self.zone = zone
            self.since = since
            self.until = until
        }
    }

    /// How `dwell` groups closed visits.
    public enum DwellGrouping: String, Sendable, Hashable, CaseIterable, Codable {
        case hour, day, zone, tag
        /// The hour of the day (0–23 in the report's time zone) the visits entered, over every day of the window:
        /// the shape of a typical day.
        case hourOfDay = "hour-of-day"
    }

    /// One row of a dwell report: the group (zone, and the hour or day start, or the tag) and its statistics.
    public struct DwellRow: Sendable, Hashable, Codable {
        public var zone: String?
        /// Unix seconds of the hour's or day's start.
        public var start: Double?
        public var tag: String?
        /// 0–23, for `hour-of-day`.
        public var hourOfDay: Int?
        public var statistics: DwellStatistics

        public init(
            zone: String?, start: Double?, tag: String?, hourOfDay: Int? = nil, statistics: DwellStatistics
        ) {
            self.zone = zone
            self.start = start
            self.tag = tag
            self.hourOfDay = hourOfDay
            self.statistics = statistics
        }
    }

    /// A zone sequence and how many times tags walked it.
    public struct Route: Sendable, Hashable, Codable {
        public var zones: [String]
        public var count: Int
    }

    /// One cell of the transition matrix.
    public struct Transition: Sendable, Hashable, Codable {
        public var from: String
        public var to: String
        public var count: Int
        /// Median seconds between leaving `from` and entering `to`.
        public var medianTransit: Double
    }

    /// Visits overlapping the filter's window, oldest first; `offset` skips that many (paging).
    public func visits(_ filter: VisitFilter, limit: Int?, offset: Int) async throws -> [Visit] {
        try await database.read { db in
            var clauses: [String] = []
            var arguments: StatementArguments = []
            if let tag = filter.tag {
                clauses.append("tag = ?")
                arguments += [tag]
            }
            if let zone = filter.zone {
                clauses.append("zone = ?")
                arguments += [zone]
            }
            if let since = filter.since {
                clauses.append("(exit IS NULL OR exit > ?)")
                arguments += [since]
            }
            if let until = filter.until {
                clauses.append("enter < ?")
                arguments += [until]
            }
            var sql = "SELECT id, tag, zone, enter, exit, duration, confidence, suspect FROM visits"
            if !clauses.isEmpty { sql += " WHERE " + clauses.joined(separator: " AND ") }
            sql += " ORDER BY enter, id"
            if let limit { sql += " LIMIT \(limit)" }
            if offset > 0 { sql += (limit == nil ? " LIMIT -1" : "") + " OFFSET \(offset)" }
            return try Row.fetchAll(db, sql: sql, arguments: arguments).map(Self.visit)
        }
    }

    static func visit(_ row: Row) -> Visit {
        let id: Int64 = row["id"]
        let tag: String = row["tag"]
        let zone: String = row["zone"]
        let enter: Double = row["enter"]
        let exit: Double? = row["exit"]
        let duration: Double? = row["duration"]
        let confidence: Double = row["confidence"]
        let suspect: Bool = row["suspect"]
        return Visit(
            id: id, tag: tag, zone: zone, enter: enter, exit: exit, duration: duration, confidence: confidence,
            suspect: suspect)
    }

    /// The rows of `dwell_hourly` in the window (an hour belongs to it when its visits could have entered in it).
    public func hourlyDwell(zone: String?, since: Double?, until: Double?) async throws -> [DwellRow] {
        try await database.read { db in
            var sql = "SELECT zone, hour, visits, tags, total, mean, median, p90 FROM dwell_hourly WHERE 1"
            var arguments: StatementArguments = []
            if let zone {
                sql += " AND zone = ?"
                arguments += [zone]
            }
            if let since {
                sql += " AND hour + 3600 > ?"
                arguments += [since]
            }
            if let until {
                sql += " AND hour < ?"
                arguments += [until]
            }
            sql += " ORDER BY hour, zone"
            return try Row.fetchAll(db, sql: sql, arguments: arguments).map { row in
                let statistics = DwellStatistics(
                    visits: row["visits"], tags: row["tags"], total: row["total"], mean: row["mean"],
                    median: row["median"], p90: row["p90"])
                let hour: Int64 = row["hour"]
                return DwellRow(zone: row["zone"], start: Double(hour), tag: nil, statistics: statistics)
            }
        }
    }

    /// Closed visits that entered in [since, until), of `zone` or every zone.
    public func closedVisits(zone: String?, since: Double?, until: Double?) async throws -> [ClosedVisit] {
        try await database.read { db in
            try Row.fetchAll(
                db,
                sql: """
                    SELECT tag, zone, enter, duration FROM visits
                    WHERE exit IS NOT NULL AND enter >= ? AND enter < ? AND (? IS NULL OR zone = ?)
                    """,
                arguments: [
                    since ?? -Double.greatestFiniteMagnitude, until ?? Double.greatestFiniteMagnitude, zone, zone,
                ]
            ).map { row in
                ClosedVisit(tag: row["tag"], zone: row["zone"], enter: row["enter"], duration: row["duration"])
            }
        }
    }

    /// Transitions entered in [since, until).
    public func transitions(since: Double?, until: Double?) async throws -> [TransitionRow] {
        try await database.read { db in
            try Row.fetchAll(
                db,
                sql: """
                    SELECT from_zone, to_zone, transit FROM transitions WHERE entered >= ? AND entered < ?
                    """, arguments: [since ?? -Double.greatestFiniteMagnitude, until ?? Double.greatestFiniteMagnitude]
            ).map { TransitionRow(from: $0["from_zone"], to: $0["to_zone"], transit: $0["transit"]) }
        }
    }

    /// The venue's zones as recorded (id, name), for reports that list empty zones too.
    public func zones() async throws -> [(id: String, name: String?)] {
        try await database.read { db in
            try Row.fetchAll(db, sql: "SELECT id, name FROM zones ORDER BY id").map { ($0["id"], $0["name"]) }
        }
    }

    /// The venue's gateways as recorded, where the hub has them, sorted by id.
    public func gateways() async throws -> [GatewayRow] {
        try await database.read { db in
            try Row.fetchAll(
                db, sql: "SELECT id, zone, x, y FROM gateways WHERE x IS NOT NULL AND y IS NOT NULL ORDER BY id"
            ).map { ($0["id"], $0["zone"], $0["x"], $0["y"]) }
        }
    }
}
