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
        subcommands: [Run.self],
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
