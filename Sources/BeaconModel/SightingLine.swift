/// One **sighting line** (docs/mqtt.md): the JSON Lines record shared by `beacon-agent replay --dry-run`,
/// `beacon-sim run --out` and `beacon-hub replay`.
public struct SightingLine: Sendable, Hashable, Codable {
    public var t: Double
    public var gateway: GatewayID
    public var beacon: String
    public var rssi: Int
    public var txPower: Int?
    public var kind: AdvertisementKind?
    /// As a sighting's `extras`: an Eddystone-TLM frame's telemetry (`kind` `eddystone-tlm`), an expanded URL.
    public var extras: SightingExtras?

    public init(
        t: Double, gateway: GatewayID, beacon: String, rssi: Int, txPower: Int? = nil, kind: AdvertisementKind? = nil,
        extras: SightingExtras? = nil
    ) {
        self.t = t
        self.gateway = gateway
        self.beacon = beacon
        self.rssi = rssi
        self.txPower = txPower
        self.kind = kind
        self.extras = extras
    }

    /// The line for one sighting of a batch.
    public init(_ sighting: Sighting, gateway: GatewayID) {
        self.init(
            t: sighting.t, gateway: gateway, beacon: sighting.beacon, rssi: sighting.rssi,
            txPower: sighting.txPower, kind: sighting.kind, extras: sighting.extras)
    }
}
