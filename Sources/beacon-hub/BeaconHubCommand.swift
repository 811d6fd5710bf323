import ArgumentParser
import BeaconConfig
import BeaconHub
import BeaconMQTT
import BeaconModel
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
        subcommands: [Run.self, Watch.self, Replay.self, Calibrate.self],
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
                print("error: \(error)")
                throw ExitCode(78)
            }
            let topics = configuration.mqtt.topics(site: configuration.site)
            do {
                try await client.connect()
            } catch {
                print("error: \(error)")
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
        var events: String

        func run() throws {
            let engine: ZoneEngine
            do {
                engine = try HubConfiguration.load(from: config).makeEngine()
            } catch {
                print("error: \(error)")
                throw ExitCode(78)
            }
            let terminal = isatty(STDERR_FILENO) == 1
            let summary: ReplayTool.Summary
            do {
                summary = try ReplayTool.run(engine: engine, inputPath: input, eventsPath: events) {
                    share, t in
                    guard terminal else { return }
                    FileHandle.standardError.write(Data(ReplayTool.progressLine(share: share, t: t).utf8))
                }
            } catch {
                print("error: \(error.localizedDescription)")
                throw ExitCode(66)
            }
            if terminal { FileHandle.standardError.write(Data("\n".utf8)) }
            print(ReplayTool.report(summary))
        }
    }

    struct Calibrate: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Compute gateway offsets and zone profiles from a calibration walk.",
            discussion: """
                INPUT is a recording (sighting lines or batch payloads) of a person standing with one tag in each \
                zone for about 30 s; --plan names the tag and when it stood where (docs/inference.md, "Calibration").
                """)

        @Option(help: "Path of hub.yaml.")
        var config: String

        @Argument(help: "The recorded walk (.jsonl or .jsonl.gz).")
        var input: String

        @Option(help: "The plan file: the calibration tag's beacon and its stops (zone, from, to).")
        var plan: String

        @Option(help: "Where to write the calibration file (YAML).")
        var out: String

        func run() throws {
            do {
                let configuration = try HubConfiguration.load(from: config)
                let result = try CalibrateTool.run(
                    configuration: configuration, inputPath: input, planPath: plan, outputPath: out)
                print(result.report)
            } catch let error as ConfigError {
                print("error: \(error)")
                throw ExitCode(78)
            } catch {
                print("error: \(error)")
                throw ExitCode(65)
            }
        }
    }
}

extension Logger.Level: @retroactive ExpressibleByArgument {}
