import BeaconModel

/// One decoded beacon frame.
public enum BeaconFrame: Sendable, Hashable {
    case iBeacon(IBeaconFrame)
    case altBeacon(AltBeaconFrame)
    case eddystoneUID(EddystoneUIDFrame)
    case eddystoneURL(EddystoneURLFrame)
    case eddystoneTLM(EddystoneTLMFrame)
    case eddystoneEID(EddystoneEIDFrame)

    /// The contract's advertisement kind.
    public var kind: AdvertisementKind {
        switch self {
        case .iBeacon: .iBeacon
        case .altBeacon: .altBeacon
        case .eddystoneUID: .eddystoneUID
        case .eddystoneURL: .eddystoneURL
        case .eddystoneTLM: .eddystoneTLM
        case .eddystoneEID: .eddystoneEID
        }
    }

    /// The beacon id of docs/mqtt.md; nil for TLM, which carries no identity.
    public var beaconID: String? {
        switch self {
        case .iBeacon(let frame): "ibeacon:\(uuidString(frame.uuid, uppercase: false)):\(frame.major):\(frame.minor)"
        case .altBeacon(let frame): "altbeacon:\(uuidString(frame.id1, uppercase: false)):\(frame.id2):\(frame.id3)"
        case .eddystoneUID(let frame): "eddystone-uid:\(frame.namespace.hexString):\(frame.instance.hexString)"
        case .eddystoneURL(let frame): "eddystone-url:\(frame.url)"
        case .eddystoneEID(let frame): "eddystone-eid:\(frame.eid.hexString)"
        case .eddystoneTLM: nil
        }
    }

    /// Advertised power at 1 m, dBm. Eddystone advertises it at 0 m; 41 dB is the path loss of the first metre.
    public var txPowerAt1m: Int? {
        switch self {
        case .iBeacon(let frame): Int(frame.txPower)
        case .altBeacon(let frame): Int(frame.txPower)
        case .eddystoneUID(let frame): Int(frame.txPower0m) - 41
        case .eddystoneURL(let frame): Int(frame.txPower0m) - 41
        case .eddystoneEID(let frame): Int(frame.txPower0m) - 41
        case .eddystoneTLM: nil
        }
    }
}

/// Apple iBeacon: manufacturer data 0x004C, type 0x02, length 0x15.
public struct IBeaconFrame: Sendable, Hashable {
    public var uuid: [UInt8]
    public var major: UInt16
    public var minor: UInt16
    /// Measured power at 1 m, dBm.
    public var txPower: Int8
}

/// AltBeacon: manufacturer data with beacon code 0xBEAC.
public struct AltBeaconFrame: Sendable, Hashable {
    public var manufacturer: UInt16
    public var id1: [UInt8]
    public var id2: UInt16
    public var id3: UInt16
    /// Reference RSSI at 1 m, dBm.
    public var txPower: Int8
    public var reserved: UInt8
}

/// Eddystone-UID.
public struct EddystoneUIDFrame: Sendable, Hashable {
    public var namespace: [UInt8]
    public var instance: [UInt8]
    public var txPower0m: Int8
}

/// Eddystone-URL, expanded.
public struct EddystoneURLFrame: Sendable, Hashable {
    public var url: String
    public var txPower0m: Int8
}

/// Eddystone-EID.
public struct EddystoneEIDFrame: Sendable, Hashable {
    public var eid: [UInt8]
    public var txPower0m: Int8
}

/// Eddystone-TLM: version 0 decoded; version 1 (encrypted) passed on raw.
public enum EddystoneTLMFrame: Sendable, Hashable {
    case plain(
        batteryMilliVolts: UInt16, temperatureCelsius: Double?, advertisementCount: UInt32, uptimeSeconds: Double)
    case encrypted(raw: [UInt8])

    /// The contract's telemetry record.
    public var telemetry: Telemetry {
        switch self {
        case .plain(let battery, let temperature, let count, let uptime):
            Telemetry(
                version: 0, batteryMilliVolts: Int(battery), temperatureCelsius: temperature,
                advertisingCount: count, secondsSinceBoot: uptime)
        case .encrypted(let raw):
            Telemetry(version: 1, raw: raw.hexString)
        }
    }
}

/// 16 bytes as 8-4-4-4-12 hex.
public func uuidString(_ bytes: [UInt8], uppercase: Bool) -> String {
    let hex = bytes.hexString
    guard hex.count == 32 else { return hex }
    let characters = Array(hex)
    let groups = [0..<8, 8..<12, 12..<16, 16..<20, 20..<32].map { String(characters[$0]) }
    let joined = groups.joined(separator: "-")
    return uppercase ? joined.uppercased() : joined
}
