import ArgumentParser
import BeaconConfig
import BeaconHub
import BeaconMQTT
import BeaconModel
import BeaconStore
import Dashboard
import Foundation
import Logging
import ServiceLifecycle
import UnixSignals
import ZoneInference

@main
struct BeaconHubCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "beacon-hub",
        abstract: "BeaconTracker hub: fuses sightings from every gateway into zones, events and history.",
        discussion: "Configuration: docs/configuration.md. Zone inference: docs/inference.md.",
        version: BeaconTrackerVersion.current,
        subcommands: [
            Run.self, Serve.self, Check.self, Watch.self, Replay.self, Calibrate.self, Visits.self, Dwell.self,
            Routes.self,
            Occupancy.self,
            Forget.self, Backup.self, Tags.self,
        ],
        defaultSubcommand: Run.self
    )

    struct Run: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Run the hub service: follow the gateways and publish the hub's state.")

        @Option(help: "Path of hub.yaml.")
        var config = "/etc/beacontracker/hub.yaml"

        @Option(help: "Log level: trace, debug, info, notice, warning, error, critical.")
        var logLevel: Logger.Level = .info

        func run() async throws {
            try await runService(label: "beacontracker.hub", logLevel: logLevel) { logger in
                try buildHub(
                    configuration: try HubConfiguration.load(from: config), configFile: config, logger: logger)
            }
        }
    }

    struct Serve: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Serve the HTTP API and dashboard over the history, ingesting nothing (the analytics process).",
            discussion: """
                Reads hub.yaml's store: (a shared PostgreSQL history: every site's; a SQLite file: its one site) and \
                http: (host, port, tokenFile: the same token rules as the hub's dashboard). Requests read the \
                configuration's site unless they name another with site=NAME; /api/dwell takes site=all. Connects \
                to no broker.
                """)

        @Option(help: "Path of hub.yaml (its site, store: and http: sections).")
        var config = "/etc/beacontracker/hub.yaml"

        @Option(help: "Log level: trace, debug, info, notice, warning, error, critical.")
        var logLevel: Logger.Level = .info

        func run() async throws {
            try await runService(label: "beacontracker.serve", logLevel: logLevel) { logger in
                try buildHistoryServer(configuration: try HubConfiguration.load(from: config), logger: logger)
            }
        }
    }

    struct Check: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Check hub.yaml and the files it names without starting anything.",
            discussion: """
                Prints a summary (site, zones, gateways, tags, regions, store, http, broker) and exits 0, or prints \
                every problem with its key and what to do and exits 78. Connects to nothing, opens no database, \
                binds no port. The systemd unit runs it before the hub (ExecStartPre).
                """)

        @Option(help: "Path of hub.yaml.")
        var config = "/etc/beacontracker/hub.yaml"

        func run() throws {
            let report = HubConfigurationCheck.run(configFile: config)
            print(report.text)
            if !report.passed { throw ExitCode(78) }
        }
    }

    struct Watch: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Print the site's events as they happen (and tag states and zone occupancy with --states).")

        @Option(help: "Path of hub.yaml (its broker, root and site are used).")
        var config = "/etc/beacontracker/hub.yaml"

        @Flag(help: "Also print every tag state and zone occupancy change.")
        var states = false

        @Flag(help: "Print each message as JSON ({\"topic\":…,\"payload\":…}) instead of a readable line.")
        var json = false

        func run() async throws {
            let configuration: HubConfiguration
            let client: MQTTClient
            do {
                configuration = try HubConfiguration.load(from: config)
                var mqtt = try configuration.mqtt.clientConfiguration(
                    defaultClientID: "watch", cleanSession: true, will: nil, configFile: config)
                mqtt.clientID = "watch-\(configuration.hub)-\(UUID().uuidString.prefix(8))"
                client = try MQTTClient(configuration: mqtt, logger: Logger(label: "beacontracker.watch"))
            } catch {
                printError("\(error)")
                throw ExitCode(78)
            }
            let topics = configuration.mqtt.topics(site: configuration.site)
            do {
                try await client.connect()
            } catch {
                printError("\(error)")
                throw ExitCode(69)
            }
            await withTaskGroup(of: Void.self) { group in
                for filter in WatchTool.filters(topics, states: states) {
                    group.addTask {
                        guard let subscription = try? await client.subscribe(to: filter) else { return }
                        for await message in subscription {
                            if let line = WatchTool.line(for: message, json: json) {
                                // Unbuffered, so that a pipe (grep, a log file) sees each line as it comes.
                                FileHandle.standardOutput.write(Data((line + "\n").utf8))
                            }
                        }
                    }
                }
                let signals = await UnixSignalsSequence(trapping: .sigint, .sigterm)
                for await _ in signals { break }
                await client.shutdown()
            }
        }
    }

    struct Replay: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Run the zone engine offline on recorded sightings and write its event lines.",
            discussion: """
                INPUT holds sighting lines or sighting batch payloads as published (.jsonl or .jsonl.gz). The clock \
                is the sightings' scan time: the same input and configuration give the same events.
                """)

        @Option(help: "Path of hub.yaml (its venue, tags, regions, inference and calibration are used).")
        var config: String

        @Argument(help: "Recorded sightings (.jsonl or .jsonl.gz).")
        var input: String

        @Option(help: "Where to write the event lines.")
        var events: String?

        @Option(help: "Also write the history (visits, transitions, events, dwell) to this database file.")
        var db: String?

        @Flag(help: "Add to a database that already holds visits (by default that is refused: two histories mixed).")
        var append = false

        @Option(
            help: """
                Also write the summary as JSON to this file: counts, events by type, the position map's exponent, \
                and the last fit of the gateways' links (gains, offsets, exponent, walls, antennas).
                """)
        var report: String?

        func validate() throws {
            guard events != nil || db != nil else {
                throw ValidationError("give --events FILE, --db FILE, or both")
            }
        }

        func run() throws {
            let engine: ZoneEngine
            let configuration: HubConfiguration
            var history: ReplayTool.History?
            do {
                configuration = try HubConfiguration.load(from: config)
                engine = try configuration.makeEngine()
                if let db {
                    let settings = configuration.store
                    let store = try HubStore(
                        path: db, durability: settings?.synchronous ?? .normal,
                        tripGapSeconds: settings?.tripGapSeconds ?? 600)
                    let pseudonyms = try TagPseudonyms.load(settings)
                    try store.adoptNow(site: configuration.site.rawValue, keyID: pseudonyms.keyID)
                    if try store.hasVisitsNow() && !append {
                        throw HubSetupError(
                            "\(db) already holds visits: replay into a new file, or pass --append to add to them")
                    }
                    if let venue = configuration.loadedVenue {
                        try store.describeVenueNow(
                            zones: venue.zones.map { ($0.id.rawValue, $0.name) },
                            gateways: venue.gateways.map {
                                ($0.id.rawValue, $0.zone?.rawValue, $0.position.x, $0.position.y)
                            })
                    }
                    history = ReplayTool.History(
                        store: store, pseudonyms: pseudonyms, rawSightings: settings?.rawSightings ?? false)
                }
            } catch {
                printError("\(error)")
                throw ExitCode(78)
            }
            defer { try? history?.store.close() }
            let terminal = isatty(STDERR_FILENO) == 1
            let summary: ReplayTool.Summary
            do {
                summary = try ReplayTool.run(
                    engine: engine, inputPath: input, eventsPath: events, history: history,
                    tagHealth: configuration.tagHealth.settings
                ) { share, t in
                    guard terminal else { return }
                    FileHandle.standardError.write(Data(ReplayTool.progressLine(share: share, t: t).utf8))
                }
            } catch {
                printError("\(error.localizedDescription)")
                throw ExitCode(66)
            }
            if terminal { FileHandle.standardError.write(Data("\n".utf8)) }
            print(ReplayTool.report(summary))
            if let report {
                do {
                    try ReplayTool.Report(summary).json().write(to: URL(fileURLWithPath: report))
                } catch {
                    printError("cannot write the report to \(report): \(error.localizedDescription) — check the path")
                    throw ExitCode(73)
                }
            }
        }
    }

    struct Tags: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "List the tags that need someone: a low battery, or not heard for a while.",
            discussion: """
                Asks the running hub (its dashboard's /api/tags: the tags' retained states with their battery and \
                last seen), at --live or at hub.yaml's http: address. With --battery-below and --missing-for, a tag \
                matching either is listed; without them, every tag. Lowest battery first, then the longest unheard. \
                docs/hub.md, "Tags that need someone".
                """)

        @Option(help: "Path of hub.yaml (its http: section gives the hub's address and token file).")
        var config = "/etc/beacontracker/hub.yaml"

        @Option(help: "The running hub's dashboard address (http://host:port), instead of hub.yaml's.")
        var live: String?

        @Option(help: "A file holding the hub's API token (default: hub.yaml's http.tokenFile).")
        var tokenFile: String?

        @Option(help: "List tags whose battery reads below this many millivolts.")
        var batteryBelow: Int?

        @Option(help: "List tags not heard for this long: seconds, or 24h, 1d12h, 90m.")
        var missingFor: String?

        @Option(help: "table, csv or json.")
        var format: HistoryTool.Format = .table

        func run() async throws {
            var selection = TagsTool.Selection(batteryBelow: batteryBelow)
            if let missingFor {
                guard let seconds = TagsTool.parseDuration(missingFor) else {
                    printError(
                        "--missing-for takes seconds or a duration such as 24h, 1d12h or 90m, not \(missingFor)")
                    throw ExitCode(64)
                }
                selection.missingFor = seconds
            }
            var url = live
            var tokenPath = tokenFile
            // hub.yaml is read when it is needed (no --live), or when it is there to name the token file; with --live
            // a file that does not load only costs its token file.
            if live == nil || (tokenFile == nil && FileManager.default.fileExists(atPath: config)) {
                do {
                    let configuration = try HubConfiguration.load(from: config)
                    url = url ?? TagsTool.url(of: configuration)
                    tokenPath = tokenPath ?? configuration.http?.tokenFile
                } catch {
                    guard live != nil else {
                        printError("\(error)")
                        let hint = "(or give the hub's address with --live URL, and --token-file if it has a token)\n"
                        FileHandle.standardError.write(Data(hint.utf8))
                        throw ExitCode(78)
                    }
                    FileHandle.standardError.write(
                        Data("warning: \(config) not read (\(error)); asking \(live!) without its token file\n".utf8))
                }
            }
            guard let url else {
                printError(
                    "\(config) gives no address of the dashboard (no http: section, or port 0, chosen at start): "
                        + "give the hub's address with --live URL")
                throw ExitCode(64)
            }
            try await BeaconHubCommand.askHub(tokenFile: tokenPath) { token in
                try await TagsTool.run(url: url, token: token, selection: selection, format: format)
            }
        }
    }

    /// Reads the API token from `tokenFile`, asks a running hub and prints its answer. Exit 64 when the action lacks an
    /// option, 69 when the hub could not be reached, 65 when it refused (its code and message printed) or the token
    /// file could not be read.
    static func askHub(tokenFile: String?, _ request: (String?) async throws -> String) async throws {
        do {
            let token = try tokenFile.map {
                try String(contentsOfFile: $0, encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)
            }
            print(try await request(token))
        } catch let error as LiveCalibrateTool.Failure {
            printError("\(error)")
            throw ExitCode(error.usage ? 64 : error.code == nil ? 69 : 65)
        } catch {
            printError("\(error)")
            throw ExitCode(65)
        }
    }

    struct Calibrate: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Compute a calibration from a recorded walk, or drive a live calibration walk on a running hub.",
            discussion: """
                From a recording: beacon-hub calibrate --config hub.yaml INPUT --plan plan.yaml --out calibration.yaml \
                reads a recording (sighting lines or batch payloads) of a person standing with one tag in each zone \
                for about 30 s; --plan names the tag and when it stood where (docs/inference.md, "Calibration").

                Live: beacon-hub calibrate --live http://HUB:PORT ACTION drives the dashboard's calibration page's \
                session (docs/hub.md): start --beacon B --who NAME [--seconds 30]; mark --zone Z | --at X,Y; \
                plan --plan plan.yaml (the plan file's stops and route in place of marks); status; \
                finish [--note TEXT] (applies it live and stores a version); cancel; rollback --who NAME \
                [--version N]; versions; place --gateway GW --at X,Y --who NAME [--zone Z] [--note TEXT] (a moved \
                gateway where it stands now, live, as a version). --token-file when the hub has http.tokenFile.
                """)

        @Option(help: "Path of hub.yaml (from a recording).")
        var config: String?

        @Argument(help: "The recorded walk (.jsonl or .jsonl.gz); with --live, the action.")
        var input: String

        @Option(help: "The plan file: the calibration tag's beacon, its stops (zone, from, to) and route.")
        var plan: String?

        @Option(help: "Where to write the calibration file (YAML; from a recording).")
        var out: String?

        @Option(
            help: """
                From a recording: take the plan's stops as a phone walk's taps, computed as the calibration page \
                does: points (one as each stop began, at the route's place then: a walker who stands), zones (one \
                as each stop began: a walker who strolls round each zone) or route (a point at each of the route's \
                places within each stop: a walker who strolls round each zone tapping where they are).
                """)
        var taps: CalibrateTool.Taps?

        @Option(help: "The running hub's dashboard address (http://host:port): drive a live walk.")
        var live: String?

        @Option(help: "A file holding the hub's API token (http.tokenFile), for --live.")
        var tokenFile: String?

        @Option(help: "start: the beacon you carry.")
        var beacon: String?

        @Option(help: "start, rollback, place: who walks (recorded with the version).")
        var who: String?

        @Option(help: "start: seconds each stay lasts (default 30).")
        var seconds: Double?

        @Option(help: "mark: the zone you stand in; place: the zone the gateway serves (default: the zone it is in).")
        var zone: String?

        @Option(help: "mark: where you stand, x,y in venue metres; place: where the gateway stands now.")
        var at: String?

        @Option(help: "place: the gateway moved (its id in the venue file).")
        var gateway: String?

        @Option(help: "mark: when the stay began (unix seconds; default: now).")
        var time: Double?

        @Option(help: "mark: when the stay ends (unix seconds; default: after the walk's stay seconds).")
        var until: Double?

        @Option(help: "finish, place: a note kept with the version.")
        var note: String?

        @Option(help: "rollback: the version to put back (0: hub.yaml's calibration; default: the one before).")
        var version: Int?

        func run() async throws {
            if let live {
                try await runLive(live)
                return
            }
            guard let config, let plan, let out else {
                printError("from a recording, give --config, --plan and --out (or --live URL ACTION for a live walk)")
                throw ExitCode(64)
            }
            do {
                let configuration = try HubConfiguration.load(from: config)
                let result = try CalibrateTool.run(
                    configuration: configuration, inputPath: input, planPath: plan, outputPath: out, taps: taps)
                print(result.report)
            } catch let error as ConfigError {
                printError("\(error)")
                throw ExitCode(78)
            } catch {
                printError("\(error)")
                throw ExitCode(65)
            }
        }

        func runLive(_ url: String) async throws {
            guard let action = LiveCalibrateTool.Action(rawValue: input) else {
                printError(
                    "with --live the action is one of "
                        + LiveCalibrateTool.Action.allCases.map(\.rawValue).joined(separator: ", ") + ", not \(input)")
                throw ExitCode(64)
            }
            var options = LiveCalibrateTool.Options()
            options.beacon = beacon
            options.who = who
            options.seconds = seconds
            options.zone = zone
            options.at = at
            options.t = time
            options.until = until
            options.planPath = plan
            options.note = note
            options.version = version
            options.gateway = gateway
            try await BeaconHubCommand.askHub(tokenFile: tokenFile) { token in
                try await LiveCalibrateTool.run(url: url, token: token, action: action, options: options)
            }
        }
    }
}

