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
    /// The latest fit of the gateways' links, once there is one.
    public var links: Links?

    /// What the gateways' own beacons taught: docs/inference.md, "What gateway-to-gateway links tell".
    public struct Links: Sendable, Hashable, Codable {
        /// An estimate, dB (or the exponent), and its standard deviation.
        public struct Estimate: Sendable, Hashable, Codable {
            public var value: Double
            public var sigma: Double

            public init(value: Double, sigma: Double) {
                self.value = value
                self.sigma = sigma
            }
        }

        /// Scan time of the fit.
        public var t: Double
        /// Directed links used, and the RMS of what the model leaves of them, dB.
        public var linksUsed: Int
        public var residualDB: Double
        /// Per gateway, how much louder it hears than the others (summing to 0), dB.
        public var gains: [String: Estimate]
        public var pathLossExponent: Estimate
        /// Whether the engine takes the gains (`inference.linkFitSeconds` above 0).
        public var applied: Bool
        /// The gateways whose gains the hub handed the engine (known to within 3 dB), sorted; nil when not `applied`.
        public var gainsApplied: [String]?
        /// Per gateway whose venue entry says which way its antenna faces, its front-to-back ratio, dB; the gain above
        /// is then the gain straight ahead. Nil when no gateway has one.
        public var antennas: [String: Estimate]?

        public init(
            t: Double, linksUsed: Int, residualDB: Double, gains: [String: Estimate], pathLossExponent: Estimate,
            applied: Bool, gainsApplied: [String]? = nil, antennas: [String: Estimate]? = nil
        ) {
            self.t = t
            self.linksUsed = linksUsed
            self.residualDB = residualDB
            self.gains = gains
            self.pathLossExponent = pathLossExponent
            self.applied = applied
            self.gainsApplied = gainsApplied
            self.antennas = antennas
        }
    }

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
        /// Sightings of the gateways' own beacons: gateway-to-gateway links, kept apart from the tags.
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
