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
    public func visits(_ filter: VisitFilter, limit: Int? = nil, offset: Int = 0) async throws -> [Visit] {
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

    /// Dwell statistics of closed visits that entered in [since, until), grouped. `hour` reads the table kept current
    /// as visits close; the other groupings compute from the visits (days start at midnight in `timeZone`).
    public func dwell(
        by grouping: DwellGrouping, zone: String? = nil, since: Double? = nil, until: Double? = nil,
        timeZone: TimeZone = .current
    ) async throws -> [DwellRow] {
        if grouping == .hour {
            return try await database.read { db in
                var sql = "SELECT zone, hour, visits, tags, total, mean, median, p90 FROM dwell_hourly WHERE 1"
                var arguments: StatementArguments = []
                if let zone {
                    sql += " AND zone = ?"
                    arguments += [zone]
                }
                // An hour belongs to the window when its visits could have entered in it.
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
        let closed = try await database.read { db in
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
                let visit: (tag: String, zone: String, enter: Double, duration: Double) = (
                    row["tag"], row["zone"], row["enter"], row["duration"]
                )
                return visit
            }
        }
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = timeZone
        struct Group: Hashable {
            var zone: String?
            var start: Double?
            var tag: String?
            var hourOfDay: Int?
        }
        var groups: [Group: [(tag: String, duration: Double)]] = [:]
        for visit in closed {
            let group =
                switch grouping {
                case .day:
                    Group(
                        zone: visit.zone,
                        start: calendar.startOfDay(for: Date(timeIntervalSince1970: visit.enter)).timeIntervalSince1970)
                case .hourOfDay:
                    Group(
                        zone: visit.zone,
                        hourOfDay: calendar.component(.hour, from: Date(timeIntervalSince1970: visit.enter)))
                case .zone: Group(zone: visit.zone)
                case .tag: Group(zone: zone, tag: visit.tag)
                case .hour: Group()
                }
            groups[group, default: []].append((visit.tag, visit.duration))
        }
        return groups.map { group, visits in
            DwellRow(
                zone: group.zone, start: group.start, tag: group.tag, hourOfDay: group.hourOfDay,
                statistics: DwellStatistics(visits)!)
        }.sorted { a, b in
            (a.start ?? 0, a.zone ?? "", a.hourOfDay ?? 0, a.tag ?? "")
                < (b.start ?? 0, b.zone ?? "", b.hourOfDay ?? 0, b.tag ?? "")
        }
    }

    /// The `top` most common sequences of `length` zones walked within one trip (visits joined while the gap between
    /// them is at most `tripGapSeconds`; repeated visits to the same zone count once), most common first.
    public func routes(top: Int, length: Int, since: Double? = nil, until: Double? = nil) async throws -> [Route] {
        let visits = try await visits(VisitFilter(since: since, until: until))
        var byTag: [String: [Visit]] = [:]
        for visit in visits { byTag[visit.tag, default: []].append(visit) }
        var counts: [[String]: Int] = [:]
        for (_, list) in byTag {
            var trip: [String] = []
            var lastExit: Double?
            func finish() {
                guard trip.count >= length else { return }
                for start in 0...(trip.count - length) {
                    counts[Array(trip[start..<(start + length)]), default: 0] += 1
                }
            }
            for visit in list {
                if let lastExit, visit.enter - lastExit > tripGapSeconds {
                    finish()
                    trip = []
                }
                if trip.last != visit.zone { trip.append(visit.zone) }
                lastExit = visit.exit ?? visit.enter
            }
            finish()
        }
        return counts.map { Route(zones: $0.key, count: $0.value) }
            .sorted { $0.count != $1.count ? $0.count > $1.count : $0.zones.lexicographicallyPrecedes($1.zones) }
            .prefix(top).map { $0 }
    }

    /// Zone-to-zone transitions entered in [since, until): counts and median transit times, busiest first.
    public func transitionMatrix(since: Double? = nil, until: Double? = nil) async throws -> [Transition] {
        let rows = try await database.read { db in
            try Row.fetchAll(
                db,
                sql: """
                    SELECT from_zone, to_zone, transit FROM transitions WHERE entered >= ? AND entered < ?
                    """, arguments: [since ?? -Double.greatestFiniteMagnitude, until ?? Double.greatestFiniteMagnitude]
            ).map { (from: $0["from_zone"] as String, to: $0["to_zone"] as String, transit: $0["transit"] as Double) }
        }
        var cells: [[String]: [Double]] = [:]
        for row in rows { cells[[row.from, row.to], default: []].append(row.transit) }
        return cells.map { key, transits in
            Transition(
                from: key[0], to: key[1], count: transits.count,
                medianTransit: DwellStatistics.percentile(0.5, ofSorted: transits.sorted()))
        }.sorted {
            $0.count != $1.count ? $0.count > $1.count : [$0.from, $0.to].lexicographicallyPrecedes([$1.from, $1.to])
        }
    }

    /// Who was in which zone at `t`: tags with a visit covering it (an open visit covers every time after its
    /// enter), by zone.
    public func occupancy(at t: Double) async throws -> [(zone: String, tags: [String])] {
        let rows = try await database.read { db in
            try Row.fetchAll(
                db,
                sql: """
                    SELECT zone, tag FROM visits WHERE enter <= ? AND (exit IS NULL OR exit > ?) ORDER BY zone, tag
                    """, arguments: [t, t]
            ).map { (zone: $0["zone"] as String, tag: $0["tag"] as String) }
        }
        var result: [(zone: String, tags: [String])] = []
        for row in rows {
            if result.last?.zone == row.zone {
                result[result.count - 1].tags.append(row.tag)
            } else {
                result.append((row.zone, [row.tag]))
            }
        }
        return result
    }

    /// The venue's zones as recorded (id, name), for reports that list empty zones too.
    public func zones() async throws -> [(id: String, name: String?)] {
        try await database.read { db in
            try Row.fetchAll(db, sql: "SELECT id, name FROM zones ORDER BY id").map { ($0["id"], $0["name"]) }
        }
    }
}
