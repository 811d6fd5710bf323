import ArgumentParser
import BeaconConfig
import BeaconHub
import BeaconModel
import BeaconStore
import Foundation
import Simulator

/// `beacon-bench store`: the hub's history database (`HubStore`), in two parts.
///
/// 1. Replay: a seeded simulation of a venue (default the shipped museum, 6 h) replayed through the zone engine as
///    `beacon-hub replay` does, first with no database (the baseline), then writing the history, with raw sightings,
///    and with pseudonymised ids, the variants alternating round by round. Sightings/s beside the baseline's,
///    committed rows/s, visits/s, and the database's size per million sightings.
/// 2. Live commits: journals shaped like the live hub's (every 0.5 s: the batch ledger, zone moves and events) committed
///    one at a time through `HubStore.commit(_:at:)` into a database already holding an hour of the same load;
///    commits/s and commit latency with `synchronous = NORMAL` beside `FULL`, and the journal split in two: the ledger
///    alone (what every commit pays even when no tag moves), and the moves and events alone.
struct StoreBench: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "store", abstract: "History database: committed rows/s, visits/s, size per million sightings.")

    @Option(help: "hub.yaml of the replayed venue (relative paths are taken from the current directory).")
    var config = "config/hub.yaml"

    @Option(help: "The venue to simulate (its site must be hub.yaml's).")
    var venue = "config/venues/museum.yaml"

    @Option(help: "Simulated time: 90s, 30m, 6h, 2h30m, or seconds.")
    var duration = "6h"

    @Option(help: "Simulation seed.")
    var seed: UInt64 = 1

    @Option(help: "Unix time the simulation starts at.")
    var start: Double = 1_763_900_000

    @Option(help: "Rounds of each variant (alternating; best and median reported).")
    var rounds = 2

    @Option(help: "Live part: timed commits, one every simulated 0.5 s.")
    var commits = 200

    @Option(help: "Live part: batch ledger rows per commit.")
    var ledgerRows = 300

    @Option(help: "Live part: zone moves per commit.")
    var moves = 20

    @Option(help: "Live part: events per commit.")
    var events = 40

    @Option(help: "Live part: tags walking between zones.")
    var liveTags = 2_000

    @Option(help: "Live part: gateways, one zone each.")
    var liveGateways = 100

    @Option(help: "Live part: minutes of the same load committed (untimed) before the timed commits.")
    var historyMinutes = 60

    @Option(
        help: ArgumentHelp(
            "sqlite (both parts), or postgres: the live part only, SQLite (NORMAL) beside PostgreSQL in one run.",
            discussion: "postgres starts its own PostgreSQL server (initdb in a temporary directory, a free port)."))
    var backend = "sqlite"

    func validate() throws {
        guard SimulatedDuration.parse(duration) != nil else {
            throw ValidationError("--duration \(duration): expected e.g. 90s, 30m, 6h, 2h30m, or seconds")
        }
        guard rounds >= 1, commits >= 1, liveTags >= 1, liveGateways >= 2 else {
            throw ValidationError("--rounds, --commits and --live-tags must be at least 1, --live-gateways 2")
        }
        guard ["sqlite", "postgres"].contains(backend) else {
            throw ValidationError("--backend \(backend): sqlite or postgres")
        }
        guard ledgerRows >= 0, moves >= 0, events >= 0, historyMinutes >= 0 else {
            throw ValidationError("--ledger-rows, --moves, --events and --history-minutes cannot be negative")
        }
    }

    func run() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("store-bench-\(UUID())").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        if backend == "postgres" {
            try await liveBesidePostgres(in: directory)
            return
        }
        try await replay(in: directory)
        try await live(in: directory)
    }
}

// MARK: Replay

extension StoreBench {
    /// What `ReplayTool` writes alongside the engine.
    enum Variant: String, CaseIterable {
        case engineOnly = "engine only"
        case history = "history"
        case raw = "history + raw sightings"
        case pseudonyms = "history, pseudonymised"
    }

    /// One replay's figures.
    struct Replayed: Sendable {
        var sightings = 0
        var seconds = 0.0
        var rows = 0
        var commits = 0
        var visits = 0
        var bytes = 0

