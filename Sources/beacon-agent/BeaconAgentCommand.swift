import ArgumentParser
import BeaconAgent
import BeaconConfig
import BeaconModel
import Foundation
import Logging
import ServiceLifecycle

@main
struct BeaconAgentCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "beacon-agent",
        abstract: "BeaconTracker gateway agent: scans BLE beacons and publishes sightings to MQTT.",
        version: BeaconTrackerVersion.current,
        subcommands: [Run.self, Check.self, Replay.self, Decode.self],
        defaultSubcommand: Run.self
    )

    struct Run: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Connect to the broker and keep this gateway's status and sightings flowing.")

        @Option(help: "Path of agent.yaml.")
        var config = "/etc/beacontracker/agent.yaml"

        @Option(help: "Log level: trace, debug, info, notice, warning, error, critical.")
        var logLevel: Logger.Level = .info

        @Flag(help: "Do not scan: only keep status and drain the outbox (e.g. after moving a gateway's outbox).")
        var noScan = false

        func run() async throws {
            try await runAgent(
                config: config, logLevel: logLevel, source: noScan ? .none : .scanner, stopWhenDrained: nil)
        }
    }
}

struct Check: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Check agent.yaml and the files it names without starting anything.",
        discussion: """
            Prints a summary (gateway, broker, regions, outbox, scanner) and exits 0, or prints every problem with \
            its key and what to do and exits 78. Connects to nothing, opens no outbox, does not scan. The systemd \
            unit runs it before the agent (ExecStartPre).
            """)

    @Option(help: "Path of agent.yaml.")
    var config = "/etc/beacontracker/agent.yaml"

    func run() throws {
        let report = AgentConfigurationCheck.run(configFile: config)
        print(report.text)
        if !report.passed { throw ExitCode(78) }
    }
}

/// Loads the configuration, builds the agent and runs it until SIGTERM/SIGINT (or until drained, for a replay).
func runAgent(
    config: String, logLevel: Logger.Level, source: AdvertisementSource, stopWhenDrained: Duration?
) async throws {
    LoggingSystem.bootstrap { label in
        var handler = StreamLogHandler.standardError(label: label)
        handler.logLevel = logLevel
        return handler
    }
    let logger = Logger(label: "beacontracker.agent")
    let agent: Agent
    do {
        agent = try buildAgent(
            configuration: try AgentConfiguration.load(from: config), configFile: config, source: source,
            stopWhenDrained: stopWhenDrained, logger: logger)
    } catch {
        printError("\(error)")
        throw ExitCode(78)
    }
    let group = ServiceGroup(
        configuration: ServiceGroupConfiguration(
            services: [.init(service: agent, successTerminationBehavior: .gracefullyShutdownGroup)],
            gracefulShutdownSignals: [.sigterm, .sigint], logger: logger))
    try await group.run()
}

struct Replay: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Feed a btsnoop capture (btmon -w or Android H4) through decode → filter → publish.",
        discussion: """
            With --dry-run, prints the sightings as JSON lines (docs/mqtt.md, sighting line) with the capture's
            timestamps and publishes nothing. Otherwise publishes through the outbox like a live gateway (scan times
            re-based to now unless --keep-times) and exits once the hub has acknowledged everything or
            --drain-timeout passes.
            """)

    @Argument(help: "The capture file.")
    var capture: String

    @Option(help: "Playback speed: 1 is real time, 10 ten times faster, 0 as fast as possible.")
    var speed: Double = 1

    @Flag(help: "Print sighting lines instead of publishing.")
    var dryRun = false

    @Option(help: "agent.yaml: gateway id, regions, broker and outbox. Required unless --dry-run.")
    var config: String?

    @Option(help: "Gateway id for --dry-run output (default: the config's, else \"replay\").")
    var gateway: String?

    @Flag(help: "Publish the capture's own scan times instead of re-basing them to now.")
    var keepTimes = false

    @Option(help: "Seconds to wait after the capture for the hub's acknowledgements.")
    var drainTimeout: Double = 30

    @Option(help: "Log level.")
    var logLevel: Logger.Level = .info

    func validate() throws {
        guard speed >= 0 else { throw ValidationError("--speed must be 0 or more") }
        guard dryRun || config != nil else { throw ValidationError("publishing needs --config (or use --dry-run)") }
        if let gateway, GatewayID(rawValue: gateway) == nil {
            throw ValidationError("--gateway \(gateway): expected 1-64 characters of A-Z a-z 0-9 . _ : -")
        }
    }

    func run() async throws {
        if dryRun {
            let configuration = try config.map { path throws -> AgentConfiguration in
                do { return try AgentConfiguration.load(from: path) } catch {
                    printError("\(error)")
                    throw ExitCode(78)
                }
            }
            let id = gateway.flatMap(GatewayID.init(rawValue:)) ?? configuration?.gateway ?? "replay"
            do {
                let (counters, malformed) = try ReplayTool.dryRun(
                    capturePath: capture, regions: configuration?.regions ?? [], gateway: id, speed: speed
                ) { print($0) }
                FileHandle.standardError.write(
                    Data(
                        ("replay: \(counters.reports) reports, \(counters.sightings) sightings, "
                            + "\(counters.notBeacons) not beacons, \(counters.outsideRegions) outside regions, "
                            + "\(malformed) malformed events\n").utf8))
            } catch {
                printError("\(error)")
                throw ExitCode(66)
            }
            return
        }
        try await runAgent(
            config: config ?? "", logLevel: logLevel,
            source: .capture(path: capture, speed: speed, keepTimes: keepTimes),
            stopWhenDrained: .milliseconds(Int(drainTimeout * 1000)))
    }
}

extension Logger.Level: @retroactive ExpressibleByArgument {}
extension DecodeTool.Format: ExpressibleByArgument {}

struct Decode: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Decode advertisements or HCI advertising report events given as hex; prints JSON lines.",
        discussion: """
            HEX arguments have no separators; without arguments, one input per line is read from standard input.
            Exit status 0, or 65 when any input was malformed. Output fields: docs/agent.md.
            """)

    @Option(help: "auto (HCI when starting 04 3E or 3E), ad (advertising data) or hci (an HCI event).")
    var format: DecodeTool.Format = .auto

    @Argument(help: "Hex inputs.")
    var hex: [String] = []

    func run() throws {
        var inputs = hex
        if inputs.isEmpty {
            while let line = readLine() { inputs.append(line) }
        }
        let (lines, malformed) = DecodeTool.run(inputs, format: format)
        for line in lines { print(line) }
        if malformed { throw ExitCode(65) }
    }
}

/// Writes `error: MESSAGE` to standard error: standard output carries only what a command produces.
func printError(_ message: String) {
    FileHandle.standardError.write(Data(("error: " + message + "\n").utf8))
}
