import Foundation

/// hub.yaml's `homeAssistant:` section: MQTT discovery of the hub's zones and tags by Home Assistant
/// (docs/integrations.md). Without the section nothing is announced.
public struct HomeAssistantSettings: Decodable, Sendable, Hashable {
    /// Announce zones and tags. `true` when the section is present and does not say otherwise, so that writing the
    /// section is opting in; `enabled: false` keeps the settings and turns the announcements off.
    public var enabled = false
    /// Home Assistant's discovery prefix (its MQTT integration's setting, `homeassistant` unless changed there).
    public var prefix = "homeassistant"
    /// The discovery node id: the middle level of every config topic and the device's identifier. `nil` means
    /// `beacontracker_<site>` (the site id escaped as in docs/integrations.md).
    public var nodeID: String?
    /// One sensor per tag (its zone). Turn off for venues with thousands of tags, where zone occupancy is what
    /// Home Assistant needs.
    public var tagSensors = true

    enum CodingKeys: String, CodingKey, CaseIterable {
        case enabled, prefix, nodeID, tagSensors
    }

    public init() {}

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        enabled = try container.decodeIfPresent(Bool.self, forKey: .enabled) ?? true
        prefix = try container.decodeIfPresent(String.self, forKey: .prefix) ?? prefix
        nodeID = try container.decodeIfPresent(String.self, forKey: .nodeID)
        tagSensors = try container.decodeIfPresent(Bool.self, forKey: .tagSensors) ?? true
        let levels = prefix.split(separator: "/", omittingEmptySubsequences: false)
        guard !levels.contains(where: \.isEmpty), !prefix.contains("+"), !prefix.contains("#") else {
            throw DecodingError.dataCorruptedError(
                forKey: .prefix, in: container,
                debugDescription: "expected a topic prefix without +, #, empty levels or a leading or trailing /, "
                    + "found \"\(prefix)\"")
        }
        if let nodeID, !Self.isDiscoveryID(nodeID) {
            throw DecodingError.dataCorruptedError(
                forKey: .nodeID, in: container,
                debugDescription: "expected 1 to 64 characters from A-Z a-z 0-9 _ - (Home Assistant's rule for "
                    + "discovery ids), found \"\(nodeID)\"")
        }
    }

    /// Home Assistant accepts only `[A-Za-z0-9_-]` in a discovery topic's node and object ids.
    static func isDiscoveryID(_ value: String) -> Bool {
        (1...64).contains(value.utf8.count)
            && value.utf8.allSatisfy { byte in
                switch byte {
                case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
                    UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "_"):
                    return true
                default:
                    return false
                }
            }
    }
}
