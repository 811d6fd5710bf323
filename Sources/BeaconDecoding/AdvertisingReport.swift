/// One advertising report from an HCI LE (Extended) Advertising Report event.
public struct AdvertisingReport: Sendable, Hashable {
    /// Legacy: 0 ADV_IND, 1 ADV_DIRECT_IND, 2 ADV_SCAN_IND, 3 ADV_NONCONN_IND, 4 SCAN_RSP. Extended: the bit field.
    public var eventType: UInt16
    /// From an LE Extended Advertising Report (subevent 0x0D).
    public var extended: Bool
    /// 0 public, 1 random, 2 public identity, 3 random identity, 0xFF anonymous.
    public var addressType: UInt8
    /// In display order (most significant byte first).
    public var address: [UInt8]
    /// dBm; nil when the controller reports 127 ("not available").
    public var rssi: Int?
    /// Extended reports' TX power, dBm; nil when not available.
    public var txPower: Int?
    public var data: [UInt8]

    public init(
        eventType: UInt16, extended: Bool, addressType: UInt8, address: [UInt8], rssi: Int?, txPower: Int?,
        data: [UInt8]
    ) {
        self.eventType = eventType
        self.extended = extended
        self.addressType = addressType
        self.address = address
        self.rssi = rssi
        self.txPower = txPower
        self.data = data
    }

    /// `AA:BB:CC:DD:EE:FF`.
    public var addressString: String {
        address.map { byte in
            let hex = String(byte, radix: 16, uppercase: true)
            return hex.count == 1 ? "0" + hex : hex
        }.joined(separator: ":")
    }

    /// Public (including public identity) or random.
    public var isPublicAddress: Bool { addressType == 0x00 || addressType == 0x02 }
}

/// Parses HCI events (without the H4 packet type byte) into advertising reports.
public enum HCIEventParser {
    static let leMetaEvent: UInt8 = 0x3E
    static let advertisingReport: UInt8 = 0x02
    static let extendedAdvertisingReport: UInt8 = 0x0D

    /// The reports in an LE (Extended) Advertising Report event; nil for any other event (to be ignored).
    /// Throws when the event's lengths disagree.
    public static func advertisingReports(inEvent event: [UInt8]) throws(DecodeError) -> [AdvertisingReport]? {
        guard event.count >= 2 else { throw DecodeError("HCI event of \(event.count) bytes has no header") }
        guard event[0] == leMetaEvent else { return nil }
        let declared = Int(event[1])
        guard declared == event.count - 2 else {
            throw DecodeError("HCI event declares \(declared) parameter bytes but carries \(event.count - 2)")
        }
        guard event.count >= 4 else { throw DecodeError("LE meta event without subevent and report count") }
        switch event[2] {
        case advertisingReport:
            return try legacyReports(ByteReader(event, offset: 3))
        case extendedAdvertisingReport:
            return try extendedReports(ByteReader(event, offset: 3))
        default:
            return nil
        }
    }

    private static func legacyReports(_ reader: ByteReader) throws(DecodeError) -> [AdvertisingReport] {
        var reader = reader
        guard let count = reader.u8(), count >= 1 else { throw DecodeError("advertising report event with 0 reports") }
        var reports: [AdvertisingReport] = []
        for index in 0..<Int(count) {
            guard let eventType = reader.u8(), let addressType = reader.u8(), let address = reader.take(6),
                let length = reader.u8()
            else { throw DecodeError("advertising report \(index + 1) of \(count) is truncated in its header") }
            guard let data = reader.take(Int(length)), let rssi = reader.i8() else {
                throw DecodeError(
                    "advertising report \(index + 1) declares \(length) data bytes but the event ends first")
            }
            reports.append(
                AdvertisingReport(
                    eventType: UInt16(eventType), extended: false, addressType: addressType,
                    address: address.reversed(), rssi: rssi == 127 ? nil : Int(rssi), txPower: nil, data: data))
        }
        guard reader.isAtEnd else {
            throw DecodeError("advertising report event has \(reader.remaining) bytes after its \(count) reports")
        }
        return reports
    }

    private static func extendedReports(_ reader: ByteReader) throws(DecodeError) -> [AdvertisingReport] {
        var reader = reader
        guard let count = reader.u8(), count >= 1 else {
            throw DecodeError("extended advertising report event with 0 reports")
        }
        var reports: [AdvertisingReport] = []
        for index in 0..<Int(count) {
            // Event type 2, address type 1, address 6, primary PHY 1, secondary PHY 1, SID 1, TX power 1, RSSI 1,
            // periodic interval 2, direct address type 1, direct address 6, data length 1.
            guard let eventType = reader.u16le(), let addressType = reader.u8(), let address = reader.take(6),
                reader.take(3) != nil, let txPower = reader.i8(), let rssi = reader.i8(), reader.take(9) != nil,
                let length = reader.u8()
            else {
                throw DecodeError("extended advertising report \(index + 1) of \(count) is truncated in its header")
            }
            guard let data = reader.take(Int(length)) else {
                throw DecodeError(
                    "extended advertising report \(index + 1) declares \(length) data bytes but the event ends first")
            }
            reports.append(
                AdvertisingReport(
                    eventType: eventType, extended: true, addressType: addressType, address: address.reversed(),
                    rssi: rssi == 127 ? nil : Int(rssi), txPower: txPower == 127 ? nil : Int(txPower), data: data))
        }
        guard reader.isAtEnd else {
            throw DecodeError(
                "extended advertising report event has \(reader.remaining) bytes after its \(count) reports")
        }
        return reports
    }
}
