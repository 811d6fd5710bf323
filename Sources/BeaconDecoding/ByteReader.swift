/// A bounds-checked cursor over bytes: every read either succeeds or returns nil, never traps.
struct ByteReader {
    let bytes: [UInt8]
    private(set) var offset: Int

    init(_ bytes: [UInt8], offset: Int = 0) {
        self.bytes = bytes
        self.offset = offset
    }

    var remaining: Int { bytes.count - offset }
    var isAtEnd: Bool { offset >= bytes.count }

    mutating func u8() -> UInt8? {
        guard remaining >= 1 else { return nil }
        defer { offset += 1 }
        return bytes[offset]
    }

    mutating func i8() -> Int8? { u8().map { Int8(bitPattern: $0) } }

    mutating func u16le() -> UInt16? {
        guard let low = u8(), let high = u8() else { return nil }
        return UInt16(high) << 8 | UInt16(low)
    }

    mutating func take(_ count: Int) -> [UInt8]? {
        guard count >= 0, remaining >= count else { return nil }
        defer { offset += count }
        return Array(bytes[offset..<offset + count])
    }
}

extension Collection<UInt8> {
    /// Reads big-endian unsigned integers of up to 8 bytes.
    func bigEndian<T: FixedWidthInteger>(_ type: T.Type = T.self) -> T {
        reduce(T.zero) { $0 << 8 | T($1) }
    }

    /// Lower-case hex without separators.
    public var hexString: String {
        let digits = Array("0123456789abcdef".utf8)
        var out: [UInt8] = []
        out.reserveCapacity(count * 2)
        for byte in self {
            out.append(digits[Int(byte >> 4)])
            out.append(digits[Int(byte & 0x0f)])
        }
        return String(decoding: out, as: UTF8.self)
    }
}

/// Parses hex text (no separators; whitespace ignored; optional 0x prefix) into bytes.
public func bytes(fromHex text: some StringProtocol) -> [UInt8]? {
    var body = Substring(text).filter { !$0.isWhitespace }
    if body.hasPrefix("0x") || body.hasPrefix("0X") { body.removeFirst(2) }
    guard body.count % 2 == 0 else { return nil }
    var result: [UInt8] = []
    result.reserveCapacity(body.count / 2)
    var index = body.startIndex
    while index < body.endIndex {
        let next = body.index(index, offsetBy: 2)
        guard let byte = UInt8(body[index..<next], radix: 16) else { return nil }
        result.append(byte)
        index = next
    }
    return result
}
