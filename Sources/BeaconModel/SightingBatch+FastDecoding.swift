/// A hand-written reader for the payload the hub decodes most, a sighting batch: Foundation's `JSONDecoder` spent a
/// quarter of the hub's CPU on it at 60,000 sightings/s.
///
/// The reader either returns exactly what `ContractCoding.decode(SightingBatch.self, from:)` returns, or nil, and then
/// the caller takes the Foundation path, which also words the error. So it is stricter than Foundation wherever
/// following Foundation would cost risk for payloads no agent sends: it refuses duplicate keys (Foundation keeps the
/// first), trailing commas and integers written as `-70.0` or `7e1` (Foundation accepts both), and it validates the
/// strings, escapes and numbers of members it skips (Foundation looks at them only when decoding them).
extension SightingBatch {
    /// The batch in `bytes`, or nil when they are not a plainly valid batch of a version this build reads.
    public static func decodeFast(_ bytes: some Collection<UInt8>) -> SightingBatch? {
        guard bytes.count <= ContractCoding.maximumPayloadBytes else { return nil }
        if let decoded = bytes.withContiguousStorageIfAvailable(decodeFast(contiguous:)) { return decoded }
        return Array(bytes).withUnsafeBufferPointer(decodeFast(contiguous:))
    }

    private static func decodeFast(contiguous bytes: UnsafeBufferPointer<UInt8>) -> SightingBatch? {
        var reader = SightingBatchReader(bytes)
        do {
            let batch = try reader.readBatch()
            try reader.expectEnd()
            return batch
        } catch {
            return nil
        }
    }
}

extension SightingLine {
    /// The sighting line in `text`, exactly as `ContractCoding.decodeLine(SightingLine.self, from:)` reads it, or nil
    /// when it is not a plainly valid line (then the caller takes the Foundation path, which also words the error).
    /// Replays and scores read millions of lines: Foundation spent a fifth of a replay's time on them.
    public static func decodeFast(_ text: String) -> SightingLine? {
        var text = text
        return text.withUTF8 { bytes in
            var reader = SightingBatchReader(bytes)
            do {
                let line = try reader.readLine()
                try reader.expectEnd()
                return line
            } catch {
                return nil
            }
        }
    }

    /// The sighting line in `text`: the fast path, or Foundation's where it refuses (which throws what Foundation
    /// finds wrong).
    public static func decode(line text: String) throws(ContractError) -> SightingLine {
        if let line = decodeFast(text) { return line }
        return try ContractCoding.decodeLine(SightingLine.self, from: text)
    }
}

/// A UTF-8 JSON reader over contiguous bytes that knows the batch's shape; every method throws `Refusal` at the first
/// thing it does not plainly accept.
private struct SightingBatchReader {
    /// Carries nothing: on a refusal Foundation decodes the payload again and says what is wrong.
    struct Refusal: Error {}

    /// Deeper values are refused: unknown members are the only place where nesting goes beyond four levels, and
    /// Foundation's own limit is 512.
    private static let maximumSkippedDepth = 32

    private let bytes: UnsafeBufferPointer<UInt8>
    private var index = 0

    init(_ bytes: UnsafeBufferPointer<UInt8>) {
        self.bytes = bytes
    }

    // MARK: The payload's objects

    mutating func readBatch() throws(Refusal) -> SightingBatch {
        var seen: UInt32 = 0
        var version: Int?
        var gateway: GatewayID?
        var boot: String?
        var seq: UInt64?
        var sent: Double?
        var clockSynced: Bool?
        var sightings: [Sighting]?
        var more = try beginObject()
        while more {
            switch try Self.batchFields.field(named: readName(), seen: &seen) {
            case .version?: version = try readInt()
            case .gateway?: gateway = GatewayID(rawValue: try readString())
            case .boot?: boot = try readString()
            case .seq?: seq = try readUInt64()
            case .sent?: sent = try readDouble()
            case .clockSynced?: clockSynced = try readBool()
            case .sightings?: sightings = try readSightings()
            case nil: try skipValue(depth: 1)
            }
            more = try nextMember()
        }
        guard let version, (1...ContractVersion.current).contains(version), let gateway, let boot, let seq, let sent,
            let clockSynced, let sightings
        else { throw Refusal() }
        var batch = SightingBatch(
            gateway: gateway, boot: boot, seq: seq, sent: sent, clockSynced: clockSynced, sightings: sightings)
        batch.version = version
        return batch
    }

