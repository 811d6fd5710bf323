import ArgumentParser
import BeaconPostgres
import BeaconStore
import BrokerTestSupport
import Foundation
import Simulator

/// `beacon-bench sites`: many sites' hubs writing one PostgreSQL history, and cross-site questions asked of it.
///
/// 1. Live load: `sites` hubs, each with `tags` tags heard at 1 Hz by `gateways` gateways (one batch per gateway per
///    second), committing every 0.5 s as the hub does, at once for `seconds` of real time, into one PostgreSQL
///    database; beside it, in the same run, the same load into one SQLite file per site (the single-venue setup).
///    Commit latency and the acknowledgement delay (a batch's wait for its commit, then the commit).
/// 2. Queries: `days` days of closed visits of `sites` sites (`visitsPerTagDay` per tag per day, generated in the
///    database), then dwell per zone of every site (each site's rows, as `--site all`), dwell per zone pooled, and
///    dwell per hour of every site; beside it, one site's days in a SQLite file, per zone.
struct SitesBench: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "sites",
        abstract: "Many sites into one PostgreSQL: commit latency, acknowledgement delay, cross-site dwell queries.")

    @Option(help: "Sites (hubs) writing at once.") var sites = 10
    @Option(help: "Tags per site, each heard once a second.") var tags = 1_000
    @Option(help: "Gateways per site (one batch each per second).") var gateways = 20
    @Option(help: "Seconds of live load (real time).") var seconds = 60
    @Option(help: "Keep raw sightings (each tag heard by 3 gateways).") var raw = false
    @Option(help: "Days of generated history for the queries.") var days = 30
    @Option(help: "Closed visits per tag per day in the generated history.") var visitsPerTagDay = 10
    @Option(help: "Rounds of each query (best and median reported).") var rounds = 3
    @Option(help: "Run only this part: live or queries (default both).") var part: String?

    func validate() throws {
        guard part == nil || part == "live" || part == "queries" else {
            throw ValidationError("--part \(part!): live or queries")
        }
        guard sites >= 2, tags >= 10, gateways >= 2, seconds >= 5, days >= 1, visitsPerTagDay >= 1, rounds >= 1 else {
            throw ValidationError(
                "--sites ≥ 2, --tags ≥ 10, --gateways ≥ 2, --seconds ≥ 5, --days, --visits-per-tag-day, --rounds ≥ 1")
        }
    }

    func run() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("sites-bench-\(UUID())").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let server = try await PostgresServer()
        try await server.start()
        print(
            "PostgreSQL 15 on loopback (its own server: initdb defaults, shared_buffers 32 MiB, fsync on); "
                + "\(ProcessInfo.processInfo.activeProcessorCount) cores shared with the writers")
        if part != "queries" { try await liveLoad(server, directory: directory) }
        if part != "live" { try await queries(server, directory: directory) }
        await server.stop()
    }

    // MARK: Live load

    /// What one site's writer measured.
    struct Written: Sendable {
        var latencies: [Double] = []
        var delays: [Double] = []
        var rows = 0
        var failures = 0
    }

    func liveLoad(_ server: PostgresServer, directory: String) async throws {
        let database = try await server.createDatabase("live")
        // One batch per gateway per second, so gateways / 2 per commit; a tag changes zone about once a minute.
        let (ledgerRows, moves) = (gateways / 2, max(1, tags / 120))
        print(
            "live load: \(sites) sites × \(tags) tags at 1 Hz, \(gateways) gateways each, one commit per site every "
                + "0.5 s (\(ledgerRows) ledger rows, ~\(moves) zone moves, \(2 * moves + 4) events"
                + (raw ? ", \(tags * 3 / 2) raw sightings" : "") + ") for \(seconds) s")
        for backend in ["PostgreSQL, one database", "SQLite, a file per site"] {
            let serverCPU = Self.cpuSeconds(server: server.pid ?? 0)
            let ownCPU = Self.cpuSeconds(server: getpid(), children: false)
            let results = try await withThrowingTaskGroup(of: Written.self) { group in
                for site in 0..<sites {
                    let store: any HistoryStore =
                        backend.hasPrefix("PostgreSQL")
                        ? try PostgresHistory(
                            endpoint: endpoint(server, database), site: "site-\(site)", readSites: ["site-\(site)"])
                        : try HubStore(path: "\(directory)/site-\(site).db")
                    group.addTask {
                        try await write(store, site: site, ledgerRows: ledgerRows, moves: moves)
                    }
                }
                var all: [Written] = []
                for try await result in group { all.append(result) }
                return all
            }
            let serverUsed = Self.cpuSeconds(server: server.pid ?? 0) - serverCPU
            let ownUsed = Self.cpuSeconds(server: getpid(), children: false) - ownCPU
            let latencies = results.flatMap(\.latencies).sorted()
            let delays = results.flatMap(\.delays).sorted()
            let rows = results.map(\.rows).reduce(0, +)
            print(
                "  " + StoreBench.padded(backend, 26)
                    + String(
                        format: "%6d commits, %8.0f rows/s | commit latency p50 %6.1f ms, p99 %6.1f ms | "
                            + "acknowledgement delay p50 %6.1f ms, p99 %6.1f ms | %d failed",
                        latencies.count, Double(rows) / Double(seconds), Self.quantile(latencies, 0.5) * 1e3,
                        Self.quantile(latencies, 0.99) * 1e3, Self.quantile(delays, 0.5) * 1e3,
                        Self.quantile(delays, 0.99) * 1e3, results.map(\.failures).reduce(0, +)))
            print(
                "  " + StoreBench.padded("", 26)
                    + String(
                        format: "CPU: PostgreSQL server %.1f %% of a core (%.2f ms a commit), the writers %.1f %%",
                        serverUsed / Double(seconds) * 100, serverUsed / Double(max(1, latencies.count)) * 1e3,
                        ownUsed / Double(seconds) * 100))
        }
    }

    /// One site's hub: a journal every 0.5 s of real time (batches arriving evenly over the half second before it),
    /// committed; the next waits for the commit, as the hub's commit loop does.
    func write(_ store: any HistoryStore, site: Int, ledgerRows: Int, moves: Int) async throws -> Written {
        var load = StoreBench.LiveLoad(
            tags: tags, gateways: gateways, ledgerRows: ledgerRows, moves: moves, events: 2 * moves + 4)
        var generator = SeededGenerator(seed: UInt64(site + 1))
        try await store.adopt(site: "site-\(site)", keyID: nil)
        _ = try await store.recover()
        var written = Written()
        let clock = ContinuousClock()
        let began = clock.now
        var tick = 0
        while clock.now - began < .seconds(seconds) {
            tick += 1
            let due = began.advanced(by: .milliseconds(500 * tick))
            try await Task.sleep(until: due, clock: clock)
            let t = Date().timeIntervalSince1970
            var journal = load.journal(at: t)
            if raw {
                let count = tags * 3 / 2
                var sightings: [HubJournal.Sighting] = []
                sightings.reserveCapacity(count)
                for index in 0..<count {
                    let rssi: Int = -60 - Int.random(in: 0..<30, using: &generator)
                    let when: Double = t - Double(index) / Double(count) / 2
                    sightings.append(
                        HubJournal.Sighting(
                            t: when, gateway: "gw-\(index % gateways)", beaconKey: load.beacons[index % tags],
                            rssi: rssi, txPower: -59))
                }
                journal.sightings = sightings
            }
            let started = clock.now
            do {
                _ = try await store.commit(journal, at: t)
            } catch {
                written.failures += 1
                continue
            }
            let latency = (clock.now - started).seconds
            let waited = (started - due).seconds
            written.latencies.append(latency)
            written.rows += journal.rowCount
            // Batch i of n arrived (n − i) / n × 0.5 s before the commit was due.
            let n = journal.batches.count
            for index in 0..<n { written.delays.append(0.5 * Double(n - index) / Double(n) + waited + latency) }
        }
        try store.close()
        return written
    }

    // MARK: Queries

    func queries(_ server: PostgresServer, directory: String) async throws {
        let database = try await server.createDatabase("history")
        let names = (0..<sites).map { "site-\($0)" }
        let end = (Date().timeIntervalSince1970 / 86_400).rounded(.down) * 86_400
        let begin = end - Double(days) * 86_400
        let history = try PostgresHistory(endpoint: endpoint(server, database), site: names[0], readSites: nil)
        _ = try await history.sites()  // the schema
        // The months' partitions, then the visits and their hourly statistics, generated in the database.
        var months: Set<String> = []
        var t = begin
        while t < end + 86_400 {
            let partition = PostgresSchema.partition(of: PostgresSchema.partitioned[0], at: t)
            if months.insert(partition.name).inserted {
                try await server.psql(
                    "CREATE TABLE \(partition.name) PARTITION OF visits FOR VALUES FROM (\(partition.from)) TO "
                        + "(\(partition.to))", database: database)
            }
            t += 86_400
        }
        let generation = ContinuousClock.now
        for name in names {
            try await server.psql(
                """
                INSERT INTO meta (site, key, value) VALUES ('\(name)', 'site', '\(name)'),
                  ('\(name)', 'pseudonym_key', 'none');
                INSERT INTO visits (site, tag, zone, enter, exit, duration, confidence)
                SELECT '\(name)', 'tag-' || (i % \(tags)), 'zone-' || (hashint4(i) & 15),
                       \(begin) + (i::float8 / \(tags * visitsPerTagDay)) * 86400 + (hashint4(i * 7) & 1023),
                       NULL, 30 + (hashint4(i * 13) & 511), 0.9
                FROM generate_series(0, \(tags * visitsPerTagDay * days - 1)) AS i;
                UPDATE visits SET exit = enter + duration WHERE site = '\(name)';
                """, database: database)
        }
        try await server.psql(
            """
            INSERT INTO dwell_hourly (site, zone, hour, visits, tags, total, mean, median, p90)
            SELECT site, zone, (floor(enter / 3600) * 3600)::bigint, count(*), count(DISTINCT tag), sum(duration),
                   avg(duration), percentile_cont(0.5) WITHIN GROUP (ORDER BY duration),
                   percentile_cont(0.9) WITHIN GROUP (ORDER BY duration)
            FROM visits GROUP BY 1, 2, 3;
            """, database: database)
        // What autovacuum does within a minute of such a load: the visibility map that lets dwell reports read the
        // index alone, and the planner's statistics.
        try await server.psql("VACUUM ANALYZE", database: database)
        let visits = try await history.fetchInteger("SELECT count(*) FROM visits") ?? 0
        let size = try await server.psql("SELECT pg_database_size('\(database)')")
        print(
            "queries: \(days) days × \(sites) sites × \(tags) tags × \(visitsPerTagDay) visits a day = "
                + "\(visits) closed visits, 16 zones a site (generated in \(String(format: "%.0f", (ContinuousClock.now - generation).seconds)) s; "
                + "database \(StoreBench.mebibytes(Int(size) ?? 0)))")

        // The baseline: one site's days in a SQLite file, through the same report.
        let file = "\(directory)/one-site.db"
        let sqlite = try HubStore(path: file)
        try await sqlite.adopt(site: names[0], keyID: nil)
        try sqlite.close()
        try await copyOneSite(history, to: file, site: names[0])
        let single = try HubStore(readingFrom: file)

        let questions: [(String, () async throws -> Int)] = [
            (
                "dwell per zone, every site (--site all)",
                {
                    // As `--site all` asks: every site at once, each on a connection of the pool.
                    try await withThrowingTaskGroup(of: Int.self) { group in
                        for name in names {
                            group.addTask {
                                try await history.reading([name]).dwell(by: .zone, since: begin, until: end).count
                            }
                        }
                        return try await group.reduce(0, +)
                    }
                }
            ),
            ("dwell per zone, sites pooled", { try await history.dwell(by: .zone, since: begin, until: end).count }),
            ("dwell per hour, every site", { try await history.dwell(by: .hour, since: begin, until: end).count }),
            (
                "baseline: one site per zone, SQLite",
                { try await single.dwell(by: .zone, since: begin, until: end).count }
            ),
        ]
        for (question, ask) in questions {
            var times: [Double] = []
            var rows = 0
            for _ in 0..<rounds {
                let started = ContinuousClock.now
                rows = try await ask()
                times.append((ContinuousClock.now - started).seconds)
            }
            times.sort()
            print(
                "  " + StoreBench.padded(question, 42)
                    + String(
                        format: "%6d rows | best %7.3f s, median %7.3f s", rows, times[0], times[times.count / 2]))
        }
        try single.close()
        try history.close()
    }

    /// Copies one site's visits into the SQLite baseline file.
    func copyOneSite(_ history: PostgresHistory, to file: String, site: String) async throws {
        let visits = try await history.reading([site]).visits(HubStore.VisitFilter())
        let database = try StoreDatabase(path: file, schema: HubStore.schema)
        var statements: [String] = []
        for visit in visits {
            statements.append(
                "INSERT INTO visits (tag, zone, enter, exit, duration, confidence) VALUES ('\(visit.tag)', "
                    + "'\(visit.zone)', \(visit.enter), \(visit.exit ?? visit.enter), \(visit.duration ?? 0), 0.9)")
            if statements.count == 5_000 {
                try await database.execute(statements.joined(separator: ";"))
                statements = []
            }
        }
        if !statements.isEmpty { try await database.execute(statements.joined(separator: ";")) }
        try database.close()
    }

    func endpoint(_ server: PostgresServer, _ database: String) -> PostgresHistory.Endpoint {
        PostgresHistory.Endpoint(
            host: server.host, port: server.port, database: database, user: server.user, password: server.password,
            tls: .disable)
    }

    /// CPU seconds (user + system) used so far by process `server` and, with `children`, its child processes
    /// (PostgreSQL's backends are children of the postmaster).
    static func cpuSeconds(server: pid_t, children: Bool = true) -> Double {
        let ticks = Double(sysconf(Int32(_SC_CLK_TCK)))
        var total = 0.0
        let entries = (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
        for entry in entries {
            guard let pid = Int32(entry) else { continue }
            guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
                let close = stat.lastIndex(of: ")")
            else { continue }
            // Fields after the command: state ppid … utime (14th field) stime (15th).
            let fields = stat[stat.index(after: close)...].split(separator: " ")
            guard fields.count > 13, let ppid = Int32(fields[1]), let user = Double(fields[11]),
                let system = Double(fields[12])
            else { continue }
            if pid == server || (children && ppid == server) { total += (user + system) / ticks }
        }
        return total
    }

    static func quantile(_ sorted: [Double], _ p: Double) -> Double {
        sorted.isEmpty ? 0 : sorted[min(sorted.count - 1, Int(Double(sorted.count) * p))]
    }
}
