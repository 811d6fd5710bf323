import ArgumentParser
import BeaconConfig
import BeaconHub
import BeaconModel
import Logging
import ServiceLifecycle

@main
struct BeaconHubCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "beacon-hub",
        abstract: "BeaconTracker hub: fuses sightings from every gateway into zones, events and history.",
        version: BeaconTrackerVersion.current,
        subcommands: [Run.self],
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
            LoggingSystem.bootstrap { label in
                var handler = StreamLogHandler.standardError(label: label)
                handler.logLevel = logLevel
                return handler
            }
            let logger = Logger(label: "beacontracker.hub")
            let hub: Hub
            do {
                hub = try buildHub(
                    configuration: try HubConfiguration.load(from: config), configFile: config, logger: logger)
            } catch {
                print("error: \(error)")
                throw ExitCode(78)
            }
            let group = ServiceGroup(
                services: [hub], gracefulShutdownSignals: [.sigterm, .sigint], cancellationSignals: [],
                logger: logger)
            try await group.run()
        }
    }
}

extension Logger.Level: @retroactive ExpressibleByArgument {}