    private mutating func readSightings() throws(Refusal) -> [Sighting] {
        var sightings: [Sighting] = []
        // An agent's sightings take some 150 bytes each; growing the array from empty would copy it seven times.
        sightings.reserveCapacity(min((bytes.count - index) / 160, 512))
        var more = try beginArray()
        while more {
            sightings.append(try readSighting())
            more = try nextElement()
        }
        return sightings
    }

    private mutating func readSighting() throws(Refusal) -> Sighting {
        var seen: UInt32 = 0
        var t: Double?
        var beacon: String?
        var rssi: Int?
        var txPower: Int?
        var kind: AdvertisementKind?
        var address: String?
        var extras: SightingExtras?
        var more = try beginObject()
        while more {
            switch try Self.sightingFields.field(named: readName(), seen: &seen) {
            case .t?: t = try readDouble()
            case .beacon?: beacon = try readString()
            case .rssi?: rssi = try readInt()
            case .txPower?: txPower = try readNull() ? nil : readInt()
            case .kind?:
                if try !readNull() {
                    guard let known = AdvertisementKind(rawValue: try readString()) else { throw Refusal() }
                    kind = known
                }
            case .address?: address = try readNull() ? nil : readString()
            case .extras?: extras = try readNull() ? nil : readExtras()
            case nil: try skipValue(depth: 3)
            }
            more = try nextMember()
        }
        guard let t, let beacon, let rssi else { throw Refusal() }
        return Sighting(
            t: t, beacon: beacon, rssi: rssi, txPower: txPower, kind: kind, address: address, extras: extras)
    }

    /// A sighting line: a sighting's members and its gateway (no `address`: a line has none, and an unknown member
    /// is skipped, as Foundation skips it).
    mutating func readLine() throws(Refusal) -> SightingLine {
        var seen: UInt32 = 0
        var t: Double?
        var gateway: GatewayID?
        var beacon: String?
        var rssi: Int?
        var txPower: Int?
        var kind: AdvertisementKind?
        var extras: SightingExtras?
        var more = try beginObject()
        while more {
            switch try Self.lineFields.field(named: readName(), seen: &seen) {
            case .t?: t = try readDouble()
            case .gateway?:
                guard let id = GatewayID(rawValue: try readString()) else { throw Refusal() }
                gateway = id
            case .beacon?: beacon = try readString()
            case .rssi?: rssi = try readInt()
            case .txPower?: txPower = try readNull() ? nil : readInt()
            case .kind?:
                if try !readNull() {
                    guard let known = AdvertisementKind(rawValue: try readString()) else { throw Refusal() }
                    kind = known
                }
            case .extras?: extras = try readNull() ? nil : readExtras()
            case nil: try skipValue(depth: 1)
            }
            more = try nextMember()
        }
        guard let t, let gateway, let beacon, let rssi else { throw Refusal() }
        return SightingLine(
            t: t, gateway: gateway, beacon: beacon, rssi: rssi, txPower: txPower, kind: kind, extras: extras)
    }

    private mutating func readExtras() throws(Refusal) -> SightingExtras {
        var seen: UInt32 = 0
        var extras = SightingExtras()
        var more = try beginObject()
        while more {
            switch try Self.extrasFields.field(named: readName(), seen: &seen) {
            case .tlm?: extras.tlm = try readNull() ? nil : readTelemetry()
            case .url?: extras.url = try readNull() ? nil : readString()
            case nil: try skipValue(depth: 4)
            }
            more = try nextMember()
        }
        return extras
    }

