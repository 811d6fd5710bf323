/// The standby lock: the active hub's retained claim on `hub/active` (docs/mqtt.md, "Hub claim"). The connection
/// that published it registers an empty retained message on the same topic as its last-will, so the broker clears
/// the claim when the active hub dies; a standby hub then claims the site.
public struct HubClaim: Sendable, Hashable, Codable {
    public var version: Int
    /// The hub that holds the site: the one that ingests.
    public var hub: HubID
    /// When it claimed (its clock).
    public var t: Double

    public init(hub: HubID, t: Double) {
        self.version = ContractVersion.current
        self.hub = hub
        self.t = t
    }
}
