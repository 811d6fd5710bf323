import ArgumentParser
import BeaconConfig
import BeaconModel
import Foundation
import Logging
import ServiceLifecycle
import Simulator
import SimulatorService

@main
struct BeaconSimCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "beacon-sim",
        abstract: "BeaconTracker venue simulator: gateways, zones and walking tags with ground truth.",
        discussion: "Venue files: docs/venue.md. Output formats: docs/simulator.md.",
        version: BeaconTrackerVersion.current,
        subcommands: [
            Run.self, CalibrationWalkCommand.self, RadioMapCommand.self, Score.self, FingerprintCommand.self,
            VenueCommand.self, BenchCommand.self,
        ]
    )

    struct Run: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Simulate a venue: into files (--out), or live into a broker as its gateways' agents (--mqtt).")

        @Argument(help: "The venue file (config/venues/*.yaml).")
        var venue: String

        @Option(help: "Directory for sightings, truth, near-boundary, oracle, nominal .jsonl (as fast as possible).")
        var out: String?

        @Option(help: "HOST:PORT of a broker: play every gateway live, as an agent would.")
        var mqtt: String?

        @Option(help: "With --mqtt: simulated seconds per real second.")
        var speed: Double = 1

        @Option(help: "With --mqtt: where the simulated gateways keep their outboxes (default: a temporary directory).")
        var outboxDir: String?

        @Option(help: "With --mqtt: write the ground truth (truth lines, as --out does) to this file as it happens.")
        var truth: String?

        @Option(help: "How long to simulate: 90s, 30m, 1h, 2h30m, or seconds (with --mqtt: until stopped if absent).")
        var duration: String?

        @Option(help: "Random seed: the same seed gives the same run.")
        var seed: UInt64 = 1

        @Option(help: "Unix time the simulation starts at (default: now, rounded to the second).")
        var start: Double?

        @Flag(help: "Write .jsonl.gz (gzip) instead of .jsonl.")
        var gzip = false

        @Flag(
            help: ArgumentHelp(
                "Every gateway also advertises a beacon of its own (agent.yaml selfBeacon; the venue file's beacon: "
                    + "where it names one), heard by the others through the same radio. With --out its "
                    + "sightings go into sightings.jsonl among the tags'."))
        var gatewayBeacons = false

        @Option(help: "With --gateway-beacons: each gateway's beacon advertises every this many seconds (0.02–10).")
        var gatewayBeaconInterval = 0.2

        @Flag(
            name: .customLong("no-oracle"),
            help: "With --out: skip oracle.jsonl and nominal.jsonl (the position oracle costs most of the run time).")
        var noOracle = false

        @Flag(
            help: ArgumentHelp(
                "With --out: also unshadowed.jsonl, the decisions of the oracle that knows all but the static "
                    + "shadowing (the gateways' gains and antennas, the walls' losses, the tags' powers): a reference "
                    + "for a calibration that maps no more of the field than it walks."))
        var unshadowedOracle = false

        func validate() throws {
            guard (out == nil) != (mqtt == nil) else {
                throw ValidationError("give exactly one of --out DIR or --mqtt HOST:PORT")
            }
            if let duration, SimulatedDuration.parse(duration) == nil {
                throw ValidationError("--duration \(duration): expected e.g. 90s, 30m, 1h, 2h30m, or seconds")
            }
            guard speed > 0 else { throw ValidationError("--speed must be positive") }
            guard (0.02...10).contains(gatewayBeaconInterval) else {
                throw ValidationError("--gateway-beacon-interval \(gatewayBeaconInterval): seconds, 0.02 to 10")
            }
            if truth != nil && mqtt == nil {
                throw ValidationError("--truth goes with --mqtt (--out writes truth.jsonl)")
            }
            if unshadowedOracle && out == nil {
                throw ValidationError("--unshadowed-oracle goes with --out (it writes unshadowed.jsonl there)")
            }
        }

        func run() async throws {
            let seconds = duration.flatMap(SimulatedDuration.parse)
            let loaded = try loadVenueFile(venue)
            if let mqtt {
                try await runLive(loaded, broker: mqtt, duration: seconds)
                return
            }
            let out = out ?? "."
            let duration = self.duration ?? "1h"
            let begin = start ?? Date().timeIntervalSince1970.rounded(.down)
            let summary = try SimulationRun.writeFiles(
                venue: loaded, seed: seed, start: begin, duration: seconds ?? 3600, directory: out, gzip: gzip,
                oracle: !noOracle, gatewayBeacons: gatewayBeacons, unshadowedOracle: unshadowedOracle,
                gatewayBeaconInterval: gatewayBeaconInterval)
            let simulating = summary.wallSeconds - summary.oracleSeconds - summary.nearBoundarySeconds
            let rate = Double(summary.sightings) / max(simulating, 1e-9)
            print(
                "beacon-sim: \(loaded.site): \(summary.tags) tags, \(summary.gateways) gateways, \(duration) simulated"
                    + " in \(String(format: "%.1f", summary.wallSeconds)) s: \(summary.sightings) sightings"
                    + " (\(Int(rate)) sightings/s), \(summary.truthIntervals) truth intervals → \(out)")
            if gatewayBeacons {
                print(
                    "beacon-sim: of those, \(summary.gatewayBeaconSightings) sightings of the gateways' own beacons")
            }
            print(
                "beacon-sim: \(summary.nearBoundaryIntervals) near-boundary intervals (positions every"
                    + " \(VenueSimulation.positionStep) s) in \(String(format: "%.2f", summary.nearBoundarySeconds)) s")
            if let cells = summary.oracleCells {
                let files = (noOracle ? [] : ["oracle", "nominal"]) + (unshadowedOracle ? ["unshadowed"] : [])
                print(
                    "beacon-sim: \(files.joined(separator: ", ")) reference (\(cells.count) cells of \(cells.size) m)"
                        + " took \(String(format: "%.1f", summary.oracleSeconds)) s of that → event lines")
            }
        }

        func runLive(_ venue: Venue, broker: String, duration: Double?) async throws {
            let parts = broker.split(separator: ":")
            guard parts.count == 2, let port = Int(parts[1]) else {
                throw ValidationError("--mqtt \(broker): expected HOST:PORT")
            }
            LoggingSystem.bootstrap { label in
                var handler = StreamLogHandler.standardError(label: label)
                handler.logLevel = .notice
                return handler
            }
            let logger = Logger(label: "beacontracker.sim")
            let directory =
                outboxDir ?? FileManager.default.temporaryDirectory.appendingPathComponent("beacon-sim-\(UUID())").path
            let services = try buildLiveSimulation(
                venue: venue, seed: seed, speed: speed, duration: duration, host: String(parts[0]), port: port,
                outboxDirectory: directory, truthPath: truth, gatewayBeacons: gatewayBeacons, logger: logger)
            var configurations = services.dropLast().map { ServiceGroupConfiguration.ServiceConfiguration(service: $0) }
            if let driver = services.last {
                configurations.append(.init(service: driver, successTerminationBehavior: .gracefullyShutdownGroup))
            }
            let group = ServiceGroup(
                configuration: ServiceGroupConfiguration(
                    services: configurations, gracefulShutdownSignals: [.sigterm, .sigint], logger: logger))
            try await group.run()
            if outboxDir == nil { try? FileManager.default.removeItem(atPath: directory) }
        }
    }
}