    private mutating func readTelemetry() throws(Refusal) -> Telemetry {
        var seen: UInt32 = 0
        var version: Int?
        var telemetry = Telemetry(version: 0)
        var more = try beginObject()
        while more {
            switch try Self.telemetryFields.field(named: readName(), seen: &seen) {
            case .version?: version = try readInt()
            case .batteryMilliVolts?: telemetry.batteryMilliVolts = try readNull() ? nil : readInt()
            case .temperatureCelsius?: telemetry.temperatureCelsius = try readNull() ? nil : readDouble()
            case .advertisingCount?:
                if try !readNull() {
                    guard let count = UInt32(exactly: try readUInt64()) else { throw Refusal() }
                    telemetry.advertisingCount = count
                }
            case .secondsSinceBoot?: telemetry.secondsSinceBoot = try readNull() ? nil : readDouble()
            case .raw?: telemetry.raw = try readNull() ? nil : readString()
            case nil: try skipValue(depth: 5)
            }
            more = try nextMember()
        }
        guard let version else { throw Refusal() }
        telemetry.version = version
        return telemetry
    }

    // Member names as the synthesised `Codable` conformances spell them.
    private enum BatchField: String, CaseIterable {
        case version, gateway, boot, seq, sent, clockSynced, sightings
    }
    private enum SightingField: String, CaseIterable {
        case t, beacon, rssi, txPower, kind, address, extras
    }
    private enum LineField: String, CaseIterable {
        case t, gateway, beacon, rssi, txPower, kind, extras
    }
    private enum ExtrasField: String, CaseIterable {
        case tlm, url
    }
    private enum TelemetryField: String, CaseIterable {
        case version, batteryMilliVolts, temperatureCelsius, advertisingCount, secondsSinceBoot, raw
    }
    private static let batchFields = FieldNames<BatchField>()
    private static let sightingFields = FieldNames<SightingField>()
    private static let lineFields = FieldNames<LineField>()
    private static let extrasFields = FieldNames<ExtrasField>()
    private static let telemetryFields = FieldNames<TelemetryField>()

    // MARK: Structure

    /// Skips whitespace and returns the next byte without consuming it.
    @inline(__always)
    private mutating func peek() throws(Refusal) -> UInt8 {
        while index < bytes.count {
            switch bytes[index] {
            case .space, .tab, .lineFeed, .carriageReturn: index += 1
            case let byte: return byte
            }
        }
        throw Refusal()
    }

    @inline(__always)
    private mutating func expect(_ byte: UInt8) throws(Refusal) {
        guard try peek() == byte else { throw Refusal() }
        index += 1
    }

    /// Only whitespace may follow the batch.
    mutating func expectEnd() throws(Refusal) {
        while index < bytes.count {
            switch bytes[index] {
            case .space, .tab, .lineFeed, .carriageReturn: index += 1
            default: throw Refusal()
            }
        }
    }

    /// Consumes `{`; true when a member follows, false for `{}`.
    private mutating func beginObject() throws(Refusal) -> Bool {
        try expect(.openBrace)
        guard try peek() == .closeBrace else { return true }
        index += 1
        return false
    }

    /// After a member's value: true when a comma announces another member, false at the closing brace. A trailing
    /// comma is refused by the key that must follow it.
    private mutating func nextMember() throws(Refusal) -> Bool {
        switch try peek() {
        case .comma:
            index += 1
            return true
        case .closeBrace:
            index += 1
            return false
        default: throw Refusal()
        }
    }

    /// Consumes `[`; true when an element follows, false for `[]`.
    private mutating func beginArray() throws(Refusal) -> Bool {
        try expect(.openBracket)
        guard try peek() == .closeBracket else { return true }
        index += 1
        return false
    }

    /// After an element: true when a comma announces another element, false at the closing bracket.
    private mutating func nextElement() throws(Refusal) -> Bool {
        switch try peek() {
        case .comma:
            index += 1
            return true
        case .closeBracket:
            index += 1
            return false
        default: throw Refusal()
        }
    }

