import BeaconConfig
import BeaconModel

/// hub.yaml: the central hub's settings (docs/configuration.md).
public struct HubConfiguration: Decodable, Sendable, Hashable {
    /// This hub's id (two hubs, active and standby, need different ids).
    public var hub: HubID
    public var site: SiteID
    public var mqtt: MQTTSettings

    enum CodingKeys: String, CodingKey, CaseIterable {
        case hub, site, mqtt
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        hub = try container.decodeIfPresent(HubID.self, forKey: .hub) ?? "hub"
        site = try container.decode(SiteID.self, forKey: .site)
        mqtt = try container.decodeIfPresent(MQTTSettings.self, forKey: .mqtt) ?? MQTTSettings()
    }

    /// Reads and checks hub.yaml.
    public static func load(from path: String) throws(ConfigError) -> HubConfiguration {
        try ConfigLoader.load(HubConfiguration.self, from: path)
    }
}