        var sightingsPerSecond: Double { Double(sightings) / seconds }
        var rowsPerSecond: Double { Double(rows) / seconds }
        var visitsPerSecond: Double { Double(visits) / seconds }
        var bytesPerMillion: Double { Double(bytes) / Double(max(sightings, 1)) * 1e6 }
    }

    func replay(in directory: String) async throws {
        let configuration = try HubConfiguration.load(from: config)
        let loaded = try VenueLoader.load(from: venue)
        guard loaded.site == configuration.site else {
            throw ValidationError("\(venue) is site \(loaded.site), but \(config) serves site \(configuration.site)")
        }
        let simulated = SimulatedDuration.parse(duration)!
        let simulation = directory + "/simulation"
        let (seed, start) = (seed, start)
        let run = try await Self.onOwnThread {
            try SimulationRun.writeFiles(
                venue: loaded, seed: seed, start: start, duration: simulated, directory: simulation, gzip: false)
        }
        let input = simulation + "/sightings.jsonl"
        try? FileManager.default.removeItem(atPath: simulation + "/truth.jsonl")
        print(
            "beacon-bench store: replay of \(venue) (\(run.tags) tags, \(run.gateways) gateways), \(duration) "
                + "simulated from \(Int(start)), seed \(seed): \(HubBench.grouped(run.sightings)) sightings ("
                + Self.mebibytes(Self.fileBytes(input)) + " of sighting lines, simulated in "
                + "\(String(format: "%.1f", run.wallSeconds)) s); \(config); rounds: \(rounds), variants alternating; "
                + "one thread, a commit every 20,000 rows as beacon-hub replay --db")

        // Each round starts with another variant, so that neither the first run's cold start nor a busy spell on a
        // shared machine always falls on the same one; lines are printed in a fixed order once the round is done.
        var results: [Variant: [Replayed]] = [:]
        for round in 1...rounds {
            let order = Self.rotated(Variant.allCases, by: round - 1)
            for variant in order {
                let result = try await replayOnce(
                    variant, configuration: configuration, input: input, path: directory + "/replay-\(round).db")
                results[variant, default: []].append(result)
            }
            let baseline = results[.engineOnly]![round - 1].sightingsPerSecond
            for variant in Variant.allCases {
                let result = results[variant]![round - 1]
                var line =
                    "  round \(round) " + Self.padded(variant.rawValue, 24)
                    + String(format: "%9.0f sightings/s (%6.2f s)", result.sightingsPerSecond, result.seconds)
                if variant != .engineOnly {
                    line += String(
                        format: "  %.2f × engine | %@ rows in %d commits, %.0f rows/s | %d visits, %.1f visits/s | %@",
                        result.sightingsPerSecond / baseline, HubBench.grouped(result.rows) as NSString,
                        result.commits, result.rowsPerSecond, result.visits, result.visitsPerSecond,
                        Self.mebibytes(result.bytes) as NSString)
                }
                print(line)
            }
        }

        print("  best / median of \(rounds) (× engine: the median of the rounds' ratios; size: the last round's):")
        let baselines = results[.engineOnly]!.map(\.sightingsPerSecond)
        for variant in Variant.allCases {
            let list = results[variant]!
            let rates = list.map(\.sightingsPerSecond)
            var line =
                "    " + Self.padded(variant.rawValue, 24)
                + String(format: "%9.0f / %9.0f sightings/s", rates.max()!, HubBench.median(rates))
            if variant != .engineOnly {
                let ratios = zip(rates, baselines).map { $0 / $1 }
                let size = list.last!
                line += String(
                    format: "  × engine %.2f (rounds: %@) | %.0f / %.0f rows/s | %.1f / %.1f visits/s | "
                        + "%@, %@ per million sightings",
                    HubBench.median(ratios),
                    ratios.map { String(format: "%.2f", $0) }.joined(separator: ", ") as NSString,
                    list.map(\.rowsPerSecond).max()!, HubBench.median(list.map(\.rowsPerSecond)),
                    list.map(\.visitsPerSecond).max()!, HubBench.median(list.map(\.visitsPerSecond)),
                    Self.mebibytes(size.bytes) as NSString, Self.mebibytes(Int(size.bytesPerMillion)) as NSString)
            }
            print(line)
        }
    }

