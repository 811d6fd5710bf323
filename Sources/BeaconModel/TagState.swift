/// Retained state of one tag: the payload of `tags/<tag>/state`.
public struct TagState: Sendable, Hashable, Codable {
    /// Where the tag is, as far as the hub knows.
    public enum State: String, Sendable, Hashable, Codable, CaseIterable {
        /// In `zone`.
        case inside
        /// Not in any zone (exited, or never seen).
        case outside
        /// Last heard only by gateways that are now offline: not an exit.
        case unknown
    }

    /// CoreLocation's ranging classes.
    public enum Proximity: String, Sendable, Hashable, Codable {
        case immediate, near, far, unknown
    }

    /// What one gateway currently hears of the tag.
    public struct GatewayReading: Sendable, Hashable, Codable {
        public var gateway: GatewayID
        /// Smoothed RSSI, dBm.
        public var rssi: Int
        /// Estimated distance, metres.
        public var distance: Double?
        public var proximity: Proximity
        public var lastSeen: Double

        public init(gateway: GatewayID, rssi: Int, distance: Double?, proximity: Proximity, lastSeen: Double) {
            self.gateway = gateway
            self.rssi = rssi
            self.distance = distance
            self.proximity = proximity
            self.lastSeen = lastSeen
        }
    }

    /// Where on the floor plan the tag is estimated to be (`method: position`).
    public struct Position: Sendable, Hashable, Codable {
        /// The venue file's coordinates, metres.
        public var x: Double
        public var y: Double
        /// Metres around (`x`, `y`) that hold the estimate's spread.
        public var radius: Double

        public init(x: Double, y: Double, radius: Double) {
            self.x = x
            self.y = y
            self.radius = radius
        }
    }

    public var version: Int
    public var tag: TagID
    public var beacon: String
    public var state: State
    public var zone: ZoneID?
    public var since: Double
    public var confidence: Double
    public var lastSeen: Double?
    public var gateways: [GatewayReading]
    /// The estimated position, while `inside` or `unknown` under `method: position`; absent otherwise.
    public var position: Position?

    public init(
        tag: TagID, beacon: String, state: State, zone: ZoneID?, since: Double, confidence: Double,
        lastSeen: Double?, gateways: [GatewayReading], position: Position? = nil
    ) {
        self.version = ContractVersion.current
        self.tag = tag
        self.beacon = beacon
        self.state = state
        self.zone = zone
        self.since = since
        self.confidence = confidence
        self.lastSeen = lastSeen
        self.gateways = gateways
        self.position = position
    }

    private enum CodingKeys: String, CodingKey {
        case version, tag, beacon, state, zone, since, confidence, lastSeen, gateways, position
    }

    /// Writes `zone` as an explicit `null` while `outside`: the contract lists it on every state (docs/mqtt.md).
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(version, forKey: .version)
        try container.encode(tag, forKey: .tag)
        try container.encode(beacon, forKey: .beacon)
        try container.encode(state, forKey: .state)
        try container.encode(zone, forKey: .zone)
        try container.encode(since, forKey: .since)
        try container.encode(confidence, forKey: .confidence)
        try container.encodeIfPresent(lastSeen, forKey: .lastSeen)
        try container.encode(gateways, forKey: .gateways)
        try container.encodeIfPresent(position, forKey: .position)
    }
}

/// Retained occupancy of one zone: the payload of `zones/<zone>/occupancy`.
public struct ZoneOccupancy: Sendable, Hashable, Codable {
    public var version: Int
    public var zone: ZoneID
    public var count: Int
    public var tags: [TagID]
    public var t: Double
    /// Tags whose state is `unknown` with this zone as their last known one (their gateways are offline); not
    /// counted in `count`. Absent when none.
    public var unknown: [TagID]?

    public init(zone: ZoneID, tags: [TagID], t: Double, unknown: [TagID]? = nil) {
        self.version = ContractVersion.current
        self.zone = zone
        self.count = tags.count
        self.tags = tags
        self.t = t
        self.unknown = unknown
    }
}