/// Writes `error: MESSAGE` to standard error: standard output carries only what a command produces (a report, JSON,
/// CSV), so that a consumer never reads an error as data.
func printError(_ message: String) {
    FileHandle.standardError.write(Data(("error: " + message + "\n").utf8))
}

/// Logs to standard error at `logLevel`, builds the service (exit 78 with the error when the configuration is wrong)
/// and runs it until SIGTERM or SIGINT.
func runService(
    label: String, logLevel: Logger.Level, _ build: (Logger) throws -> any Service
) async throws {
    LoggingSystem.bootstrap { label in
        var handler = StreamLogHandler.standardError(label: label)
        handler.logLevel = logLevel
        return handler
    }
    let logger = Logger(label: label)
    let service: any Service
    do {
        service = try build(logger)
    } catch {
        printError("\(error)")
        throw ExitCode(78)
    }
    let group = ServiceGroup(
        services: [service], gracefulShutdownSignals: [.sigterm, .sigint], cancellationSignals: [], logger: logger)
    try await group.run()
}

/// The options every history command takes.
struct HistoryOptions: ParsableArguments {
    @Option(help: "The database file (default: store.path of --config).")
    var db: String?

    @Option(
        help: "Path of hub.yaml, for store.path and the pseudonymisation key (default /etc/beacontracker/hub.yaml).")
    var config: String?

