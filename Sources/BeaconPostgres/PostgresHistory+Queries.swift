import BeaconStore
import Foundation
import PostgresNIO

extension PostgresHistory {
    /// A bound value of a query.
    enum Bind: Sendable {
        case text(String?)
        case number(Double?)
        case texts([String])
    }

    /// A query of `readSites`: `sql` with `{sites}` replaced by the sites' condition (bound after `binds`, which the
    /// SQL numbers from $1).
    func scoped(_ sql: String, _ binds: [Bind] = []) -> PostgresQuery {
        var bindings = PostgresBindings()
        for bind in binds {
            switch bind {
            case .text(let value): bindings.append(value)
            case .number(let value): bindings.append(value)
            case .texts(let values): bindings.append(values)
            }
        }
        var text = sql
        if let readSites, readSites.count == 1 {
            // Equality, not `ANY`: with it the planner merges the partitions' index scans in (site, zone, duration)
            // order instead of sorting a month of visits (half the time of a dwell report).
            bindings.append(readSites[0])
            text = text.replacingOccurrences(of: "{sites}", with: "site = $\(binds.count + 1)")
        } else if let readSites {
            bindings.append(readSites)
            text = text.replacingOccurrences(of: "{sites}", with: "site = ANY($\(binds.count + 1))")
        } else {
            text = text.replacingOccurrences(of: "{sites}", with: "TRUE")
        }
        return PostgresQuery(unsafeSQL: text, binds: bindings)
    }

    public func visits(_ filter: HubStore.VisitFilter, limit: Int?, offset: Int) async throws -> [HubStore.Visit] {
        try await ensureSchema()
        var clauses = ["{sites}"]
        var binds: [Bind] = []
        func bind(_ value: Bind) -> String {
            binds.append(value)
            return "$\(binds.count)"
        }
        if let tag = filter.tag { clauses.append("tag = \(bind(.text(tag)))") }
        if let zone = filter.zone { clauses.append("zone = \(bind(.text(zone)))") }
        if let since = filter.since { clauses.append("(exit IS NULL OR exit > \(bind(.number(since))))") }
        if let until = filter.until { clauses.append("enter < \(bind(.number(until)))") }
        var sql = """
            SELECT id, tag, zone, enter, exit, duration, confidence, suspect FROM visits
            WHERE \(clauses.joined(separator: " AND ")) ORDER BY enter, id
            """
        if let limit { sql += " LIMIT \(max(0, limit))" }
        if offset > 0 { sql += " OFFSET \(offset)" }
        return try await rows(scoped(sql, binds)) { row in
            let (id, tag, zone, enter, exit, duration, confidence, suspect) = try row.decode(
                (Int64, String, String, Double, Double?, Double?, Double, Bool).self)
            return HubStore.Visit(
                id: id, tag: tag, zone: zone, enter: enter, exit: exit, duration: duration, confidence: confidence,
                suspect: suspect)
        }
    }

    public func hourlyDwell(zone: String?, since: Double?, until: Double?) async throws -> [HubStore.DwellRow] {
        try await ensureSchema()
        let query = scoped(
            """
            SELECT zone, hour, visits, tags, total, mean, median, p90 FROM dwell_hourly
            WHERE {sites} AND ($1::text IS NULL OR zone = $1) AND ($2::float8 IS NULL OR hour + 3600 > $2)
            AND ($3::float8 IS NULL OR hour < $3) ORDER BY hour, zone
            """, [.text(zone), .number(since), .number(until)])
        return try await rows(query) { row in
            let (zone, hour, visits, tags, total, mean, median, p90) = try row.decode(
                (String, Int64, Int, Int, Double, Double, Double, Double).self)
            return HubStore.DwellRow(
                zone: zone, start: Double(hour), tag: nil,
                statistics: DwellStatistics(
                    visits: visits, tags: tags, total: total, mean: mean, median: median, p90: p90))
        }
    }

    /// Per zone or per tag, the server computes the statistics (a month of a busy site is millions of visits: they
    /// are not sent over). `percentile_cont` interpolates between nearest ranks as `DwellStatistics` does. Distinct
    /// tags are counted by their 64-bit hash, which sorts in a third of the time of the text (two tags share a hash
    /// with odds of about n² / 2⁶⁵: one in ten million for a million tags).
    public func dwell(
        by grouping: HubStore.DwellGrouping, zone: String?, since: Double?, until: Double?, timeZone: TimeZone
    ) async throws -> [HubStore.DwellRow] {
        guard grouping == .zone || grouping == .tag else {
            return try await computedDwell(by: grouping, zone: zone, since: since, until: until, timeZone: timeZone)
        }
        try await ensureSchema()
        let key = grouping == .zone ? "zone" : "tag"
        let query = scoped(
            """
            SELECT \(key), count(*), count(DISTINCT hashtextextended(tag, 0)), sum(duration),
            percentile_cont(ARRAY[0.5, 0.9]) WITHIN GROUP (ORDER BY duration) FROM visits
            WHERE {sites} AND exit IS NOT NULL AND ($1::text IS NULL OR zone = $1)
            AND ($2::float8 IS NULL OR enter >= $2) AND ($3::float8 IS NULL OR enter < $3)
            GROUP BY \(key) ORDER BY \(key)
            """, [.text(zone), .number(since), .number(until)])
        // Sorted here: the database's collation need not be Swift's order.
        return try await rows(query) { row in
            let (group, visits, tags, total, percentiles) = try row.decode((String, Int, Int, Double, [Double]).self)
            let statistics = DwellStatistics(
                visits: visits, tags: tags, total: total, mean: total / Double(visits), median: percentiles[0],
                p90: percentiles[1])
            return grouping == .zone
                ? HubStore.DwellRow(zone: group, start: nil, tag: nil, statistics: statistics)
                : HubStore.DwellRow(zone: zone, start: nil, tag: group, statistics: statistics)
        }.sorted { ($0.zone ?? "", $0.tag ?? "") < ($1.zone ?? "", $1.tag ?? "") }
    }

