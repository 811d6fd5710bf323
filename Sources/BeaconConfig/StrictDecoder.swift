/// A `Decoder` that wraps another and refuses mapping keys the decoded type does not declare.
///
/// Swift's synthesised `Decodable` silently ignores unknown keys; for configuration that turns a typo
/// (`keepalive` for `keepAlive`) into a silent default. This wrapper checks every keyed container against the raw
/// keys present and keeps wrapping nested values so the check applies at every depth.
struct StrictDecoder: Decoder {
    let base: any Decoder

    var codingPath: [any CodingKey] { base.codingPath }
    var userInfo: [CodingUserInfoKey: Any] { base.userInfo }

    func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
        let raw = try base.container(keyedBy: AnyKey.self)
        for key in raw.allKeys where Key(stringValue: key.stringValue) == nil {
            let known = knownKeys(Key.self)
            let hint = known.isEmpty ? "" : ": expected one of \(known.joined(separator: ", "))"
            throw ConfigError(
                .unknownKey, file: "", key: ConfigLoader.keyPath(codingPath + [key]), "unknown key\(hint)")
        }
        return KeyedDecodingContainer(StrictKeyedContainer<Key>(base: try base.container(keyedBy: Key.self)))
    }

    func unkeyedContainer() throws -> any UnkeyedDecodingContainer {
        StrictUnkeyedContainer(base: try base.unkeyedContainer())
    }

    func singleValueContainer() throws -> any SingleValueDecodingContainer {
        try base.singleValueContainer()
    }

    private func knownKeys<Key: CodingKey>(_ type: Key.Type) -> [String] {
        guard let all = Key.self as? any (CodingKey & CaseIterable).Type else { return [] }
        return (all.allCases as any Collection).compactMap { ($0 as? any CodingKey)?.stringValue }
    }
}

struct AnyKey: CodingKey {
    var stringValue: String
    var intValue: Int?
    init(stringValue: String) { self.stringValue = stringValue }
    init(intValue: Int) {
        self.stringValue = "\(intValue)"
        self.intValue = intValue
    }
}

private struct StrictKeyedContainer<Key: CodingKey>: KeyedDecodingContainerProtocol {
    let base: KeyedDecodingContainer<Key>

    var codingPath: [any CodingKey] { base.codingPath }
    var allKeys: [Key] { base.allKeys }
    func contains(_ key: Key) -> Bool { base.contains(key) }
    func decodeNil(forKey key: Key) throws -> Bool { try base.decodeNil(forKey: key) }

    func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T {
        guard base.contains(key) else {
            throw DecodingError.keyNotFound(
                key, DecodingError.Context(codingPath: codingPath, debugDescription: "missing"))
        }
        return try T(from: StrictDecoder(base: try base.superDecoder(forKey: key)))
    }

    func decodeIfPresent<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T? {
        guard base.contains(key), try !base.decodeNil(forKey: key) else { return nil }
        return try decode(type, forKey: key)
    }

    func nestedContainer<NestedKey: CodingKey>(
        keyedBy type: NestedKey.Type, forKey key: Key
    ) throws -> KeyedDecodingContainer<NestedKey> {
        try StrictDecoder(base: try base.superDecoder(forKey: key)).container(keyedBy: type)
    }

    func nestedUnkeyedContainer(forKey key: Key) throws -> any UnkeyedDecodingContainer {
        StrictUnkeyedContainer(base: try base.nestedUnkeyedContainer(forKey: key))
    }

    func superDecoder() throws -> any Decoder { StrictDecoder(base: try base.superDecoder()) }
    func superDecoder(forKey key: Key) throws -> any Decoder {
        StrictDecoder(base: try base.superDecoder(forKey: key))
    }
}

private struct StrictUnkeyedContainer: UnkeyedDecodingContainer {
    var base: any UnkeyedDecodingContainer

    var codingPath: [any CodingKey] { base.codingPath }
    var count: Int? { base.count }
    var isAtEnd: Bool { base.isAtEnd }
    var currentIndex: Int { base.currentIndex }

    mutating func decodeNil() throws -> Bool { try base.decodeNil() }

    mutating func decode<T: Decodable>(_ type: T.Type) throws -> T {
        try T(from: StrictDecoder(base: try base.superDecoder()))
    }

    mutating func nestedContainer<NestedKey: CodingKey>(
        keyedBy type: NestedKey.Type
    ) throws -> KeyedDecodingContainer<NestedKey> {
        try StrictDecoder(base: try base.superDecoder()).container(keyedBy: type)
    }

    mutating func nestedUnkeyedContainer() throws -> any UnkeyedDecodingContainer {
        StrictUnkeyedContainer(base: try base.nestedUnkeyedContainer())
    }

    mutating func superDecoder() throws -> any Decoder { StrictDecoder(base: try base.superDecoder()) }
}