    @Option(help: "Output: table, csv or json.")
    var format: HistoryTool.Format = .table

    @Option(
        help: ArgumentHelp(
            "The site to report on, or all (a shared PostgreSQL history; default: site of --config).",
            discussion: "With all, each row starts with its site: the rows of every site, each as --site NAME gives "
                + "them."))
    var site: String?

    func source() throws -> HistoryTool.Source {
        // Reports go to standard output (often a CSV file): the libraries' log lines go to standard error, warnings
        // and worse only.
        LoggingSystem.bootstrap { label in
            var handler = StreamLogHandler.standardError(label: label)
            handler.logLevel = .warning
            return handler
        }
        do {
            return try HistoryTool.Source.resolve(db: db, configPath: config, site: site)
        } catch {
            printError("\(error)")
            throw ExitCode(78)
        }
    }
}

/// A time option: unix seconds or ISO-8601.
struct Time: ExpressibleByArgument {
    var seconds: Double

    init?(argument: String) {
        guard let seconds = try? HistoryTool.parseTime(argument) else { return nil }
        self.seconds = seconds
    }

    static var defaultCompletionKind: CompletionKind { .default }
}

/// Runs a history report, printing its output or its error (exit 65 for data problems, 66 for an unreadable file).
func report(_ body: () async throws -> String) async throws {
    do {
        print(try await body())
    } catch let error as StoreError {
        printError("\(error)")
        throw ExitCode(error.code == .cannotOpen ? 66 : 65)
    } catch {
        printError("\(error)")
        throw ExitCode(65)
    }
}

