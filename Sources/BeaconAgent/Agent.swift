import BeaconConfig
import BeaconMQTT
import BeaconModel
import Foundation
import Logging
import ServiceLifecycle

/// The gateway agent as a service: keeps its MQTT connection and its retained status (online, with an offline
/// last-will) current, republishing it every heartbeat and after every reconnect.
///
/// Scanning, decoding and the outbox join this service in the agent issue.
public final class Agent: Service, Sendable {
    public let configuration: AgentConfiguration
    public let topics: Topics
    /// Made anew at each start; names this run's batches in the contract.
    public let boot: String
    let client: MQTTClient
    let logger: Logger

    init(configuration: AgentConfiguration, client: MQTTClient, boot: String, logger: Logger) {
        self.configuration = configuration
        self.topics = configuration.mqtt.topics(site: configuration.site)
        self.client = client
        self.boot = boot
        self.logger = logger
    }

    public func run() async throws {
        let events = client.connectionEvents()
        client.start()
        await withTaskGroup(of: Void.self) { group in
            group.addTask { [self] in
                // Republish status whenever a connection comes up: the broker may have lost the retained copy.
                for await event in events {
                    if case .connected = event { await publishStatus(.online) }
                }
            }
            group.addTask { [self] in
                while !Task.isCancelled {
                    try? await Task.sleep(for: .seconds(configuration.heartbeatSeconds))
                    if client.isConnected { await publishStatus(.online) }
                }
            }
            try? await gracefulShutdown()
            if client.isConnected { await publishStatus(.offline, reason: "shutdown") }
            // Ends the event stream the first task waits on.
            await client.shutdown()
            group.cancelAll()
        }
        logger.info("agent stopped", metadata: ["gateway": "\(configuration.gateway)"])
    }

    func publishStatus(_ state: GatewayStatus.State, reason: String? = nil) async {
        let status = GatewayStatus(
            gateway: configuration.gateway, state: state, boot: boot, t: Date().timeIntervalSince1970,
            agentVersion: BeaconTrackerVersion.current, clockSynced: nil,
            heartbeatSeconds: configuration.heartbeatSeconds, reason: reason)
        do {
            let payload = try ContractCoding.encode(status)
            // Bounded: a status is stale by the next heartbeat, and the final one must not hold up shutdown.
            try await client.publish(
                payload, to: topics.gatewayStatus(configuration.gateway), retain: true, timeout: .seconds(5))
        } catch {
            logger.warning("cannot publish gateway status", metadata: ["error": "\(error)"])
        }
    }
}

/// Builds the agent from its configuration: the MQTT client with the gateway's last-will, and the service.
public func buildAgent(
    configuration: AgentConfiguration, configFile: String, logger: Logger = Logger(label: "beacontracker.agent")
) throws -> Agent {
    let boot = UUID().uuidString.lowercased()
    let topics = configuration.mqtt.topics(site: configuration.site)
    let will = MQTTConfiguration.Will(
        topic: topics.gatewayStatus(configuration.gateway),
        payload: try ContractCoding.encode(GatewayStatus.lastWill(gateway: configuration.gateway, boot: boot)),
        qos: .atLeastOnce, retain: true)
    let mqtt = try configuration.mqtt.clientConfiguration(
        defaultClientID: "agent-\(configuration.gateway)", cleanSession: true, will: will, configFile: configFile)
    let client = try MQTTClient(configuration: mqtt, logger: logger)
    return Agent(configuration: configuration, client: client, boot: boot, logger: logger)
}
