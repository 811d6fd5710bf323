import BeaconConfig
import BeaconModel

/// agent.yaml: one gateway's settings (docs/configuration.md).
public struct AgentConfiguration: Decodable, Sendable, Hashable {
    /// This gateway's id; one topic level, so `[A-Za-z0-9._:-]{1,64}`.
    public var gateway: GatewayID
    public var site: SiteID
    public var mqtt: MQTTSettings
    /// Seconds between status republications; the hub treats 3 × this of silence as offline.
    public var heartbeatSeconds: Double

    enum CodingKeys: String, CodingKey, CaseIterable {
        case gateway, site, mqtt, heartbeatSeconds
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        gateway = try container.decode(GatewayID.self, forKey: .gateway)
        site = try container.decode(SiteID.self, forKey: .site)
        mqtt = try container.decodeIfPresent(MQTTSettings.self, forKey: .mqtt) ?? MQTTSettings()
        heartbeatSeconds = try container.decodeIfPresent(Double.self, forKey: .heartbeatSeconds) ?? 30
        guard (1...3600).contains(heartbeatSeconds) else {
            throw DecodingError.dataCorruptedError(
                forKey: .heartbeatSeconds, in: container,
                debugDescription: "expected seconds in 1...3600, found \(heartbeatSeconds)")
        }
    }

    /// Reads and checks agent.yaml.
    public static func load(from path: String) throws(ConfigError) -> AgentConfiguration {
        try ConfigLoader.load(AgentConfiguration.self, from: path)
    }
}
