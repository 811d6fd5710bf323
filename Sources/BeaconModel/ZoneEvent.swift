/// The kinds of event the hub emits (docs/mqtt.md, "Event").
public enum ZoneEventType: String, Sendable, Hashable, Codable, CaseIterable {
    case enter, exit, stayed, unknown, suspect, alert
}

/// An event: the MQTT payload of `events/<type>` and, identically, one **event line**.
///
/// `t` is when the hub decided, on the sightings' clock, so that decision latency is measured honestly.
public struct ZoneEvent: Sendable, Hashable, Codable {
    public var version: Int
    public var type: ZoneEventType
    /// `nil` for alerts about a gateway.
    public var tag: TagID?
    public var zone: ZoneID?
    public var previousZone: ZoneID?
    public var t: Double
    public var confidence: Double
    public var reason: String
    public var dwellSeconds: Double?
    public var region: String?
    /// Alerts: a stable code such as `gateway-offline`, `clock-skew`, `disk-full`.
    public var code: String?
    /// Alerts about one gateway.
    public var gateway: GatewayID?
    /// `gateway-moved` alerts: where the gateway's links place it now, when they do.
    public var estimatedPosition: EstimatedPosition?

    public init(
        type: ZoneEventType, tag: TagID?, zone: ZoneID?, previousZone: ZoneID? = nil, t: Double,
        confidence: Double, reason: String, dwellSeconds: Double? = nil, region: String? = nil,
        code: String? = nil, gateway: GatewayID? = nil, estimatedPosition: EstimatedPosition? = nil
    ) {
        self.version = ContractVersion.current
        self.type = type
        self.tag = tag
        self.zone = zone
        self.previousZone = previousZone
        self.t = t
        self.confidence = confidence
        self.reason = reason
        self.dwellSeconds = dwellSeconds
        self.region = region
        self.code = code
        self.gateway = gateway
        self.estimatedPosition = estimatedPosition
    }

    private enum CodingKeys: String, CodingKey {
        case version, type, tag, zone, previousZone, t, confidence, reason, dwellSeconds, region, code, gateway
        case estimatedPosition
    }

    /// Writes `tag`, `zone` and `previousZone` as explicit `null`s: the contract lists them on every event.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(version, forKey: .version)
        try container.encode(type, forKey: .type)
        try container.encode(tag, forKey: .tag)
        try container.encode(zone, forKey: .zone)
        try container.encode(previousZone, forKey: .previousZone)
        try container.encode(t, forKey: .t)
        try container.encode(confidence, forKey: .confidence)
        try container.encode(reason, forKey: .reason)
        try container.encodeIfPresent(dwellSeconds, forKey: .dwellSeconds)
        try container.encodeIfPresent(region, forKey: .region)
        try container.encodeIfPresent(code, forKey: .code)
        try container.encodeIfPresent(gateway, forKey: .gateway)
        try container.encodeIfPresent(estimatedPosition, forKey: .estimatedPosition)
    }
}