    /// A member's name and its colon. Names are plain ASCII and compared as bytes; escaped or non-ASCII names are
    /// decoded and compared as Strings, as Foundation's keyed container does.
    private mutating func readName() throws(Refusal) -> MemberName {
        guard try peek() == .quote else { throw Refusal() }
        let start = index + 1
        var end = start
        while end < bytes.count, bytes[end] != .quote, bytes[end] != .backslash, (0x20..<0x80).contains(bytes[end]) {
            end += 1
        }
        let name: MemberName
        if end < bytes.count, bytes[end] == .quote {
            name = .plain(UnsafeBufferPointer(rebasing: bytes[start..<end]))
            index = end + 1
        } else {
            name = .decoded(try readString())
        }
        try expect(.colon)
        return name
    }

    /// Skips a value of a member the payload does not define, checking it as strictly as the rest.
    private mutating func skipValue(depth: Int) throws(Refusal) {
        guard depth < Self.maximumSkippedDepth else { throw Refusal() }
        switch try peek() {
        case .quote:
            _ = try readString()
        case .openBrace:
            var more = try beginObject()
            while more {
                _ = try readName()
                try skipValue(depth: depth + 1)
                more = try nextMember()
            }
        case .openBracket:
            var more = try beginArray()
            while more {
                try skipValue(depth: depth + 1)
                more = try nextElement()
            }
        case UInt8(ascii: "t"), UInt8(ascii: "f"):
            _ = try readBool()
        case UInt8(ascii: "n"):
            _ = try readNull()
        default:
            _ = try readNumber()
        }
    }

    // MARK: Literals

    private mutating func readBool() throws(Refusal) -> Bool {
        switch try peek() {
        case UInt8(ascii: "t"):
            try expectLiteral("true")
            return true
        case UInt8(ascii: "f"):
            try expectLiteral("false")
            return false
        default:
            throw Refusal()
        }
    }

    /// Consumes `null` if it comes next: an optional member given as null is absent, as for `decodeIfPresent`.
    private mutating func readNull() throws(Refusal) -> Bool {
        guard try peek() == UInt8(ascii: "n") else { return false }
        try expectLiteral("null")
        return true
    }

    private mutating func expectLiteral(_ literal: StaticString) throws(Refusal) {
        let count = literal.utf8CodeUnitCount
        guard bytes.count - index >= count else { throw Refusal() }
        for offset in 0..<count where bytes[index + offset] != literal.utf8Start[offset] {
            throw Refusal()
        }
        index += count
    }

    // MARK: Strings

    private mutating func readString() throws(Refusal) -> String {
        guard try peek() == .quote else { throw Refusal() }
        let start = index + 1
        var end = start
        var ascii = true
        while end < bytes.count {
            let byte = bytes[end]
            if byte == .quote || byte == .backslash || byte < 0x20 { break }
            if byte >= 0x80 { ascii = false }
            end += 1
        }
        guard end < bytes.count, bytes[end] == .quote else { return try readEscapedString(from: start, plainUpTo: end) }
        index = end + 1
        let text = UnsafeBufferPointer(rebasing: bytes[start..<end])
        if ascii { return String(decoding: text, as: UTF8.self) }
        guard let string = String(validating: text, as: UTF8.self) else { throw Refusal() }
        return string
    }