struct Score: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Score the hub's event lines against the truth, beside the strongest-gateway baseline.",
        discussion: "Reads .jsonl or .jsonl.gz. Metrics: docs/simulator.md.")

    @Option(help: "The venue file.")
    var venue: String

    @Option(help: "truth.jsonl from beacon-sim run.")
    var truth: String

    @Option(help: "The hub's event lines (beacon-hub replay --events).")
    var events: String

    @Option(help: "sightings.jsonl: also score the strongest-gateway baseline on them.")
    var sightings: String?

    @Option(help: "oracle.jsonl from beacon-sim run: also score the position oracle (the practical limit).")
    var oracle: String?

    @Option(help: "nominal.jsonl from beacon-sim run: also score the nominal-model reference.")
    var nominal: String?

    @Option(help: "near-boundary.jsonl from beacon-sim run: also score each method away from zone boundaries.")
    var nearBoundary: String?

    @Option(
        help:
            "Positions (lines of tag, t, x, y) of a recording: score away from zone boundaries as --near-boundary does."
    )
    var positions: String?

    @Flag(help: "Print JSON instead of a table.")
    var json = false

    func validate() throws {
        if nearBoundary != nil && positions != nil {
            throw ValidationError("--near-boundary and --positions: give one (both say where the tags were)")
        }
    }

    func run() throws {
        let loaded = try loadVenueFile(venue)
        let report: ScoreTool.Report
        do {
            report = try ScoreTool.run(
                venue: loaded, truthPath: truth, eventsPath: events, sightingsPath: sightings, oraclePath: oracle,
                nominalPath: nominal, nearBoundaryPath: nearBoundary, positionsPath: positions)
        } catch {
            printError("\(error.localizedDescription)")
            throw ExitCode(66)
        }
        if json {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.sortedKeys, .prettyPrinted]
            print(String(decoding: try encoder.encode(report), as: UTF8.self))
        } else {
            print(ScoreTool.table(report))
        }
    }
}

