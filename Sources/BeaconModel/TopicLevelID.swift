/// An identifier that is used as one level of an MQTT topic (gateway, tag, zone and hub ids).
///
/// The contract (docs/mqtt.md) restricts such ids to `[A-Za-z0-9._:-]{1,64}` so that broker ACLs can name them and
/// no id can smuggle in `/`, `+` or `#`.
public protocol TopicLevelID: RawRepresentable, Hashable, Sendable, Codable, CustomStringConvertible,
    ExpressibleByStringLiteral
where RawValue == String {
    init(unchecked rawValue: String)
}

extension TopicLevelID {
    /// Checks `value` against the contract's id rule; `nil` when it breaks it.
    public init?(rawValue: String) {
        guard Self.isValid(rawValue) else { return nil }
        self.init(unchecked: rawValue)
    }

    public init(stringLiteral value: String) {
        precondition(Self.isValid(value), "invalid id literal \(value)")
        self.init(unchecked: value)
    }

    public var description: String { rawValue }

    /// True when `value` may stand as one MQTT topic level: 1 to 64 of `A-Z a-z 0-9 . _ : -`.
    public static func isValid(_ value: String) -> Bool {
        guard (1...64).contains(value.utf8.count) else { return false }
        return value.utf8.allSatisfy { byte in
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
                UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: ":"),
                UInt8(ascii: "-"):
                return true
            default:
                return false
            }
        }
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        let raw = try container.decode(String.self)
        guard Self.isValid(raw) else {
            throw DecodingError.dataCorruptedError(
                in: container,
                debugDescription: "expected an id of 1 to 64 characters from A-Z a-z 0-9 . _ : - but found \"\(raw)\""
            )
        }
        self.init(unchecked: raw)
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(rawValue)
    }
}

/// A gateway (one Raspberry Pi running beacon-agent).
public struct GatewayID: TopicLevelID {
    public let rawValue: String
    public init(unchecked rawValue: String) { self.rawValue = rawValue }
}

/// A tag: a beacon that the venue names, e.g. `visitor-017`.
public struct TagID: TopicLevelID {
    public let rawValue: String
    public init(unchecked rawValue: String) { self.rawValue = rawValue }
}

/// A zone of the venue, e.g. `hall`.
public struct ZoneID: TopicLevelID {
    public let rawValue: String
    public init(unchecked rawValue: String) { self.rawValue = rawValue }
}

/// A hub instance (two may run: active and standby).
public struct HubID: TopicLevelID {
    public let rawValue: String
    public init(unchecked rawValue: String) { self.rawValue = rawValue }
}

/// A site: one venue's topic subtree under the root.
public struct SiteID: TopicLevelID {
    public let rawValue: String
    public init(unchecked rawValue: String) { self.rawValue = rawValue }
}
