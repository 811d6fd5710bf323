/// A btsnoop capture file: Android's H4 format (datalink 1002) or the Linux monitor format written by `btmon -w`
/// (datalink 2001). Parsed from bytes; reading the file is the caller's business.
public struct BTSnoopCapture: Sendable {
    /// The capture's link type.
    public enum Datalink: UInt32, Sendable {
        /// HCI UART (H4): each record starts with the packet type (0x04 = event).
        case h4 = 1002
        /// Linux monitor: the record's flags carry the adapter index and an opcode (3 = event).
        case monitor = 2001
    }

    /// One record.
    public struct Record: Sendable, Hashable {
        /// Unix seconds.
        public var timestamp: Double
        public var flags: UInt32
        public var payload: [UInt8]
    }

    /// An HCI event with its capture time.
    public struct TimedEvent: Sendable, Hashable {
        /// Unix seconds.
        public var timestamp: Double
        /// The event without an H4 type byte: event code, parameter length, parameters.
        public var event: [UInt8]
    }

    public let datalink: Datalink
    public let records: [Record]
    /// Set when the file ends inside a record (a capture cut short): the complete records are kept.
    public let truncatedTail: Bool

    /// Microseconds from 0001-01-01 to 1970-01-01: btsnoop's timestamp epoch.
    static let epochOffset: Int64 = 0x00dc_ddb3_0f2f_8000

    public init(bytes: [UInt8]) throws(DecodeError) {
        let datalink = try Self.header(Array(bytes.prefix(16)))
        var records: [Record] = []
        var offset = 16
        var truncated = false
        while offset < bytes.count {
            guard offset + 24 <= bytes.count else {
                truncated = true
                break
            }
            let (included, flags, microseconds) = Self.recordHeader(bytes, at: offset)
            guard offset + 24 + included <= bytes.count else {
                truncated = true
                break
            }
            records.append(
                Record(
                    timestamp: Self.seconds(microseconds), flags: flags,
                    payload: Array(bytes[(offset + 24)..<(offset + 24 + included)])))
            offset += 24 + included
        }
        self.datalink = datalink
        self.records = records
        self.truncatedTail = truncated
    }

    /// Every HCI event of the capture, in order; commands, ACL data and monitor bookkeeping are skipped.
    public func hciEvents() -> [TimedEvent] {
        records.compactMap { record in
            Self.event(payload: record.payload[...], flags: record.flags, datalink: datalink).map {
                TimedEvent(timestamp: record.timestamp, event: $0)
            }
        }
    }

    /// The datalink of a capture from its first 16 bytes ("btsnoop\0", version 1, datalink).
    static func header(_ bytes: [UInt8]) throws(DecodeError) -> Datalink {
        guard bytes.count >= 16, Array(bytes[0..<8]) == Array("btsnoop\0".utf8) else {
            throw DecodeError("not a btsnoop capture: the file does not start with \"btsnoop\"")
        }
        let version: UInt32 = bytes[8..<12].bigEndian()
        guard version == 1 else { throw DecodeError("btsnoop version \(version) is not supported (only 1)") }
        let rawDatalink: UInt32 = bytes[12..<16].bigEndian()
        guard let datalink = Datalink(rawValue: rawDatalink) else {
            throw DecodeError("btsnoop datalink \(rawDatalink) is not supported (1002 H4 or 2001 monitor)")
        }
        return datalink
    }

    /// A record's 24-byte header at `offset` (checked by the caller): included length, flags, timestamp.
    static func recordHeader(_ bytes: [UInt8], at offset: Int) -> (included: Int, flags: UInt32, microseconds: Int64) {
        (
            Int(bytes[(offset + 4)..<(offset + 8)].bigEndian(UInt32.self)),
            bytes[(offset + 8)..<(offset + 12)].bigEndian(),
            Int64(bitPattern: bytes[(offset + 16)..<(offset + 24)].bigEndian(UInt64.self))
        )
    }

    /// A record's HCI event without the H4 type byte, or nil for any other record.
    static func event(payload: ArraySlice<UInt8>, flags: UInt32, datalink: Datalink) -> [UInt8]? {
        switch datalink {
        case .h4: payload.first == 0x04 ? Array(payload.dropFirst()) : nil
        case .monitor: flags & 0xFFFF == 3 ? Array(payload) : nil
        }
    }

    /// Unix seconds of a record's timestamp (microseconds since 0001-01-01).
    static func seconds(_ microseconds: Int64) -> Double { Double(microseconds &- epochOffset) / 1_000_000 }
}
