import BeaconModel
import BeaconPostgres
import BeaconStore
import Foundation

/// The history commands (`beacon-hub visits`, `dwell`, `routes`, `occupancy`, `forget`): read the database and
/// print a table, CSV or JSON (docs/storage.md, "Queries").
public enum HistoryTool {
    /// How a report is printed.
    public enum Format: String, Sendable, CaseIterable {
        case table, csv, json
    }

    /// What the commands read: the database, which of its sites, and how tag ids are stored in it.
    public struct Source: Sendable {
        public var settings: HubStoreSettings
        /// The configuration's site (a SQLite file's own site when read without a configuration).
        public var site: String?
        /// `--site`: one site, every site (`all`), or `nil` for the configuration's.
        public var sites: String?
        public var pseudonyms: TagPseudonyms
        public var tripGapSeconds: Double { settings.tripGapSeconds }
        /// The file path, or the server and database.
        public var path: String { settings.location }

        /// `--db` wins (a SQLite file); otherwise the `store:` section of the configuration (a file or a PostgreSQL
        /// server). The configuration (when given or present) also provides the site, the pseudonymisation key and
        /// the trip gap.
        public static func resolve(db: String?, configPath: String?, site: String? = nil) throws -> Source {
            let defaultConfig = "/etc/beacontracker/hub.yaml"
            let configFile = configPath ?? (FileManager.default.fileExists(atPath: defaultConfig) ? defaultConfig : nil)
            let configuration = try configFile.map { try HubConfiguration.load(from: $0) }
            var settings: HubStoreSettings
            if let db {
                settings = HubStoreSettings(path: db)
                settings.tripGapSeconds = configuration?.store?.tripGapSeconds ?? 600
            } else if let store = configuration?.store {
                settings = store
            } else {
                throw HubSetupError(
                    configuration == nil
                        ? "no database given: pass --db FILE, or --config hub.yaml with a store: section"
                        : "\(configFile!) has no store: section: pass --db FILE")
            }
            return Source(
                settings: settings, site: configuration?.site.rawValue, sites: site,
                pseudonyms: try TagPseudonyms.load(configuration?.store))
        }

        /// Whether a report covers several sites (and so names each row's site).
        var manySites: Bool { sites == "all" }

        /// The stores to report on, one per site: a SQLite file is one site; a PostgreSQL history is read for the
        /// configuration's site, `--site NAME`, or each of its sites (`--site all`).
        func open() async throws -> [(site: String, store: any HistoryStore)] {
            switch settings.backend {
            case .sqlite:
                let store = try settings.openForReading(site: site ?? "", sites: nil)
                try await matchKeys(store)
                let stored = try await store.meta("site") ?? site ?? ""
                if let sites, sites != "all", sites != stored {
                    throw HubSetupError("\(path) holds the history of site \(stored), not \(sites)")
                }
                return [(stored, store)]
            case .postgres:
                guard let home = sites.flatMap({ $0 == "all" ? nil : $0 }) ?? site else {
                    throw HubSetupError("which site? pass --site NAME or --site all (or --config with site:)")
                }
                let history = try settings.openForReading(site: home, sites: [home])
                let names = manySites ? try await history.sites() : [home]
                var stores: [(site: String, store: any HistoryStore)] = []
                for name in names {
                    let store = history.reading([name])
                    try await matchKeys(store)
                    stores.append((name, store))
                }
                return stores
            }
        }

        /// Tag ids on the command line are mapped as the database stores them: with the same key, or none.
        func matchKeys(_ store: any HistoryStore) async throws {
            guard let stored = try await store.meta("pseudonym_key") else { return }
            guard stored != (pseudonyms.keyID ?? "none") else { return }
            throw HubSetupError(
                stored == "none"
                    ? "\(path) holds real tag ids, but the configuration pseudonymises them: pass --db without --config"
                    : "\(path) holds pseudonymised tag ids (key \(stored)): pass --config with the hub's hub.yaml, "
                        + "whose store.keyFile holds that key")
        }
    }

    // MARK: Times

