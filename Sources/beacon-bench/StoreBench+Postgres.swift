import BeaconPostgres
import BeaconStore
import BrokerTestSupport
import Foundation

/// `beacon-bench store --backend postgres`: the live part's journals committed into SQLite (NORMAL) and into
/// PostgreSQL (a server of its own, default settings but `shared_buffers` 32 MiB), each into a database already
/// holding `historyMinutes` of the same load, the two alternating round by round.
extension StoreBench {
    enum Backend: String, CaseIterable {
        case sqlite = "SQLite, synchronous NORMAL"
        case postgres = "PostgreSQL 15, loopback"
    }

    func liveBesidePostgres(in directory: String) async throws {
        var load = LiveLoad(
            tags: liveTags, gateways: liveGateways, ledgerRows: ledgerRows, moves: moves, events: events)
        let t0 = start
        let warmCommits = historyMinutes * 120
        var warm: [HubJournal] = []
        var done = 0
        while done < warmCommits {
            var chunk = HubJournal()
            for index in done..<min(done + 1_200, warmCommits) {
                chunk.append(load.journal(at: t0 + Double(index) / 2))
            }
            done = min(done + 1_200, warmCommits)
            warm.append(chunk)
        }
        let timedStart = t0 + Double(warmCommits) / 2
        let journals = (0..<commits).map { load.journal(at: timedStart + Double($0) / 2) }
        let rows = journals.map(\.rowCount).reduce(0, +)

        let template = directory + "/live-template.db"
        let sqlite = try HubStore(path: template)
        try await sqlite.adopt(site: "bench", keyID: nil)
        for (index, chunk) in warm.enumerated() { _ = try await sqlite.commit(chunk, at: t0 + Double(index)) }
        try sqlite.close()

        let server = try await PostgresServer()
        try await server.start()
        defer { Task { await server.stop() } }
        let templateDatabase = try await server.createDatabase("bench_template")
        let began = ContinuousClock.now
        let filling = try PostgresHistory(endpoint: endpoint(server, templateDatabase), site: "bench")
        try await filling.adopt(site: "bench", keyID: nil)
        for (index, chunk) in warm.enumerated() { _ = try await filling.commit(chunk, at: t0 + Double(index)) }
        await filling.stopWriting()
        try filling.close()
        // CREATE DATABASE … TEMPLATE needs the template without connections.
        try await Task.sleep(for: .seconds(1))
        let prepared = (ContinuousClock.now - began).seconds
        let size = try await server.psql("SELECT pg_database_size('bench_template')")
        print(
            "live commits, SQLite beside PostgreSQL: \(commits) commits (one per simulated 0.5 s) of \(ledgerRows) "
                + "ledger rows + \(moves) zone moves + \(events) events (\(rows / commits) rows), \(liveTags) tags; "
                + "each into a copy of a database holding \(historyMinutes) min of the same load (SQLite "
                + "\(Self.mebibytes(Self.fileBytes(template))), PostgreSQL \(Self.mebibytes(Int(size) ?? 0)) filled in "
                + "\(String(format: "%.0f", prepared)) s)")

        var results: [Backend: [Committed]] = [:]
        for round in 1...rounds {
            for backend in Self.rotated(Backend.allCases, by: round - 1) {
                switch backend {
                case .sqlite:
                    results[.sqlite, default: []].append(
                        try await commitAll(
                            journals, from: timedStart, variant: .normal, template: template,
                            path: directory + "/live-\(round).db"))
                case .postgres:
                    let database = "bench_\(round)"
                    try await server.psql("CREATE DATABASE \(database) TEMPLATE bench_template")
                    let history = try PostgresHistory(endpoint: endpoint(server, database), site: "bench")
                    _ = try await history.recover()
                    var latencies: [Double] = []
                    let started = ContinuousClock.now
                    for (index, journal) in journals.enumerated() {
                        let before = ContinuousClock.now
                        _ = try await history.commit(journal, at: timedStart + Double(index) / 2 + 0.5)
                        latencies.append((ContinuousClock.now - before).seconds)
                    }
                    results[.postgres, default: []].append(
                        Committed(seconds: (ContinuousClock.now - started).seconds, latencies: latencies.sorted()))
                    await history.stopWriting()
                    try history.close()
                }
            }
            for backend in Backend.allCases {
                let result = results[backend]![round - 1]
                print(result.line("  round \(round) " + Self.padded(backend.rawValue, 28), rows: rows))
            }
        }
        print("  best / median of \(rounds):")
        for backend in Backend.allCases {
            let list = results[backend]!
            let rates = list.map { Double(rows) / $0.seconds }
            print(
                "    " + Self.padded(backend.rawValue, 28)
                    + String(
                        format: "%7.0f / %7.0f rows/s | latency median %6.2f / %6.2f ms, p99 %6.2f / %6.2f ms",
                        rates.max()!, HubBench.median(rates), list.map(\.median).min()! * 1e3,
                        HubBench.median(list.map(\.median)) * 1e3, list.map(\.p99).min()! * 1e3,
                        HubBench.median(list.map(\.p99)) * 1e3))
        }
    }

    func endpoint(_ server: PostgresServer, _ database: String) -> PostgresHistory.Endpoint {
        PostgresHistory.Endpoint(
            host: server.host, port: server.port, database: database, user: server.user, password: server.password,
            tls: .disable)
    }
}
