import Foundation

/// Encodes and decodes the contract's JSON payloads and line formats, checking `version` and size on the way in.
public enum ContractCoding {
    /// Largest payload a consumer accepts (docs/mqtt.md, "Common rules").
    public static let maximumPayloadBytes = 256 * 1024

    /// Compact JSON with sorted keys, so that equal values give equal bytes.
    public static func encode(_ value: some Encodable) throws -> [UInt8] {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return Array(try encoder.encode(value))
    }

    /// One JSON line (no trailing newline).
    public static func encodeLine(_ value: some Encodable) throws -> String {
        String(decoding: try encode(value), as: UTF8.self)
    }

    /// Decodes a payload, refusing oversized ones and versions newer than this build reads.
    public static func decode<T: Decodable>(_ type: T.Type, from bytes: some Collection<UInt8>) throws(ContractError)
        -> T
    {
        guard bytes.count <= maximumPayloadBytes else {
            throw ContractError(
                .tooLarge,
                "payload of \(bytes.count) bytes exceeds the \(maximumPayloadBytes)-byte limit: send smaller batches")
        }
        // The hub's hot path: sighting batches through a hand-written reader, which returns what the code below would
        // or nil; on nil Foundation decodes the payload, and words what is wrong with it.
        if T.self == SightingBatch.self, let batch = SightingBatch.decodeFast(bytes), let value = batch as? T {
            return value
        }
        let data = Data(bytes)
        // The usual case in one parse: a payload of a version this build reads. Anything else is parsed again below
        // to say exactly what is wrong.
        if let payload = try? JSONDecoder().decode(Versioned<T>.self, from: data),
            payload.version <= ContractVersion.current, payload.version >= 1
        {
            return payload.value
        }
        let header: VersionHeader
        do {
            header = try JSONDecoder().decode(VersionHeader.self, from: data)
        } catch {
            throw ContractError(.malformed, "not a JSON object with an integer \"version\": \(describe(error))")
        }
        guard header.version <= ContractVersion.current, header.version >= 1 else {
            throw ContractError(
                .unsupportedVersion,
                "payload version \(header.version) is not supported (this build reads 1...\(ContractVersion.current)): "
                    + "upgrade this program")
        }
        do {
            return try JSONDecoder().decode(T.self, from: data)
        } catch {
            throw ContractError(.malformed, "invalid \(T.self): \(describe(error))")
        }
    }

    /// Decodes a line-format record (sighting or event line); lines carry no `version` unless they are events.
    public static func decodeLine<T: Decodable>(_ type: T.Type, from line: String) throws(ContractError) -> T {
        do {
            return try JSONDecoder().decode(T.self, from: Data(line.utf8))
        } catch {
            throw ContractError(.malformed, "invalid \(T.self) line: \(describe(error))")
        }
    }

    /// A short, human-readable account of a decoding error: the key path and what was wrong.
    public static func describe(_ error: any Error) -> String {
        guard let decoding = error as? DecodingError else { return "\(error)" }
        func path(_ context: DecodingError.Context) -> String {
            let joined = context.codingPath.map { $0.intValue.map { "[\($0)]" } ?? $0.stringValue }
                .joined(separator: ".")
            return joined.isEmpty ? "top level" : "\"\(joined)\""
        }
        switch decoding {
        case .keyNotFound(let key, let context):
            let parent = context.codingPath.isEmpty ? "" : " in \(path(context))"
            return "missing field \"\(key.stringValue)\"\(parent)"
        case .typeMismatch(let type, let context):
            return "\(path(context)): expected \(type) (\(context.debugDescription))"
        case .valueNotFound(let type, let context):
            return "\(path(context)): expected \(type) but found null"
        case .dataCorrupted(let context):
            return "\(path(context)): \(context.debugDescription)"
        @unknown default:
            return "\(decoding)"
        }
    }

    private struct VersionHeader: Decodable {
        var version: Int
    }

    /// The version and the payload, decoded from the same object in one pass.
    private struct Versioned<T: Decodable>: Decodable {
        var version: Int
        var value: T

        init(from decoder: any Decoder) throws {
            version = try decoder.container(keyedBy: Key.self).decode(Int.self, forKey: .version)
            value = try T(from: decoder)
        }

        private enum Key: String, CodingKey { case version }
    }
}

/// Why a payload or line was refused.
public struct ContractError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The reason class, used as a counter label.
    public enum Code: String, Sendable, Hashable {
        case malformed, tooLarge = "too-large", unsupportedVersion = "unsupported-version"
    }

    public let code: Code
    public let message: String

    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    public var description: String { message }
}