    public func closedVisits(zone: String?, since: Double?, until: Double?) async throws -> [HubStore.ClosedVisit] {
        try await ensureSchema()
        let query = scoped(
            """
            SELECT tag, zone, enter, duration FROM visits
            WHERE {sites} AND exit IS NOT NULL AND ($1::text IS NULL OR zone = $1)
            AND ($2::float8 IS NULL OR enter >= $2) AND ($3::float8 IS NULL OR enter < $3)
            """, [.text(zone), .number(since), .number(until)])
        return try await rows(query) { row in
            let (tag, zone, enter, duration) = try row.decode((String, String, Double, Double).self)
            return HubStore.ClosedVisit(tag: tag, zone: zone, enter: enter, duration: duration)
        }
    }

    public func transitions(since: Double?, until: Double?) async throws -> [HubStore.TransitionRow] {
        try await ensureSchema()
        let query = scoped(
            """
            SELECT from_zone, to_zone, transit FROM transitions
            WHERE {sites} AND ($1::float8 IS NULL OR entered >= $1) AND ($2::float8 IS NULL OR entered < $2)
            """, [.number(since), .number(until)])
        return try await rows(query) { row in
            let (from, to, transit) = try row.decode((String, String, Double).self)
            return HubStore.TransitionRow(from: from, to: to, transit: transit)
        }
    }

    public func zones() async throws -> [(id: String, name: String?)] {
        try await ensureSchema()
        let rows = try await rows(scoped("SELECT DISTINCT id, name FROM zones WHERE {sites} ORDER BY id")) { row in
            let (id, name) = try row.decode((String, String?).self)
            return ZoneName(id: id, name: name)
        }
        return rows.map { ($0.id, $0.name) }
    }

    struct ZoneName: Sendable {
        var id: String
        var name: String?
    }

    public func gateways() async throws -> [HubStore.GatewayRow] {
        try await ensureSchema()
        let query = scoped(
            "SELECT id, zone, x, y FROM gateways WHERE {sites} AND x IS NOT NULL AND y IS NOT NULL ORDER BY id, site")
        let rows = try await rows(query) { row in
            let (id, zone, x, y) = try row.decode((String, String?, Double, Double).self)
            return GatewayPlace(id: id, zone: zone, x: x, y: y)
        }
        return rows.map { ($0.id, $0.zone, $0.x, $0.y) }
    }

    struct GatewayPlace: Sendable {
        var id: String
        var zone: String?
        var x: Double
        var y: Double
    }

    public func events(
        _ filter: HubStore.EventFilter, limit: Int, offset: Int
    ) async throws -> [HubStore.StoredEvent] {
        try await ensureSchema()
        let query = scoped(
            """
            SELECT id, t, type, tag, zone, previous_zone, confidence, dwell, region, code, gateway, reason FROM events
            WHERE {sites} AND (cardinality($1::text[]) = 0 OR type = ANY($1)) AND ($2::text IS NULL OR tag = $2)
            AND ($3::text IS NULL OR zone = $3 OR previous_zone = $3) AND ($4::float8 IS NULL OR t >= $4)
            AND ($5::float8 IS NULL OR t < $5)
            ORDER BY t DESC, id DESC LIMIT \(max(0, limit)) OFFSET \(max(0, offset))
            """,
            [
                .texts(filter.types), .text(filter.tag), .text(filter.zone), .number(filter.since),
                .number(filter.until),
            ])
        return try await rows(query) { row in
            let (id, t, type, tag, zone, previousZone, confidence, dwell, region, code, gateway, reason) =
                try row.decode(
                    (
                        Int64, Double, String, String?, String?, String?, Double, Double?, String?, String?, String?,
                        String
                    ).self)
            return HubStore.StoredEvent(
                id: id, t: t, type: type, tag: tag, zone: zone, previousZone: previousZone, confidence: confidence,
                dwellSeconds: dwell, region: region, code: code, gateway: gateway, reason: reason)
        }
    }
}
