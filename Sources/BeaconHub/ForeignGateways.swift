import BeaconDecoding
import BeaconModel
import Foundation

/// hub.yaml's `espresense:` section: ESPresense nodes whose readings the hub takes as sightings
/// (docs/foreign-gateways.md).
public struct ESPresenseSettings: Decodable, Sendable, Hashable {
    /// The nodes' topic root (ESPresense's own default: `espresense`); readings come on `<root>/devices/<id>/<room>`.
    public var root = "espresense"
    /// ESPresense room name → gateway of the venue. A room not listed is taken as the gateway of the same id.
    public var rooms: [String: GatewayID] = [:]

    enum CodingKeys: String, CodingKey, CaseIterable { case root, rooms }

    public init() {}

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        root = try container.decodeIfPresent(String.self, forKey: .root) ?? root
        rooms = try container.decodeIfPresent([String: GatewayID].self, forKey: .rooms) ?? [:]
        try ForeignSightingDecoder.checkRoot(root, key: .root, in: container)
    }
}

/// hub.yaml's `openMQTTGateway:` section: OpenMQTTGateway / Theengs Gateway BLE gateways
/// (readings on `<prefix>/<gateway>/BTtoMQTT/<address>`).
public struct OpenMQTTGatewaySettings: Decodable, Sendable, Hashable {
    /// The topic prefix before the gateway name (OpenMQTTGateway's default: `home`).
    public var prefix = "home"
    /// Gateway name as OpenMQTTGateway publishes it → gateway of the venue. A name not listed is taken as the
    /// gateway of the same id.
    public var gateways: [String: GatewayID] = [:]

    enum CodingKeys: String, CodingKey, CaseIterable { case prefix, gateways }

    public init() {}

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        prefix = try container.decodeIfPresent(String.self, forKey: .prefix) ?? prefix
        gateways = try container.decodeIfPresent([String: GatewayID].self, forKey: .gateways) ?? [:]
        try ForeignSightingDecoder.checkRoot(prefix, key: .prefix, in: container)
    }
}

/// Turns ESPresense and OpenMQTTGateway readings into sighting lines. Pure; never traps on any input.
///
/// These payloads carry no scan time, so the scan time is the hub's receive time; they carry no boot or sequence
/// either, so there is no outbox, acknowledgement or deduplication for them.
public struct ForeignSightingDecoder: Sendable {
    public enum Outcome: Sendable, Hashable {
        case sighting(SightingLine)
        /// A valid message that is not a reading of a beacon we can name (a node's telemetry, an unreadable id).
        case ignored(reason: String)
        /// Counted under `code` (`malformed`, `too-large`, `unknown-gateway`).
        case rejected(code: String, message: String)
    }

    public let espresense: ESPresenseSettings?
    public let openMQTTGateway: OpenMQTTGatewaySettings?

    public init(espresense: ESPresenseSettings?, openMQTTGateway: OpenMQTTGatewaySettings?) {
        self.espresense = espresense
        self.openMQTTGateway = openMQTTGateway
    }

    /// The MQTT filters to subscribe to.
    public var subscriptionFilters: [String] {
        (espresense.map { ["\($0.root)/devices/+/+"] } ?? [])
            + (openMQTTGateway.map { ["\($0.prefix)/+/BTtoMQTT/+"] } ?? [])
    }

    public func decode(topic: String, payload: [UInt8], receivedAt: Double) -> Outcome {
        if let espresense, topic.hasPrefix(espresense.root + "/devices/") {
            let levels = topic.dropFirst(espresense.root.count + 1).split(
                separator: "/", omittingEmptySubsequences: false)
            guard levels.count == 3 else { return .ignored(reason: "not an ESPresense device topic") }
            let room = String(levels[2])
            return decodeESPresense(
                payload, topicID: String(levels[1]), gateway: espresense.rooms[room] ?? GatewayID(rawValue: room),
                name: room, at: receivedAt)
        }
        if let openMQTTGateway, topic.hasPrefix(openMQTTGateway.prefix + "/") {
            let levels = topic.dropFirst(openMQTTGateway.prefix.count + 1).split(
                separator: "/", omittingEmptySubsequences: false)
            guard levels.count == 3, levels[1] == "BTtoMQTT" else {
                return .ignored(reason: "not an OpenMQTTGateway BTtoMQTT topic")
            }
            let name = String(levels[0])
            return decodeOpenMQTTGateway(
                payload, gateway: openMQTTGateway.gateways[name] ?? GatewayID(rawValue: name), name: name,
                at: receivedAt)
        }
        return .ignored(reason: "not a foreign gateway topic")
    }