    /// A time from the command line: unix seconds, or ISO-8601 (`2026-11-23T14:30:00Z`, `…+01:00`, fractional
    /// seconds, or local time without an offset: `2026-11-23T14:30`, `2026-11-23 14:30:00`, `2026-11-23`).
    public static func parseTime(_ text: String, timeZone: TimeZone = .current) throws -> Double {
        do {
            return try TimeText.parse(text, timeZone: timeZone)
        } catch {
            throw HubSetupError(error.description)
        }
    }

    /// A time as printed: ISO-8601 with the offset of `timeZone`, to the second.
    public static func formatTime(_ t: Double, timeZone: TimeZone = .current) -> String {
        TimeText.format(t, timeZone: timeZone)
    }

    // MARK: Reports

    /// `beacon-hub visits`.
    public static func visits(
        _ source: Source, tag: String?, zone: String?, since: Double?, until: Double?, limit: Int?, format: Format,
        timeZone: TimeZone = .current
    ) async throws -> String {
        let table = try await source.table(
            columns: ["tag", "zone", "enter", "exit", "duration", "confidence", "suspect"]
        ) { store in
            try await store.visits(
                HubStore.VisitFilter(
                    tag: tag.map { source.pseudonyms.key(for: $0) }, zone: zone, since: since, until: until),
                limit: limit
            ).map { visit in
                [
                    .text(visit.tag), .text(visit.zone), .time(visit.enter), .time(visit.exit),
                    .number(visit.duration, decimals: 1), .number(visit.confidence, decimals: 3), .bool(visit.suspect),
                ]
            }
        }
        return table.render(format, timeZone: timeZone)
    }

    /// `beacon-hub dwell`.
    public static func dwell(
        _ source: Source, by grouping: HubStore.DwellGrouping, zone: String?, since: Double?, until: Double?,
        format: Format, timeZone: TimeZone = .current
    ) async throws -> String {
        let leading: [String] =
            switch grouping {
            case .hour: ["zone", "hour"]
            case .day: ["zone", "day"]
            case .hourOfDay: ["zone", "hourOfDay"]
            case .zone: ["zone"]
            case .tag: zone == nil ? ["tag"] : ["tag", "zone"]
            }
        let table = try await source.table(columns: leading + ["visits", "tags", "total", "mean", "median", "p90"]) {
            store in
            try await store.dwell(by: grouping, zone: zone, since: since, until: until, timeZone: timeZone).map { row in
                var cells: [Cell] =
                    switch grouping {
                    case .hour, .day: [.text(row.zone ?? ""), .time(row.start)]
                    case .hourOfDay: [.text(row.zone ?? ""), .integer(row.hourOfDay ?? 0)]
                    case .zone: [.text(row.zone ?? "")]
                    case .tag: zone == nil ? [.text(row.tag ?? "")] : [.text(row.tag ?? ""), .text(row.zone ?? "")]
                    }
                let statistics = row.statistics
                cells += [
                    .integer(statistics.visits), .integer(statistics.tags), .number(statistics.total, decimals: 1),
                    .number(statistics.mean, decimals: 1), .number(statistics.median, decimals: 1),
                    .number(statistics.p90, decimals: 1),
                ]
                return cells
            }
        }
        return table.render(format, timeZone: timeZone)
    }

    /// `beacon-hub routes`: the most common zone sequences, then the transition matrix.
    public static func routes(
        _ source: Source, top: Int, length: Int, since: Double?, until: Double?, format: Format
    ) async throws -> String {
        let routeTable = try await source.table(columns: ["route", "count"]) { store in
            try await store.routes(top: top, length: length, since: since, until: until).map { route in
                [.route(route.zones), .integer(route.count)]
            }
        }
        let matrixTable = try await source.table(columns: ["from", "to", "count", "medianTransit"]) { store in
            try await store.transitionMatrix(since: since, until: until).map { cell in
                [.text(cell.from), .text(cell.to), .integer(cell.count), .number(cell.medianTransit, decimals: 1)]
            }
        }
        switch format {
        case .json:
            return "{\"routes\":\(routeTable.render(.json)),\"transitions\":\(matrixTable.render(.json))}"
        case .csv:
            return routeTable.render(.csv) + "\n" + matrixTable.render(.csv)
        case .table:
            return "Most common routes of \(length) zones (trips split at gaps over \(Int(source.tripGapSeconds)) s)\n"
                + routeTable.render(.table) + "\nTransitions (seconds from leaving one zone to entering the next)\n"
                + matrixTable.render(.table)
        }
    }