    /// The slow path of `readString`, from the first escape: builds the string's UTF-8 and validates it whole (an
    /// escape always yields complete scalars, so a sequence broken around one stays invalid).
    private mutating func readEscapedString(from start: Int, plainUpTo plainEnd: Int) throws(Refusal) -> String {
        var utf8: [UInt8] = []
        utf8.reserveCapacity(plainEnd - start + 16)
        utf8.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[start..<plainEnd]))
        var position = plainEnd
        while position < bytes.count {
            let byte = bytes[position]
            position += 1
            switch byte {
            case .quote:
                index = position
                guard let string = String(validating: utf8, as: UTF8.self) else { throw Refusal() }
                return string
            case .backslash:
                guard position < bytes.count else { throw Refusal() }
                let escaped = bytes[position]
                position += 1
                switch escaped {
                case .quote, .backslash, UInt8(ascii: "/"): utf8.append(escaped)
                case UInt8(ascii: "b"): utf8.append(0x08)
                case UInt8(ascii: "f"): utf8.append(0x0C)
                case UInt8(ascii: "n"): utf8.append(.lineFeed)
                case UInt8(ascii: "r"): utf8.append(.carriageReturn)
                case UInt8(ascii: "t"): utf8.append(.tab)
                case UInt8(ascii: "u"):
                    var value = try hexQuad(at: position)
                    position += 4
                    if (0xD800..<0xDC00).contains(value) {
                        // A high surrogate must be followed by an escaped low one; together they are one scalar.
                        guard position + 1 < bytes.count, bytes[position] == .backslash,
                            bytes[position + 1] == UInt8(ascii: "u")
                        else { throw Refusal() }
                        let low = try hexQuad(at: position + 2)
                        position += 6
                        guard (0xDC00..<0xE000).contains(low) else { throw Refusal() }
                        value = 0x10000 + ((value - 0xD800) << 10) + (low - 0xDC00)
                    }
                    guard let scalar = Unicode.Scalar(value) else { throw Refusal() }
                    UTF8.encode(scalar) { utf8.append($0) }
                default:
                    throw Refusal()
                }
            case 0..<0x20:
                throw Refusal()
            default:
                utf8.append(byte)
            }
        }
        throw Refusal()
    }

    /// The four hex digits of a `\u` escape at `position`.
    private func hexQuad(at position: Int) throws(Refusal) -> UInt32 {
        guard bytes.count - position >= 4 else { throw Refusal() }
        var value: UInt32 = 0
        for byte in bytes[position..<position + 4] {
            let digit: UInt8
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = byte - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = byte - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = byte - UInt8(ascii: "A") + 10
            default: throw Refusal()
            }
            value = value << 4 | UInt32(digit)
        }
        return value
    }

    // MARK: Numbers

    /// The text of a number, checked against JSON's grammar `-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?`, and
    /// whether it is written as an integer (no fraction, no exponent).
    private mutating func readNumber() throws(Refusal) -> (text: Range<Int>, isInteger: Bool) {
        _ = try peek()
        let start = index
        var position = index
        func digits() throws(Refusal) {
            let first = position
            while position < bytes.count, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[position]) {
                position += 1
            }
            guard position > first else { throw Refusal() }
        }
        if position < bytes.count, bytes[position] == UInt8(ascii: "-") { position += 1 }
        guard position < bytes.count else { throw Refusal() }
        switch bytes[position] {
        case UInt8(ascii: "0"): position += 1
        case UInt8(ascii: "1")...UInt8(ascii: "9"): try digits()
        default: throw Refusal()
        }
        var isInteger = true
        if position < bytes.count, bytes[position] == UInt8(ascii: ".") {
            isInteger = false
            position += 1
            try digits()
        }
        if position < bytes.count, bytes[position] | 0x20 == UInt8(ascii: "e") {
            isInteger = false
            position += 1
            if position < bytes.count, bytes[position] == UInt8(ascii: "+") || bytes[position] == UInt8(ascii: "-") {
                position += 1
            }
            try digits()
        }
        index = position
        return (start..<position, isInteger)
    }

    /// An integer written as one: its sign and magnitude, refused beyond `UInt64`.
    private mutating func readIntegerParts() throws(Refusal) -> (isNegative: Bool, magnitude: UInt64) {
        let (text, isInteger) = try readNumber()
        guard isInteger else { throw Refusal() }
        let isNegative = bytes[text.lowerBound] == UInt8(ascii: "-")
        var magnitude: UInt64 = 0
        for byte in bytes[(isNegative ? text.lowerBound + 1 : text.lowerBound)..<text.upperBound] {
            let (times10, overflow) = magnitude.multipliedReportingOverflow(by: 10)
            let (sum, carry) = times10.addingReportingOverflow(UInt64(byte - UInt8(ascii: "0")))
            guard !overflow, !carry else { throw Refusal() }
            magnitude = sum
        }
        return (isNegative, magnitude)
    }

    private mutating func readInt() throws(Refusal) -> Int {
        let (isNegative, magnitude) = try readIntegerParts()
        if isNegative {
            guard magnitude <= Int.min.magnitude else { throw Refusal() }
            return Int(truncatingIfNeeded: 0 &- magnitude)
        }
        guard magnitude <= Int.max.magnitude else { throw Refusal() }
        return Int(magnitude)
    }

    /// An unsigned integer; a minus sign is refused even on zero (Foundation reads `-0` as 0; no agent writes it).
    private mutating func readUInt64() throws(Refusal) -> UInt64 {
        let (isNegative, magnitude) = try readIntegerParts()
        guard !isNegative else { throw Refusal() }
        return magnitude
    }

    /// A double parsed as Foundation parses it, by `strtod` on the number's text, so that the bits agree. Like
    /// Foundation, refuses what overflows to infinity or underflows to zero.
    private mutating func readDouble() throws(Refusal) -> Double {
        let (range, _) = try readNumber()
        let text = UnsafeBufferPointer(rebasing: bytes[range])
        guard let value = Double(String(decoding: text, as: UTF8.self)), value.isFinite else { throw Refusal() }
        if value == 0 {
            for byte in text {
                if byte | 0x20 == UInt8(ascii: "e") { break }
                if (UInt8(ascii: "1")...UInt8(ascii: "9")).contains(byte) { throw Refusal() }
            }
        }
        return value
    }
}