    // MARK: ESPresense

    func decodeESPresense(_ payload: [UInt8], topicID: String, gateway: GatewayID?, name: String, at t: Double)
        -> Outcome
    {
        let object: [String: Any]
        switch Self.object(payload) {
        case .failure(let error): return error.outcome
        case .success(let value): object = value
        }
        guard let gateway else {
            return .rejected(
                code: "unknown-gateway",
                message: "ESPresense room \"\(name)\" maps to no gateway: add it under espresense.rooms in hub.yaml")
        }
        guard let rssi = Self.rssi(object["rssi"]) else {
            return .rejected(
                code: "malformed", message: "ESPresense reading without a numeric \"rssi\" in dBm (-127…0)")
        }
        let id = (object["id"] as? String) ?? topicID
        let txPower = Self.rssi(object["rssi@1m"])
        guard let beacon = Self.espresenseBeacon(id) else { return .ignored(reason: "empty ESPresense id") }
        let kind: AdvertisementKind? = beacon.hasPrefix("ibeacon:") ? .iBeacon : nil
        return .sighting(SightingLine(t: t, gateway: gateway, beacon: beacon, rssi: rssi, txPower: txPower, kind: kind))
    }

    /// `iBeacon:<uuid>-<major>-<minor>` → our iBeacon identity; any other id → `espresense:<id>`, lowercased.
    static func espresenseBeacon(_ id: String) -> String? {
        let trimmed = id.trimmingCharacters(in: .whitespaces)
        guard !trimmed.isEmpty else { return nil }
        if trimmed.lowercased().hasPrefix("ibeacon:") {
            let rest = trimmed.dropFirst("ibeacon:".count).lowercased()
            let parts = rest.split(separator: "-", omittingEmptySubsequences: false)
            if parts.count == 7, let major = UInt16(parts[5]), let minor = UInt16(parts[6]),
                let uuid = canonicalUUID(parts[0..<5].joined())
            {
                return "ibeacon:\(uuid):\(major):\(minor)"
            }
        }
        return "espresense:\(trimmed.lowercased())"
    }

    // MARK: OpenMQTTGateway / Theengs

    func decodeOpenMQTTGateway(_ payload: [UInt8], gateway: GatewayID?, name: String, at t: Double) -> Outcome {
        let object: [String: Any]
        switch Self.object(payload) {
        case .failure(let error): return error.outcome
        case .success(let value): object = value
        }
        guard let gateway else {
            return .rejected(
                code: "unknown-gateway",
                message:
                    "OpenMQTTGateway \"\(name)\" maps to no gateway: add it under openMQTTGateway.gateways in hub.yaml"
            )
        }
        guard let rssi = Self.rssi(object["rssi"]) else {
            return .rejected(
                code: "malformed", message: "OpenMQTTGateway reading without a numeric \"rssi\" in dBm (-127…0)")
        }
        var txPower = Self.rssi(object["txpower"])
        // Raw advertisement data first: our own decoder names the beacon exactly as a Pi agent would.
        var frames: [BeaconFrame] = []
        if let hex = object["manufacturerdata"] as? String, let bytes = Self.hex(hex), !bytes.isEmpty, bytes.count < 255
        {
            frames += (try? BeaconDecoder.decode([UInt8(bytes.count + 1), 0xFF] + bytes).frames) ?? []
        }
        if let hex = object["servicedata"] as? String, let bytes = Self.hex(hex),
            let uuidText = object["servicedatauuid"] as? String,
            let uuid = Self.hex(uuidText.replacingOccurrences(of: "0x", with: "")),
            uuid.count == 2, bytes.count + 3 < 255
        {
            frames +=
                (try? BeaconDecoder.decode([UInt8(bytes.count + 3), 0x16, uuid[1], uuid[0]] + bytes).frames) ?? []
        }
        if let frame = frames.first(where: { $0.beaconID != nil }), let beacon = frame.beaconID {
            return .sighting(
                SightingLine(
                    t: t, gateway: gateway, beacon: beacon, rssi: rssi, txPower: frame.txPowerAt1m ?? txPower,
                    kind: frame.kind))
        }
        // Theengs' decoded iBeacon fields.
        if let uuidText = object["uuid"] as? String, let uuid = Self.canonicalUUID(uuidText),
            let major = (object["major"] as? NSNumber).flatMap({ UInt16(exactly: $0.doubleValue) }),
            let minor = (object["minor"] as? NSNumber).flatMap({ UInt16(exactly: $0.doubleValue) })
        {
            return .sighting(
                SightingLine(
                    t: t, gateway: gateway, beacon: "ibeacon:\(uuid):\(major):\(minor)", rssi: rssi, txPower: txPower,
                    kind: .iBeacon))
        }
        if let id = object["id"] as? String, let address = Self.address(id) {
            if txPower != nil && (object["model_id"] == nil) { txPower = nil }  // OMG's generic txpower is not at 1 m
            return .sighting(
                SightingLine(t: t, gateway: gateway, beacon: "mac:\(address)", rssi: rssi, txPower: txPower))
        }
        return .ignored(reason: "OpenMQTTGateway reading with no beacon identity or device address")
    }

