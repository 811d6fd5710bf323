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
    /// Ingest counts since this hub became active (in the periodic status; absent in the last-will).
    public var ingest: Ingest?

    /// What the active hub has taken in, for operators: a growing `rejected` count names the problem.
    public struct Ingest: Sendable, Hashable, Codable {
        /// Sighting batches processed (not counting duplicates and rejected ones).
        public var batches = 0
        /// Sightings handed to the zone engine, from batches and foreign gateways.
        public var sightings = 0
        /// Batches received again (resends after a lost acknowledgement).
        public var duplicates = 0
        /// Sightings whose scan time was re-based (unsynchronised gateway clocks).
        public var rebased = 0
        /// Sequences given up after `live.gapTimeoutSeconds` (the agent no longer had them).
        public var skippedSequences = 0
        /// Sightings from ESPresense / OpenMQTTGateway nodes.
        public var foreign = 0
        /// Sightings of the gateways' own beacons (issue 22): gateway-to-gateway links, kept apart from the tags.
        public var gatewayBeacons: Int?
        /// Messages refused, by reason: `malformed`, `too-large`, `unsupported-version`, `gateway-mismatch`,
        /// `future-dated`, `unknown-gateway`, `store-backlog`.
        public var rejected: [String: Int] = [:]
        /// Events published, by type.
        public var events: [String: Int] = [:]
        /// The history database's side, when the hub has one (`store:` in hub.yaml).
        public var store: Store?
        /// Seconds from a batch's newest sighting to the hub, shared by all gateways (the least of a 5 s window): the
        /// engine's decisions wait by as much beyond the first second, up to `live.maxLagSeconds`.
        public var lagSeconds: Double?

        public init() {}
    }

    /// Commits of the hub's database.
    public struct Store: Sendable, Hashable, Codable {
        public var commits = 0
        /// Commits that failed (disk full, I/O error) and were retried.
        public var failures = 0
        /// Batches taken in and not yet committed (nor acknowledged).
        public var backlogBatches = 0
        /// Hub clock of the last successful commit.
        public var lastCommit: Double?

        public init() {}
    }

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