    /// One replay of `input` through a fresh engine; with history, into a new database at `path` (measured, then
    /// deleted).
    func replayOnce(
        _ variant: Variant, configuration: HubConfiguration, input: String, path: String
    ) async throws -> Replayed {
        let engine = try configuration.makeEngine()
        guard variant != .engineOnly else {
            let summary = try await Self.onOwnThread {
                try ReplayTool.run(engine: engine, inputPath: input, eventsPath: nil, history: nil)
            }
            return Replayed(sightings: summary.input.sightings, seconds: summary.wallSeconds)
        }
        defer {
            for file in [path, path + "-wal", path + "-shm", path + "-writer.lock", path + ".key"] {
                try? FileManager.default.removeItem(atPath: file)
            }
        }
        // The same preparation as `beacon-hub replay --db`: the site and key recorded, the venue described.
        let store = try HubStore(path: path)
        var settings = HubStoreSettings(path: path)
        settings.pseudonymise = variant == .pseudonyms
        settings.keyFile = path + ".key"
        let pseudonyms = try TagPseudonyms.load(settings)
        try await store.adopt(site: configuration.site.rawValue, keyID: pseudonyms.keyID)
        if let venue = configuration.loadedVenue {
            try await store.describeVenue(
                zones: venue.zones.map { ($0.id.rawValue, $0.name) },
                gateways: venue.gateways.map { ($0.id.rawValue, $0.zone?.rawValue, $0.position.x, $0.position.y) })
        }
        let history = ReplayTool.History(store: store, pseudonyms: pseudonyms, rawSightings: variant == .raw)
        let summary = try await Self.onOwnThread {
            try ReplayTool.run(engine: engine, inputPath: input, eventsPath: nil, history: history)
        }
        let visits = try await store.database.fetchInteger("SELECT count(*) FROM visits") ?? 0
        // Closing checkpoints the WAL into the main file: the size is what the history occupies at rest.
        try store.close()
        return Replayed(
            sightings: summary.input.sightings, seconds: summary.wallSeconds, rows: summary.storedRows,
            commits: summary.commits, visits: visits, bytes: Self.fileBytes(path) + Self.fileBytes(path + "-wal"))
    }
}

// MARK: Live commits

extension StoreBench {
    /// How a timed database is opened, and which part of each journal it commits.
    enum LiveVariant: String, CaseIterable {
        case normal = "synchronous NORMAL"
        case full = "synchronous FULL"
        case ledgerOnly = "NORMAL, ledger rows only"
        case withoutLedger = "NORMAL, moves + events only"

        var durability: StoreDatabase.Durability { self == .full ? .full : .normal }

        /// The part of `journal` this variant commits.
        func part(of journal: HubJournal) -> HubJournal {
            var part = journal
            switch self {
            case .normal, .full: break
            case .ledgerOnly:
                part = HubJournal()
                part.batches = journal.batches
            case .withoutLedger: part.batches = []
            }
            return part
        }
    }

    /// One run of timed commits.
    struct Committed {
        var seconds: Double
        /// Seconds per commit, sorted.
        var latencies: [Double]

        var commitsPerSecond: Double { Double(latencies.count) / seconds }

        /// One round's line: commits/s, rows/s of `rows` committed, latency median and p99.
        func line(_ name: String, rows: Int) -> String {
            name
                + String(
                    format: "%6.1f commits/s %7.0f rows/s | latency median %6.2f ms, p99 %6.2f ms", commitsPerSecond,
                    Double(rows) / seconds, median * 1e3, p99 * 1e3)
        }
        var median: Double { HubBench.median(latencies) }
        var p99: Double { latencies[min(latencies.count - 1, latencies.count * 99 / 100)] }
    }