extension BeaconHubCommand {
    struct Visits: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "List zone visits (tag, zone, enter, exit, duration, confidence, suspect).",
            discussion: "Times: unix seconds or ISO-8601 (2026-11-23T14:30:00Z, or local: 2026-11-23T14:30).")

        @OptionGroup var options: HistoryOptions
        @Option(help: "Only this tag.") var tag: String?
        @Option(help: "Only this zone.") var zone: String?
        @Option(help: "Visits still going on at or after this time.") var since: Time?
        @Option(help: "Visits that began before this time.") var until: Time?
        @Option(help: "At most this many visits (oldest first).") var limit: Int?

        func run() async throws {
            let source = try options.source()
            try await report {
                try await HistoryTool.visits(
                    source, tag: tag, zone: zone, since: since?.seconds, until: until?.seconds, limit: limit,
                    format: options.format)
            }
        }
    }

    struct Dwell: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Dwell statistics of closed visits: visits, distinct tags, total, mean, median and p90 seconds.",
            discussion: "A visit counts in the hour (or day) it began; days are local midnights.")

        @OptionGroup var options: HistoryOptions
        @Option(help: "Only this zone.") var zone: String?
        @Option(help: "Group by hour, day, zone, tag or hour-of-day.") var by: HubStore.DwellGrouping
        @Option(help: "Visits that began at or after this time.") var since: Time?
        @Option(help: "Visits that began before this time.") var until: Time?

        func run() async throws {
            let source = try options.source()
            try await report {
                try await HistoryTool.dwell(
                    source, by: by, zone: zone, since: since?.seconds, until: until?.seconds, format: options.format)
            }
        }
    }

    struct Routes: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "The most common zone sequences and the zone-to-zone transition matrix.",
            discussion: "Visits of a tag form one trip while each starts within store.tripGapSeconds of the last exit.")

        @OptionGroup var options: HistoryOptions
        @Option(help: "How many sequences.") var top = 10
        @Option(help: "Zones per sequence (at least 2).") var length = 3
        @Option(help: "Visits still going on at or after this time.") var since: Time?
        @Option(help: "Visits that began before this time.") var until: Time?

        func validate() throws {
            guard top >= 1 else { throw ValidationError("--top must be at least 1") }
            guard length >= 2 else { throw ValidationError("--length must be at least 2 (a route joins zones)") }
        }

        func run() async throws {
            let source = try options.source()
            try await report {
                try await HistoryTool.routes(
                    source, top: top, length: length, since: since?.seconds, until: until?.seconds,
                    format: options.format)
            }
        }
    }

    struct Occupancy: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Who was in which zone at a time.")

        @OptionGroup var options: HistoryOptions
        @Option(help: "The time: unix seconds or ISO-8601.") var at: Time

        func run() async throws {
            let source = try options.source()
            try await report { try await HistoryTool.occupancy(source, at: at.seconds, format: options.format) }
        }
    }

    struct Forget: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Delete every row about one tag (visits, transitions, events, raw sightings, its state).",
            discussion: """
                Needs the database to itself: stop the hub first (it holds the writer lock). Then clear the tag's \
                retained state: mosquitto_pub -r -n -t '<root>/<site>/tags/<tag>/state'.
                """)

        @OptionGroup var options: HistoryOptions
        @Option(help: "The tag id (as the hub names it; the pseudonym is derived with the configured key).")
        var tag: String

        func run() async throws {
            let source = try options.source()
            try await report { try await HistoryTool.forget(source, tag: tag) }
        }
    }

    struct Backup: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Copy the history database while the hub runs: a consistent snapshot of its last commit.",
            discussion: """
                Uses SQLite's VACUUM INTO from a read-only connection, so the hub goes on writing; the copy is \
                compact, has no -wal file, and is checked (PRAGMA integrity_check) before this reports it. The \
                target must not exist. To restore: stop the hub, replace store.path with the copy (and delete the \
                old -wal and -shm files beside it), start the hub; the agents resend what their outboxes still hold.
                """)

        @OptionGroup var options: HistoryOptions
        @Option(help: "The new file to write.")
        var to: String

        func run() async throws {
            let source = try options.source()
            try await report { try await HistoryTool.backup(source, to: to) }
        }
    }
}

extension HistoryTool.Format: ExpressibleByArgument {}
extension HubStore.DwellGrouping: ExpressibleByArgument {}
extension Logger.Level: @retroactive ExpressibleByArgument {}

extension CalibrateTool.Taps: ExpressibleByArgument {}
