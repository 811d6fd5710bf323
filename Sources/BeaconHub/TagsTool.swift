import BeaconModel
import Foundation

/// `beacon-hub tags`: the tags that need someone — a battery below a level, or not heard for a while — as the running
/// hub knows them now (its dashboard's `/api/tags`, the retained tag states with their health). docs/hub.md, "Tags that
/// need someone".
public enum TagsTool {
    /// What to list: tags matching any of the conditions given; every tag when none is.
    public struct Selection: Sendable {
        /// A battery reading below this many mV.
        public var batteryBelow: Int?
        /// Not heard for at least this many seconds (or never heard since the hub started).
        public var missingFor: Double?

        public init(batteryBelow: Int? = nil, missingFor: Double? = nil) {
            self.batteryBelow = batteryBelow
            self.missingFor = missingFor
        }
    }

    /// One tag of `/api/tags`, as far as this tool reads it.
    struct Listed: Decodable {
        var tag: String
        var state: String
        var zone: String?
        var lastSeen: Double?
        var lastSeenZone: String?
        var lastSeenGateway: String?
        var battery: TagState.Battery?
        var missing: Bool?
        var adverts: TagState.Adverts?
    }

    struct Listing: Decodable {
        var t: Double
        var tags: [Listed]
    }

    /// Fetches the hub's tags and renders those selected: lowest battery first (tags without telemetry after), then
    /// the longest unheard.
    public static func run(
        url: String, token: String?, selection: Selection, format: HistoryTool.Format,
        timeZone: TimeZone = .current
    ) async throws -> String {
        let client = try LiveCalibrateTool.Client(url: url, token: token)
        let listing: Listing = try await client.send("GET", "/api/tags", String?.none)
        return render(listing, selection: selection, format: format, timeZone: timeZone)
    }

    static func render(
        _ listing: Listing, selection: Selection, format: HistoryTool.Format, timeZone: TimeZone
    ) -> String {
        let now = listing.t
        func unheard(_ tag: Listed) -> Double? { tag.lastSeen.map { max(0, now - $0) } }
        let chosen = listing.tags.filter { tag in
            if selection.batteryBelow == nil && selection.missingFor == nil { return true }
            if let below = selection.batteryBelow, let battery = tag.battery, battery.milliVolts < below { return true }
            if let limit = selection.missingFor, (unheard(tag) ?? .infinity) >= limit { return true }
            return false
        }
        .sorted { a, b in
            let (x, y) = (a.battery?.milliVolts ?? .max, b.battery?.milliVolts ?? .max)
            if x != y { return x < y }
            let (p, q) = (a.lastSeen ?? -.infinity, b.lastSeen ?? -.infinity)
            if p != q { return p < q }
            return a.tag < b.tag
        }
        var table = HistoryTool.Table(columns: [
            "tag", "state", "battery_mv", "battery", "trend_mv_week", "last_seen", "unheard_hours", "last_zone",
            "gateway", "missing", "heard_per_min", "sent_per_min",
        ])
        table.rows = chosen.map { tag in
            [
                .text(tag.tag), .text(tag.zone.map { "\(tag.state) \($0)" } ?? tag.state),
                tag.battery.map { .integer($0.milliVolts) } ?? .text(""), .text(tag.battery?.level.rawValue ?? ""),
                .number(tag.battery?.trendPerWeek, decimals: 0), .time(tag.lastSeen),
                .number(unheard(tag).map { $0 / 3600 }, decimals: 3), .text(tag.lastSeenZone ?? ""),
                .text(tag.lastSeenGateway ?? ""), .bool(tag.missing ?? false),
                .number(tag.adverts?.seenPerMinute, decimals: 1), .number(tag.adverts?.expectedPerMinute, decimals: 1),
            ]
        }
        return table.render(format, timeZone: timeZone)
    }

    /// A duration as written on the command line: seconds, or a sum of d, h, m and s parts (`24h`, `1d12h`, `90m`).
    public static func parseDuration(_ text: String) -> Double? { DurationText.seconds(text) }

    /// The dashboard's address from hub.yaml's `http:` section (its host, 127.0.0.1 for a wildcard); nil without one,
    /// or with port 0 (a free port chosen at start, which the file cannot tell).
    public static func url(of configuration: HubConfiguration) -> String? {
        guard let http = configuration.http, http.port != 0 else { return nil }
        let host = ["0.0.0.0", "::", ""].contains(http.host) ? "127.0.0.1" : http.host
        return "http://\(host.contains(":") ? "[\(host)]" : host):\(http.port)"
    }
}
