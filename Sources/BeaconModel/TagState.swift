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

    /// The tag's battery, from its Eddystone-TLM frames (iBeacon and AltBeacon send none).
    public struct Battery: Sendable, Hashable, Codable {
        public enum Level: String, Sendable, Hashable, Codable, CaseIterable {
            /// Below hub.yaml's `tagHealth.batteryLowMilliVolts` (and not yet back to `batteryRecoveredMilliVolts`).
            case low
            case ok
        }

        public var milliVolts: Int
        public var level: Level
        /// When the reading was taken (the sighting's time).
        public var t: Double
        /// mV per week, negative while it drains; absent until a day of hourly readings since the last new cell.
        public var trendPerWeek: Double?

        public init(milliVolts: Int, level: Level, t: Double, trendPerWeek: Double? = nil) {
            self.milliVolts = milliVolts
            self.level = level
            self.t = t
            self.trendPerWeek = trendPerWeek
        }
    }

    /// The rest of the tag's last Eddystone-TLM frame.
    public struct TagTelemetry: Sendable, Hashable, Codable {
        public var t: Double
        public var temperatureCelsius: Double?
        public var advertisingCount: UInt32?
        public var secondsSinceBoot: Double?

        public init(t: Double, temperatureCelsius: Double?, advertisingCount: UInt32?, secondsSinceBoot: Double?) {
            self.t = t
            self.temperatureCelsius = temperatureCelsius
            self.advertisingCount = advertisingCount
            self.secondsSinceBoot = secondsSinceBoot
        }
    }

    /// How many of its advertisements the gateways hear: a tag heard far less often than it sends is behind
    /// a wall, in a pocket or drawer, or its battery is sagging.
    public struct Adverts: Sendable, Hashable, Codable {
        /// Per minute, by the gateway that heard most of them, over the last whole window.
        public var seenPerMinute: Double
        /// Per minute as the tag sends them: from its TLM frames' advert count and uptime, or hub.yaml's
        /// `tagHealth.advertIntervalSeconds`; absent when neither tells.
        public var expectedPerMinute: Double?
        /// The end of the window counted.
        public var t: Double

        public init(seenPerMinute: Double, expectedPerMinute: Double?, t: Double) {
            self.seenPerMinute = seenPerMinute
            self.expectedPerMinute = expectedPerMinute
            self.t = t
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
    /// The zone the tag was in when last heard (`null` zone: heard outside every zone); absent when not known.
    public var lastSeenZone: ZoneID?
    /// The gateway that heard it loudest when last heard.
    public var lastSeenGateway: GatewayID?
    /// Its battery, once it sent a TLM frame with one.
    public var battery: Battery?
    /// Its last TLM frame's other fields.
    public var telemetry: TagTelemetry?
    /// `true` while the tag is missing (not heard for hub.yaml's `tagHealth.missingAfterSeconds`); absent otherwise.
    public var missing: Bool?
    /// Advertisements heard against sent; absent until a whole window was counted.
    public var adverts: Adverts?

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
        case lastSeenZone, lastSeenGateway, battery, telemetry, missing, adverts
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
        try container.encodeIfPresent(lastSeenZone, forKey: .lastSeenZone)
        try container.encodeIfPresent(lastSeenGateway, forKey: .lastSeenGateway)
        try container.encodeIfPresent(battery, forKey: .battery)
        try container.encodeIfPresent(telemetry, forKey: .telemetry)
        try container.encodeIfPresent(missing, forKey: .missing)
        try container.encodeIfPresent(adverts, forKey: .adverts)
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
