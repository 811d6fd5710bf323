import BeaconConfig
import BeaconMQTT
import BeaconModel
import Foundation
import Logging
import ServiceLifecycle
import Synchronization

/// The hub as a service: keeps its retained status (with an offline last-will) and follows every gateway's status
/// under the site, validating each payload against the contract.
///
/// Ingest, inference and persistence join this service in the hub issues.
public final class Hub: Service, Sendable {
    public let configuration: HubConfiguration
    public let topics: Topics
    let client: MQTTClient
    let logger: Logger
    let gateways = Mutex<[GatewayID: GatewayStatus]>([:])
    let rejectedPayloads = Mutex<[String: Int]>([:])

    init(configuration: HubConfiguration, client: MQTTClient, logger: Logger) {
        self.configuration = configuration
        self.topics = configuration.mqtt.topics(site: configuration.site)
        self.client = client
        self.logger = logger
    }

    /// The latest status of each gateway heard from.
    public var gatewayStatuses: [GatewayID: GatewayStatus] { gateways.withLock { $0 } }

    /// Payloads refused, by reason.
    public var rejected: [String: Int] { rejectedPayloads.withLock { $0 } }

    public func run() async throws {
        let events = client.connectionEvents()
        client.start()
        await withTaskGroup(of: Void.self) { group in
            group.addTask { [self] in
                for await event in events {
                    if case .connected = event { await publishStatus(.online) }
                }
            }
            group.addTask { [self] in
                do {
                    // Waits for the SUBACK, through any outage; ended by the client's shutdown below.
                    for await message in try await client.subscribe(to: topics.allGatewayStatus) {
                        receiveGatewayStatus(message)
                    }
                } catch {
                    if (error as? MQTTError)?.code != .shutdown {
                        logger.error("cannot subscribe to gateway status", metadata: ["error": "\(error)"])
                    }
                }
            }
            try? await gracefulShutdown()
            if client.isConnected { await publishStatus(.offline, reason: "shutdown") }
            // Ends the subscriptions and event streams the tasks above wait on.
            await client.shutdown()
            group.cancelAll()
        }
        logger.info("hub stopped", metadata: ["hub": "\(configuration.hub)"])
    }

    func receiveGatewayStatus(_ message: MQTTMessage) {
        guard let gateway = topics.gateway(inTopic: message.topic) else { return }
        // An empty retained message clears a status; nothing to validate.
        guard !message.payload.isEmpty else { return }
        let status: GatewayStatus
        do {
            status = try ContractCoding.decode(GatewayStatus.self, from: message.payload)
        } catch {
            rejectedPayloads.withLock { $0[error.code.rawValue, default: 0] += 1 }
            logger.debug("rejected gateway status", metadata: ["topic": "\(message.topic)", "error": "\(error)"])
            return
        }
        guard status.gateway == gateway else {
            rejectedPayloads.withLock { $0["gateway-mismatch", default: 0] += 1 }
            logger.debug("gateway status names another gateway", metadata: ["topic": "\(message.topic)"])
            return
        }
        let previous = gateways.withLock { table in
            defer { table[gateway] = status }
            return table[gateway]
        }
        if previous?.state != status.state || previous?.boot != status.boot {
            logger.info(
                "gateway status",
                metadata: [
                    "gateway": "\(gateway)", "state": "\(status.state.rawValue)",
                    "reason": "\(status.reason ?? "")",
                ])
        }
    }

    func publishStatus(_ state: HubStatus.State, reason: String? = nil) async {
        let status = HubStatus(
            hub: configuration.hub, state: state, t: Date().timeIntervalSince1970,
            hubVersion: BeaconTrackerVersion.current, reason: reason)
        do {
            // Bounded: the final status must not hold up shutdown when the broker is already gone.
            try await client.publish(
                try ContractCoding.encode(status), to: topics.hubStatus, retain: true, timeout: .seconds(5))
        } catch {
            logger.warning("cannot publish hub status", metadata: ["error": "\(error)"])
        }
    }
}

/// Builds the hub from its configuration: a persistent MQTT session with the hub's last-will, and the service.
public func buildHub(
    configuration: HubConfiguration, configFile: String, logger: Logger = Logger(label: "beacontracker.hub")
) throws -> Hub {
    let topics = configuration.mqtt.topics(site: configuration.site)
    let will = MQTTConfiguration.Will(
        topic: topics.hubStatus, payload: try ContractCoding.encode(HubStatus.lastWill(hub: configuration.hub)),
        qos: .atLeastOnce, retain: true)
    let mqtt = try configuration.mqtt.clientConfiguration(
        defaultClientID: "hub-\(configuration.hub)", cleanSession: false, will: will, configFile: configFile)
    let client = try MQTTClient(configuration: mqtt, logger: logger)
    return Hub(configuration: configuration, client: client, logger: logger)
}
