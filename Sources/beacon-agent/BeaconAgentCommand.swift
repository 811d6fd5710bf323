import ArgumentParser
import BeaconAgent
import BeaconConfig
import BeaconModel
import Logging
import ServiceLifecycle

@main
struct BeaconAgentCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "beacon-agent",
        abstract: "BeaconTracker gateway agent: scans BLE beacons and publishes sightings to MQTT.",
        version: BeaconTrackerVersion.current,
        subcommands: [Run.self, Decode.self],
        defaultSubcommand: Run.self
    )

    struct Run: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Connect to the broker and keep this gateway's status and sightings flowing.")

        @Option(help: "Path of agent.yaml.")
        var config = "/etc/beacontracker/agent.yaml"

        @Option(help: "Log level: trace, debug, info, notice, warning, error, critical.")
        var logLevel: Logger.Level = .info

        func run() async throws {
            LoggingSystem.bootstrap { label in
                var handler = StreamLogHandler.standardError(label: label)
                handler.logLevel = logLevel
                return handler
            }
            let logger = Logger(label: "beacontracker.agent")
            let agent: Agent
            do {
                agent = try buildAgent(
                    configuration: try AgentConfiguration.load(from: config), configFile: config, logger: logger)
            } catch {
                print("error: \(error)")
                throw ExitCode(78)
            }
            let group = ServiceGroup(
                services: [agent], gracefulShutdownSignals: [.sigterm, .sigint], cancellationSignals: [],
                logger: logger)
            try await group.run()
        }
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
