/// Writes btsnoop captures (H4, datalink 1002) — for tests, demos and the simulator's recordings.
public struct BTSnoopWriter: Sendable {
    public private(set) var bytes: [UInt8]

    public init() {
        bytes = Array("btsnoop\0".utf8) + [0, 0, 0, 1] + [0, 0, 0x03, 0xEA]
    }

    /// Appends a received HCI event (without the H4 type byte) captured at `timestamp` (unix seconds).
    public mutating func appendEvent(_ event: [UInt8], at timestamp: Double) {
        let payload = [0x04] + event
        let microseconds = Int64((timestamp * 1_000_000).rounded()) + BTSnoopCapture.epochOffset
        append(UInt32(payload.count))
        append(UInt32(payload.count))
        append(UInt32(0b11))  // received, command/event
        append(UInt32(0))
        for shift in stride(from: 56, through: 0, by: -8) {
            bytes.append(UInt8(truncatingIfNeeded: microseconds >> shift))
        }
        bytes += payload
    }

    private mutating func append(_ value: UInt32) {
        for shift in stride(from: 24, through: 0, by: -8) { bytes.append(UInt8(truncatingIfNeeded: value >> shift)) }
    }

    /// An LE Advertising Report event with one report.
    public static func advertisingReportEvent(
        address: [UInt8], random: Bool = false, eventType: UInt8 = 0x03, rssi: Int8, data: [UInt8]
    ) -> [UInt8] {
        let parameters: [UInt8] =
            [0x02, 0x01, eventType, random ? 1 : 0] + address.reversed() + [UInt8(data.count)] + data
            + [UInt8(bitPattern: rssi)]
        return [0x3E, UInt8(parameters.count)] + parameters
    }
}