struct CalibrationWalkCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "calibration-walk",
        abstract:
            "Simulate a calibration walk: one tag standing ~30 s in each zone; writes sightings.jsonl + plan.yaml.",
        discussion: "Use the seed of the run it should calibrate: the radio (gains, shadowing) is the same.")

    @Argument(help: "The venue file (config/venues/*.yaml).")
    var venue: String

    @Option(help: "Directory for sightings.jsonl and plan.yaml.")
    var out: String

    @Option(help: "Random seed: the radio of `beacon-sim run` with the same seed.")
    var seed: UInt64 = 1

    @Option(help: "Unix time the walk starts at (default: now, rounded to the second).")
    var start: Double?

    @Option(help: "Seconds standing in each zone.")
    var dwell: Double = 30

    @Flag(help: "Walk slowly round the middle of each zone instead of standing at one spot.")
    var stroll = false

    @Option(help: "A zone the walker never enters (repeatable): a part of the venue left unwalked.")
    var skip: [String] = []

    @Option(help: "Leave out every K-th zone of the venue's order (the K-th, 2K-th, …), K at least 2.")
    var skipEvery: Int?

    func validate() throws {
        if let skipEvery, skipEvery < 2 {
            throw ValidationError("--skip-every \(skipEvery): K must be at least 2 (a walk enters some zone)")
        }
    }

    func run() throws {
        let loaded = try loadVenueFile(venue)
        var skipping = CalibrationWalk.everyOther(skipEvery ?? 0, of: loaded)
        for zone in skip {
            guard let known = loaded.zones.first(where: { $0.id.rawValue == zone }) else {
                printError(
                    "--skip \(zone): no such zone in \(venue) (its zones: "
                        + loaded.zones.map(\.id.rawValue).joined(separator: ", ") + ")")
                throw ExitCode(64)
            }
            skipping.insert(known.id)
        }
        guard skipping.count < loaded.zones.count else {
            printError("the walk would skip every zone of \(venue): leave at least one to walk")
            throw ExitCode(64)
        }
        let summary = try CalibrationWalk.writeFiles(
            venue: loaded, seed: seed, start: start ?? Date().timeIntervalSince1970.rounded(.down), dwell: dwell,
            strolling: stroll, skipping: skipping, directory: out)
        print("beacon-sim: calibration walk of \(summary.stops) zones, \(summary.sightings) sightings → \(out)")
    }
}

/// The venue file at `path`; an error in it is printed and the command exits 78 (configuration), as every subcommand
/// that reads one reports it.
func loadVenueFile(_ path: String) throws -> Venue {
    do {
        return try VenueLoader.load(from: path)
    } catch {
        printError("\(error)")
        throw ExitCode(78)
    }
}

/// Writes `error: MESSAGE` to standard error: standard output carries only what a command produces.
func printError(_ message: String) {
    FileHandle.standardError.write(Data(("error: " + message + "\n").utf8))
}
