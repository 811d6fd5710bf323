/// The MQTT topic tree of docs/mqtt.md: `<root>/<site>/...`.
///
/// Every program builds its topics here so that the contract is spelled once.
public struct Topics: Sendable, Hashable {
    /// First level(s) of every topic, `beacontracker` by default. May contain `/` but no wildcards.
    public let root: String
    /// The site's id.
    public let site: SiteID

    public init(root: String = "beacontracker", site: SiteID) {
        self.root = root
        self.site = site
    }

    private var base: String { "\(root)/\(site.rawValue)" }

    /// Sighting batches of one gateway (agent → hub, QoS 1).
    public func sightings(_ gateway: GatewayID) -> String { "\(base)/gateways/\(gateway.rawValue)/sightings" }
    /// Retained status of one gateway, also its last-will topic.
    public func gatewayStatus(_ gateway: GatewayID) -> String { "\(base)/gateways/\(gateway.rawValue)/status" }
    /// Retained acknowledgement for one gateway (hub → agent).
    public func acknowledgement(_ gateway: GatewayID) -> String { "\(base)/gateways/\(gateway.rawValue)/ack" }
    /// Retained state of one tag.
    public func tagState(_ tag: TagID) -> String { "\(base)/tags/\(tag.rawValue)/state" }
    /// Retained occupancy of one zone.
    public func zoneOccupancy(_ zone: ZoneID) -> String { "\(base)/zones/\(zone.rawValue)/occupancy" }
    /// Events of one type.
    public func events(_ type: ZoneEventType) -> String { "\(base)/events/\(type.rawValue)" }
    /// Retained status of the hub, also its last-will topic.
    public var hubStatus: String { "\(base)/hub/status" }
    /// Reserved for the standby lock: the active hub's retained claim.
    public var hubActive: String { "\(base)/hub/active" }

    /// Filter matching every gateway's sighting batches.
    public var allSightings: String { "\(base)/gateways/+/sightings" }
    /// Filter matching every gateway's status.
    public var allGatewayStatus: String { "\(base)/gateways/+/status" }
    /// Filter matching every event.
    public var allEvents: String { "\(base)/events/#" }

    /// The gateway id in a topic under `gateways/`, or `nil` when the topic is not one of this site's gateway topics.
    public func gateway(inTopic topic: String) -> GatewayID? {
        let prefix = "\(base)/gateways/"
        guard topic.hasPrefix(prefix) else { return nil }
        let rest = topic.dropFirst(prefix.count)
        guard let slash = rest.firstIndex(of: "/") else { return nil }
        return GatewayID(rawValue: String(rest[..<slash]))
    }
}
