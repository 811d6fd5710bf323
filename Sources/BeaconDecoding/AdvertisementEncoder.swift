import BeaconModel

/// Builds advertising data for a beacon id (docs/mqtt.md) — the inverse of `BeaconDecoder`, for the simulator and
/// tests that play real advertisements through the agent's path.
public enum AdvertisementEncoder {
    /// Flags plus the beacon frame; nil for ids it cannot express (URL, EID, TLM, malformed).
    /// `txPower` is the measured power at 1 m; Eddystone advertises it at 0 m (41 dB more).
    public static func advertisingData(beacon id: String, txPower: Int) -> [UInt8]? {
        let parts = id.split(separator: ":", omittingEmptySubsequences: false).map(String.init)
        let flags: [UInt8] = [0x02, 0x01, 0x06]
        let power = UInt8(bitPattern: Int8(clamping: txPower))
        switch parts.first {
        case "ibeacon" where parts.count == 4:
            guard let uuid = bytes(fromHex: parts[1].replacingOccurrences(of: "-", with: "")), uuid.count == 16,
                let major = UInt16(parts[2]), let minor = UInt16(parts[3])
            else { return nil }
            return flags + [0x1A, 0xFF, 0x4C, 0x00, 0x02, 0x15] + uuid + bigEndian(major) + bigEndian(minor) + [power]
        case "altbeacon" where parts.count == 4:
            guard let id1 = bytes(fromHex: parts[1].replacingOccurrences(of: "-", with: "")), id1.count == 16,
                let id2 = UInt16(parts[2]), let id3 = UInt16(parts[3])
            else { return nil }
            // Radius Networks' company id, as in the AltBeacon spec's example.
            return flags + [0x1B, 0xFF, 0x18, 0x01, 0xBE, 0xAC] + id1 + bigEndian(id2) + bigEndian(id3) + [power, 0x00]
        case "eddystone-uid" where parts.count == 3:
            guard let namespace = bytes(fromHex: parts[1]), namespace.count == 10,
                let instance = bytes(fromHex: parts[2]), instance.count == 6
            else { return nil }
            let power0m = UInt8(bitPattern: Int8(clamping: txPower + 41))
            return flags + [0x03, 0x03, 0xAA, 0xFE, 0x17, 0x16, 0xAA, 0xFE, 0x00, power0m] + namespace + instance
                + [0x00, 0x00]
        default:
            return nil
        }
    }

    /// Flags plus an unencrypted Eddystone-TLM frame (version 0): battery mV, temperature in 8.8 fixed point (absent:
    /// 0x8000, "not supported"), advert count, and uptime in 0.1 s steps.
    public static func telemetryData(_ telemetry: Telemetry) -> [UInt8] {
        let flags: [UInt8] = [0x02, 0x01, 0x06]
        let milliVolts = UInt16(clamping: telemetry.batteryMilliVolts ?? 0)
        let temperature =
            telemetry.temperatureCelsius.map { UInt16(bitPattern: Int16(clamping: Int(($0 * 256).rounded()))) }
            ?? 0x8000
        let count = telemetry.advertisingCount ?? 0
        let tenths = UInt32(clamping: Int(((telemetry.secondsSinceBoot ?? 0) * 10).rounded()))
        return flags + [0x03, 0x03, 0xAA, 0xFE, 0x11, 0x16, 0xAA, 0xFE, 0x20, 0x00] + bigEndian(milliVolts)
            + bigEndian(temperature) + bigEndian(count) + bigEndian(tenths)
    }

    private static func bigEndian(_ value: UInt16) -> [UInt8] { [UInt8(value >> 8), UInt8(value & 0xFF)] }

    private static func bigEndian(_ value: UInt32) -> [UInt8] {
        [UInt8(value >> 24), UInt8(value >> 16 & 0xFF), UInt8(value >> 8 & 0xFF), UInt8(value & 0xFF)]
    }
}