    /// `beacon-hub occupancy --at T`: every zone of the venue with the tags in it at `t`.
    public static func occupancy(
        _ source: Source, at t: Double, format: Format, timeZone: TimeZone = .current
    ) async throws -> String {
        let table = try await source.table(columns: ["zone", "at", "count", "tags"]) { store in
            let occupied = Dictionary(
                uniqueKeysWithValues: try await store.occupancy(at: t).map { ($0.zone, $0.tags) })
            var zones = try await store.zones().map(\.id)
            zones += occupied.keys.filter { !zones.contains($0) }.sorted()
            return zones.map { zone in
                let tags = occupied[zone] ?? []
                return [.text(zone), .time(t), .integer(tags.count), .list(tags)]
            }
        }
        return table.render(format, timeZone: timeZone)
    }

    /// `beacon-hub forget --tag ID`: deletes every row about the tag. A SQLite file needs the writer lock (the hub
    /// must be stopped); a PostgreSQL history forgets the tag in every site, beside the running hubs.
    public static func forget(_ source: Source, tag: String) async throws -> String {
        let store: any HistoryStore =
            switch source.settings.backend {
            case .sqlite: try HubStore(path: source.settings.path, tripGapSeconds: source.tripGapSeconds)
            case .postgres: try source.settings.openForReading(site: source.site ?? "", sites: nil)
            }
        defer { try? store.close() }
        try await source.matchKeys(store)
        let key = source.pseudonyms.key(for: tag)
        let deleted = try await store.forget(key: key, liveTag: tag, beaconKey: nil)
        let total = deleted.values.reduce(0, +)
        return "forgot \(tag)\(key == tag ? "" : " (stored as \(key))"): \(total) rows deleted ("
            + deleted.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", ") + ")"
    }
}

extension HistoryTool.Source {
    /// A report's rows from each site read, with a leading `site` column when several sites are asked (`--site all`):
    /// the rows of every site, each as that site alone gives them.
    /// The sites are asked at once (a shared server answers each on a connection of its own).
    func table(
        columns: [String], _ rows: @escaping @Sendable (any HistoryStore) async throws -> [[HistoryTool.Cell]]
    ) async throws -> HistoryTool.Table {
        let stores = try await open()
        defer { for (_, store) in stores { try? store.close() } }
        let answers = try await withThrowingTaskGroup(of: (Int, [[HistoryTool.Cell]]).self) { group in
            for (index, entry) in stores.enumerated() {
                let store = entry.store
                group.addTask { (index, try await rows(store)) }
            }
            var answers = [[[HistoryTool.Cell]]](repeating: [], count: stores.count)
            for try await (index, answer) in group { answers[index] = answer }
            return answers
        }
        var table = HistoryTool.Table(columns: (manySites ? ["site"] : []) + columns)
        for ((site, _), answer) in zip(stores, answers) {
            for row in answer { table.rows.append((manySites ? [.text(site)] : []) + row) }
        }
        return table
    }
}

extension HistoryTool {
    /// One value of a report.
    enum Cell: Sendable {
        case text(String)
        case time(Double?)
        case number(Double?, decimals: Int)
        case integer(Int)
        case bool(Bool)
        case list([String])
        /// Zones in walking order.
        case route([String])
    }

    /// Rows under named columns, printed aligned, as CSV (RFC 4180) or as a JSON array of objects (times as unix
    /// seconds, numbers at full precision as the API gives them, lists as arrays).
    struct Table {
        var columns: [String]
        var rows: [[Cell]] = []

