import BeaconConfig
import BeaconModel
import Foundation

/// hub.yaml: the central hub's settings (docs/configuration.md).
public struct HubConfiguration: Decodable, Sendable, Hashable {
    /// This hub's id (two hubs, active and standby, need different ids).
    public var hub: HubID
    public var site: SiteID
    public var mqtt: MQTTSettings
    /// The venue file (docs/venue.md): zones, doors and gateways. The hub ignores its simulator-only sections.
    public var venue: String?

    enum CodingKeys: String, CodingKey, CaseIterable {
        case hub, site, mqtt, venue
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        hub = try container.decodeIfPresent(HubID.self, forKey: .hub) ?? "hub"
        site = try container.decode(SiteID.self, forKey: .site)
        mqtt = try container.decodeIfPresent(MQTTSettings.self, forKey: .mqtt) ?? MQTTSettings()
        venue = try container.decodeIfPresent(String.self, forKey: .venue)
    }

    /// Reads and checks hub.yaml, and the venue file it names (a relative path is taken from hub.yaml's folder).
    public static func load(from path: String) throws(ConfigError) -> HubConfiguration {
        var configuration = try ConfigLoader.load(HubConfiguration.self, from: path)
        if let venue = configuration.venue {
            let resolved =
                venue.hasPrefix("/")
                ? venue : URL(fileURLWithPath: path).deletingLastPathComponent().appendingPathComponent(venue).path
            let loaded = try VenueLoader.load(from: resolved)
            guard loaded.site == configuration.site else {
                throw ConfigError(
                    .invalidValue, file: path, key: "venue",
                    "\(resolved) is the venue of site \(loaded.site), but this hub serves site \(configuration.site)")
            }
            configuration.venue = resolved
        }
        return configuration
    }
}