    func live(in directory: String) async throws {
        var load = LiveLoad(
            tags: liveTags, gateways: liveGateways, ledgerRows: ledgerRows, moves: moves, events: events)
        let t0 = start
        let template = directory + "/live-template.db"
        let began = ContinuousClock.now
        let store = try HubStore(path: template)
        try await store.adopt(site: "bench", keyID: nil)
        // The history is committed ten minutes to a transaction: the journals of a whole hour would not fit in memory
        // comfortably, and the timed commits only need the tables filled.
        let warmCommits = historyMinutes * 120
        var done = 0
        while done < warmCommits {
            var chunk = HubJournal()
            for index in done..<min(done + 1_200, warmCommits) {
                chunk.append(load.journal(at: t0 + Double(index) / 2))
            }
            done = min(done + 1_200, warmCommits)
            _ = try await store.commit(chunk, at: t0 + Double(done) / 2)
        }
        let history = (
            visits: try await store.database.fetchInteger("SELECT count(*) FROM visits") ?? 0,
            ledger: try await store.database.fetchInteger("SELECT count(*) FROM batches") ?? 0
        )
        try store.close()
        let prepared = (ContinuousClock.now - began).seconds
        let timedStart = t0 + Double(warmCommits) / 2
        let journals = (0..<commits).map { load.journal(at: timedStart + Double($0) / 2) }
        let rowsPerCommit = journals.map(\.rowCount).reduce(0, +) / commits
        print(
            "live commits: \(commits) commits (one per simulated 0.5 s) of \(ledgerRows) ledger rows + \(moves) zone "
                + "moves + \(events) events (\(rowsPerCommit) rows), \(liveTags) tags, \(liveGateways) gateways and "
                + "zones; each into a copy of a database holding \(historyMinutes) min of the same load ("
                + "\(HubBench.grouped(history.ledger)) ledger rows, \(HubBench.grouped(history.visits)) visits, "
                + "\(Self.mebibytes(Self.fileBytes(template))), built in \(String(format: "%.1f", prepared)) s)")

        var results: [LiveVariant: [Committed]] = [:]
        for round in 1...rounds {
            for variant in Self.rotated(LiveVariant.allCases, by: round - 1) {
                results[variant, default: []].append(
                    try await commitAll(
                        journals.map(variant.part), from: timedStart, variant: variant, template: template,
                        path: directory + "/live-\(round).db"))
            }
            for variant in LiveVariant.allCases {
                let result = results[variant]![round - 1]
                let rows = journals.map { variant.part(of: $0).rowCount }.reduce(0, +)
                print(result.line("  round \(round) " + Self.padded(variant.rawValue, 28), rows: rows))
            }
        }

        print("  best / median of \(rounds):")
        for variant in LiveVariant.allCases {
            let list = results[variant]!
            let rates = list.map(\.commitsPerSecond)
            print(
                "    " + Self.padded(variant.rawValue, 28)
                    + String(
                        format: "%6.1f / %6.1f commits/s | latency median %6.2f / %6.2f ms, p99 %6.2f / %6.2f ms",
                        rates.max()!, HubBench.median(rates), list.map(\.median).min()! * 1e3,
                        HubBench.median(list.map(\.median)) * 1e3, list.map(\.p99).min()! * 1e3,
                        HubBench.median(list.map(\.p99)) * 1e3))
        }
        func ratios(_ variant: LiveVariant) -> [Double] {
            zip(results[variant]!, results[.normal]!).map { $0.median / $1.median }
        }
        func listed(_ values: [Double]) -> NSString {
            values.map { String(format: "%.2f", $0) }.joined(separator: ", ") as NSString
        }
        print(
            String(
                format: "  median latency / NORMAL's, round by round: FULL %@; ledger rows only %@; moves + events "
                    + "only %@", listed(ratios(.full)), listed(ratios(.ledgerOnly)), listed(ratios(.withoutLedger))))
    }

    /// Copies the template database to `path` and commits `journals` there one at a time, as the live hub does.
    func commitAll(
        _ journals: [HubJournal], from t0: Double, variant: LiveVariant, template: String, path: String
    ) async throws -> Committed {
        defer {
            for file in [path, path + "-wal", path + "-shm", path + "-writer.lock"] {
                try? FileManager.default.removeItem(atPath: file)
            }
        }
        try FileManager.default.copyItem(atPath: template, toPath: path)
        let store = try HubStore(path: path, durability: variant.durability)
        var latencies: [Double] = []
        latencies.reserveCapacity(journals.count)
        let began = ContinuousClock.now
        for (index, journal) in journals.enumerated() {
            let before = ContinuousClock.now
            _ = try await store.commit(journal, at: t0 + Double(index) / 2 + 0.5)
            latencies.append((ContinuousClock.now - before).seconds)
        }
        let seconds = (ContinuousClock.now - began).seconds
        try store.close()
        return Committed(seconds: seconds, latencies: latencies.sorted())
    }

