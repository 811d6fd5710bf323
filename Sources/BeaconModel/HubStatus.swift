/// Retained status of the hub: the payload of `hub/status`, and its last-will.
public struct HubStatus: Sendable, Hashable, Codable {
    /// Whether this hub is ingesting, waiting as standby, or gone.
    public enum State: String, Sendable, Hashable, Codable {
        case online, standby, offline
    }

    public var version: Int
    public var hub: HubID
    public var state: State
    public var t: Double?
    public var hubVersion: String?
    public var reason: String?

    public init(
        hub: HubID, state: State, t: Double? = nil, hubVersion: String? = nil, reason: String? = nil
    ) {
        self.version = ContractVersion.current
        self.hub = hub
        self.state = state
        self.t = t
        self.hubVersion = hubVersion
        self.reason = reason
    }

    /// The last-will a hub leaves with the broker when it connects.
    public static func lastWill(hub: HubID) -> HubStatus {
        HubStatus(hub: hub, state: .offline, reason: "connection lost")
    }
}