    // MARK: Helpers

    static func object(_ payload: [UInt8]) -> Result<[String: Any], OutcomeError> {
        guard payload.count <= ContractCoding.maximumPayloadBytes else {
            return .failure(
                OutcomeError(
                    .rejected(code: "too-large", message: "payload of \(payload.count) bytes exceeds 256 KiB")))
        }
        guard let value = try? JSONSerialization.jsonObject(with: Data(payload)), let object = value as? [String: Any]
        else {
            return .failure(OutcomeError(.rejected(code: "malformed", message: "not a JSON object")))
        }
        return .success(object)
    }

    struct OutcomeError: Error {
        var outcome: Outcome
        init(_ outcome: Outcome) { self.outcome = outcome }
    }

    /// dBm in a plausible range (-127…0), rounded (ESPresense sends its filtered RSSI with decimals); booleans,
    /// strings and other values are refused.
    static func rssi(_ value: Any?) -> Int? {
        guard let value, !(value is Bool), let number = value as? NSNumber else { return nil }
        let double = number.doubleValue
        guard double.isFinite, (-127...0).contains(double.rounded()) else { return nil }
        return Int(double.rounded())
    }

    static func hex(_ text: String) -> [UInt8]? {
        let digits = Array(text.lowercased().utf8)
        guard digits.count % 2 == 0 else { return nil }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(digits.count / 2)
        var index = 0
        while index < digits.count {
            guard let high = nibble(digits[index]), let low = nibble(digits[index + 1]) else { return nil }
            bytes.append(high << 4 | low)
            index += 2
        }
        return bytes
    }

    static func nibble(_ c: UInt8) -> UInt8? {
        switch c {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return c - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): return c - UInt8(ascii: "a") + 10
        default: return nil
        }
    }

    /// 32 hex digits, with or without dashes → lowercase 8-4-4-4-12.
    static func canonicalUUID(_ text: String) -> String? {
        let plain = text.replacingOccurrences(of: "-", with: "").lowercased()
        guard plain.count == 32, plain.allSatisfy(\.isHexDigit) else { return nil }
        let characters = Array(plain)
        return [0..<8, 8..<12, 12..<16, 16..<20, 20..<32].map { String(characters[$0]) }.joined(separator: "-")
    }

    /// `AA:BB:CC:DD:EE:FF` or `AABBCCDDEEFF` → `aa:bb:cc:dd:ee:ff`.
    static func address(_ text: String) -> String? {
        guard let bytes = hex(text.replacingOccurrences(of: ":", with: "").replacingOccurrences(of: "-", with: "")),
            bytes.count == 6
        else { return nil }
        return bytes.map { String(format: "%02x", $0) }.joined(separator: ":")
    }

    static func checkRoot<K: CodingKey>(_ root: String, key: K, in container: KeyedDecodingContainer<K>) throws {
        guard !root.isEmpty, !root.contains("+"), !root.contains("#"), !root.hasSuffix("/") else {
            throw DecodingError.dataCorruptedError(
                forKey: key, in: container, debugDescription: "\"\(root)\" is not a topic prefix (no +, #, trailing /)")
        }
    }
}