/// The member names of one object of the payload; a name's position is its bit in a reader's `seen` mask.
private struct FieldNames<Field: RawRepresentable & CaseIterable & Sendable>: Sendable where Field.RawValue == String {
    let fields: [Field]
    /// The names' UTF-8, one after another, and where each lies: one flat array to scan per key.
    private let utf8: [UInt8]
    private let ranges: [Range<Int>]

    init() {
        fields = Array(Field.allCases)
        precondition(fields.count <= 32, "a seen mask has 32 bits")
        var utf8: [UInt8] = []
        ranges = fields.map { field in
            let start = utf8.count
            utf8 += field.rawValue.utf8
            return start..<utf8.count
        }
        self.utf8 = utf8
    }

    /// The field `name` names, or nil for a name the payload does not define; a field named twice is refused.
    func field(named name: MemberName, seen: inout UInt32) throws(SightingBatchReader.Refusal) -> Field? {
        let found: Int?
        switch name {
        case .plain(let utf8): found = position(of: utf8)
        // Compared as a String, as Foundation compares keys.
        case .decoded(let string): found = fields.firstIndex { $0.rawValue == string }
        }
        guard let found else { return nil }
        let bit: UInt32 = 1 << found
        guard seen & bit == 0 else { throw SightingBatchReader.Refusal() }
        seen |= bit
        return fields[found]
    }

    private func position(of name: UnsafeBufferPointer<UInt8>) -> Int? {
        for (position, range) in ranges.enumerated() where range.count == name.count {
            var offset = 0
            while offset < name.count, utf8[range.lowerBound + offset] == name[offset] { offset += 1 }
            if offset == name.count { return position }
        }
        return nil
    }
}

/// A member's name as read: its bytes when plain ASCII, else decoded.
private enum MemberName {
    case plain(UnsafeBufferPointer<UInt8>)
    case decoded(String)
}

extension UInt8 {
    fileprivate static let space = UInt8(ascii: " ")
    fileprivate static let tab = UInt8(ascii: "\t")
    fileprivate static let lineFeed = UInt8(ascii: "\n")
    fileprivate static let carriageReturn = UInt8(ascii: "\r")
    fileprivate static let quote = UInt8(ascii: "\"")
    fileprivate static let backslash = UInt8(ascii: "\\")
    fileprivate static let colon = UInt8(ascii: ":")
    fileprivate static let comma = UInt8(ascii: ",")
    fileprivate static let openBrace = UInt8(ascii: "{")
    fileprivate static let closeBrace = UInt8(ascii: "}")
    fileprivate static let openBracket = UInt8(ascii: "[")
    fileprivate static let closeBracket = UInt8(ascii: "]")
}
