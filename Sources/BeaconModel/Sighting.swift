/// One reception of one beacon advertisement by one gateway, as carried inside a sighting batch.
public struct Sighting: Sendable, Hashable, Codable {
    /// Scan time, unix seconds.
    public var t: Double
    /// Canonical beacon id, e.g. `ibeacon:<uuid>:<major>:<minor>` (docs/mqtt.md, "Beacon identity").
    public var beacon: String
    /// Received signal strength, dBm.
    public var rssi: Int
    /// Advertised measured power at 1 m, dBm.
    public var txPower: Int?
    /// Advertisement kind.
    public var kind: AdvertisementKind?
    /// Device address, lowercase `aa:bb:cc:dd:ee:ff`.
    public var address: String?
    /// Kind-specific extras such as TLM telemetry.
    public var extras: SightingExtras?

    public init(
        t: Double, beacon: String, rssi: Int, txPower: Int? = nil, kind: AdvertisementKind? = nil,
        address: String? = nil, extras: SightingExtras? = nil
    ) {
        self.t = t
        self.beacon = beacon
        self.rssi = rssi
        self.txPower = txPower
        self.kind = kind
        self.address = address
        self.extras = extras
    }
}

/// The advertisement formats the agent decodes.
public enum AdvertisementKind: String, Sendable, Hashable, Codable, CaseIterable {
    case iBeacon = "ibeacon"
    case altBeacon = "altbeacon"
    case eddystoneUID = "eddystone-uid"
    case eddystoneURL = "eddystone-url"
    case eddystoneEID = "eddystone-eid"
    case eddystoneTLM = "eddystone-tlm"
}

/// Kind-specific data that rides along with a sighting.
public struct SightingExtras: Sendable, Hashable, Codable {
    /// Eddystone telemetry last seen from the same device.
    public var tlm: Telemetry?
    /// Expanded Eddystone-URL.
    public var url: String?

    public init(tlm: Telemetry? = nil, url: String? = nil) {
        self.tlm = tlm
        self.url = url
    }
}

/// Eddystone-TLM telemetry: version 0 decoded, version 1 (encrypted) passed on raw.
public struct Telemetry: Sendable, Hashable, Codable {
    public var version: Int
    public var batteryMilliVolts: Int?
    public var temperatureCelsius: Double?
    public var advertisingCount: UInt32?
    public var secondsSinceBoot: Double?
    /// Hex of the encrypted frame (version 1).
    public var raw: String?

    public init(
        version: Int, batteryMilliVolts: Int? = nil, temperatureCelsius: Double? = nil,
        advertisingCount: UInt32? = nil, secondsSinceBoot: Double? = nil, raw: String? = nil
    ) {
        self.version = version
        self.batteryMilliVolts = batteryMilliVolts
        self.temperatureCelsius = temperatureCelsius
        self.advertisingCount = advertisingCount
        self.secondsSinceBoot = secondsSinceBoot
        self.raw = raw
    }
}