        func render(_ format: Format, timeZone: TimeZone = .current) -> String {
            switch format {
            case .json:
                let objects = rows.map { row in
                    "{" + zip(columns, row).map { "\(Self.jsonString($0)):\(Self.json($1))" }.joined(separator: ",")
                        + "}"
                }
                return "[" + objects.joined(separator: ",") + "]"
            case .csv:
                let lines =
                    [columns.joined(separator: ",")]
                    + rows.map { row in
                        row.map { Self.csvField(Self.text($0, timeZone: timeZone)) }.joined(separator: ",")
                    }
                return lines.joined(separator: "\n")
            case .table:
                let texts = rows.map { row in row.map { Self.text($0, timeZone: timeZone) } }
                let widths = columns.indices.map { column in
                    texts.reduce(columns[column].count) { max($0, $1[column].count) }
                }
                func line(_ cells: [String]) -> String {
                    zip(cells, widths).map { $0.padding(toLength: $1, withPad: " ", startingAt: 0) }
                        .joined(separator: "  ").trimmingCharacters(in: .whitespaces)
                }
                var lines = [line(columns)] + texts.map(line)
                if rows.isEmpty { lines.append("(none)") }
                return lines.joined(separator: "\n")
            }
        }

        static func text(_ cell: Cell, timeZone: TimeZone) -> String {
            switch cell {
            case .text(let text): text
            case .time(let t): t.map { formatTime($0, timeZone: timeZone) } ?? ""
            case .number(let value, let decimals): value.map { String(format: "%.\(decimals)f", $0) } ?? ""
            case .integer(let value): "\(value)"
            case .bool(let value): value ? "yes" : "no"
            case .list(let items): items.joined(separator: ", ")
            case .route(let zones): zones.joined(separator: " → ")
            }
        }

        static func json(_ cell: Cell) -> String {
            switch cell {
            case .text(let text): jsonString(text)
            case .time(let t): t.map { String(format: "%.3f", $0) } ?? "null"
            // Full precision, as the API gives it: rounding is for people reading a table.
            case .number(let value, _): value.map { "\($0)" } ?? "null"
            case .integer(let value): "\(value)"
            case .bool(let value): value ? "true" : "false"
            case .list(let items), .route(let items): "[" + items.map(jsonString).joined(separator: ",") + "]"
            }
        }

        static func jsonString(_ text: String) -> String {
            let data = try? JSONSerialization.data(withJSONObject: [text], options: [.withoutEscapingSlashes])
            let array = data.flatMap { String(data: $0, encoding: .utf8) } ?? "[\"\"]"
            return String(array.dropFirst().dropLast())
        }

        static func csvField(_ text: String) -> String {
            guard text.contains(where: { $0 == "," || $0 == "\"" || $0 == "\n" }) else { return text }
            return "\"" + text.replacingOccurrences(of: "\"", with: "\"\"") + "\""
        }
    }
}

extension HistoryTool {
    /// Copies the database while the hub runs (`VACUUM INTO` from a read-only connection), then checks the copy.
    public static func backup(_ source: Source, to target: String) async throws -> String {
        guard !FileManager.default.fileExists(atPath: target) else {
            throw HubSetupError("\(target) exists: back up to a new file name (a backup never overwrites)")
        }
        guard source.settings.backend == .sqlite else {
            throw HubSetupError(
                "\(source.path) is a PostgreSQL history: back it up with pg_dump or the server's continuous archiving "
                    + "(docs/operations.md, \"PostgreSQL\")")
        }
        let started = Date()
        let store = try HubStore(readingFrom: source.path, tripGapSeconds: source.tripGapSeconds)
        defer { try? store.close() }
        try await store.database.copy(to: target)
        let seconds = Date().timeIntervalSince(started)
        let copy = try HubStore(readingFrom: target, tripGapSeconds: source.tripGapSeconds)
        defer { try? copy.close() }
        let check = try await copy.database.integrityCheck()
        guard check == "ok" else {
            throw StoreError(.io, "the backup \(target) fails its integrity check (\(check)): back up again")
        }
        let batches = try await copy.database.fetchInteger("SELECT count(*) FROM batches") ?? 0
        let visits = try await copy.database.fetchInteger("SELECT count(*) FROM visits") ?? 0
        let last = try await copy.database.fetchString("SELECT max(committed) FROM batches").flatMap(Double.init)
        let bytes = (try? FileManager.default.attributesOfItem(atPath: target)[.size] as? Int) ?? 0
        return "backed up \(source.path) to \(target) in \(String(format: "%.2f", seconds)) s: \(bytes) bytes, "
            + "integrity ok, \(batches) batches, \(visits) visits"
            + (last.map { ", last commit \(Date(timeIntervalSince1970: $0).ISO8601Format())" } ?? "")
    }
}