    /// The live hub's journals, deterministically: ledger rows for batches arriving round-robin from every gateway
    /// (sequences contiguous, so each commit moves acknowledgements), tags entering, moving between and leaving
    /// zones, and the enter and exit events of those moves (topped up with `stayed` events).
    struct LiveLoad {
        let ledgerRows: Int
        let moves: Int
        let events: Int
        let tagIDs: [String]
        let beacons: [String]
        let gatewayIDs: [String]
        var zones: [Int?]
        var sequences: [Int64]
        var nextGateway = 0
        var generator = SeededGenerator(seed: 1)

        init(tags: Int, gateways: Int, ledgerRows: Int, moves: Int, events: Int) {
            self.ledgerRows = ledgerRows
            self.moves = moves
            self.events = events
            tagIDs = (0..<tags).map { "tag-\($0)" }
            beacons = (0..<tags).map { "ibeacon:e2c56db5-dffb-48d2-b060-d0f5a71096e0:1:\($0)" }
            gatewayIDs = (0..<gateways).map { "gw-\($0)" }
            zones = Array(repeating: nil, count: tags)
            sequences = Array(repeating: 0, count: gateways)
        }

        mutating func journal(at t: Double) -> HubJournal {
            var journal = HubJournal()
            journal.batches.reserveCapacity(ledgerRows)
            for _ in 0..<ledgerRows {
                let gateway = nextGateway
                nextGateway = (nextGateway + 1) % gatewayIDs.count
                sequences[gateway] += 1
                journal.batches.append(
                    HubJournal.Batch(
                        gateway: gatewayIDs[gateway], boot: "boot-1", seq: sequences[gateway], received: t,
                        sightings: 100))
            }
            for index in 0..<moves {
                let when = t + Double(index) / Double(moves) / 2
                let tag = Int.random(in: 0..<tagIDs.count, using: &generator)
                let from = zones[tag]
                var to: Int? = Int.random(in: 0..<gatewayIDs.count, using: &generator)
                if to == from || (from != nil && Int.random(in: 0..<10, using: &generator) == 0) { to = nil }
                zones[tag] = to
                let zone = { (zone: Int?) in zone.map { "zone-\($0)" } }
                journal.moves.append(
                    HubJournal.Move(
                        key: tagIDs[tag], beaconKey: beacons[tag], liveTag: tagIDs[tag], beacon: beacons[tag],
                        region: "visitors", from: zone(from), to: zone(to), t: when, confidence: 0.9))
                if from != nil { journal.events.append(event("exit", tag, zone(from), zone(to), when)) }
                if to != nil { journal.events.append(event("enter", tag, zone(to), zone(from), when)) }
            }
            while journal.events.count < events {
                let tag = Int.random(in: 0..<tagIDs.count, using: &generator)
                journal.events.append(event("stayed", tag, zones[tag].map { "zone-\($0)" }, nil, t))
            }
            journal.events.removeLast(journal.events.count - events)
            return journal
        }

        func event(_ type: String, _ tag: Int, _ zone: String?, _ previous: String?, _ t: Double) -> HubJournal.Event {
            HubJournal.Event(
                t: t, type: type, key: tagIDs[tag], liveTag: tagIDs[tag], zone: zone, previousZone: previous,
                confidence: 0.9, dwell: nil, region: "visitors", code: nil, gateway: nil, reason: "bench")
        }
    }
}

// MARK: Helpers

extension StoreBench {
    /// Runs blocking work (the replay's synchronous commits, the simulation's file writing) on a thread of its own,
    /// never on the cooperative pool.
    static func onOwnThread<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            Thread { continuation.resume(with: Result { try work() }) }.start()
        }
    }

    /// `list` starting at its `offset`th element, wrapping round.
    static func rotated<T>(_ list: [T], by offset: Int) -> [T] {
        let start = offset % list.count
        return Array(list[start...] + list[..<start])
    }

    /// `text` padded with spaces to `width` columns (`%-24@` does not pad on Linux).
    static func padded(_ text: String, _ width: Int) -> String {
        text + String(repeating: " ", count: max(1, width - text.count))
    }

    static func fileBytes(_ path: String) -> Int {
        ((try? FileManager.default.attributesOfItem(atPath: path))?[.size] as? NSNumber)?.intValue ?? 0
    }

    static func mebibytes(_ bytes: Int) -> String { String(format: "%.1f MiB", Double(bytes) / 1_048_576) }
}
