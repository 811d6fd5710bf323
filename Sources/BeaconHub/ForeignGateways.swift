import BeaconDecoding
import BeaconModel
import Foundation

/// hub.yaml's `espresense:` section: ESPresense nodes whose device readings the hub takes as sightings
/// (docs/foreign-gateways.md).
public struct ESPresenseSettings: Decodable, Sendable, Hashable {
    /// The nodes' topic root (ESPresense's own: `espresense`); readings come on `<root>/devices/<id>/<room>`.
    public var root: String
    /// ESPresense room name → gateway of the venue. A room not listed is taken as the gateway of the same id.
    public var rooms: [String: GatewayID]
    /// ESPresense device id → beacon id, for ids the built-in mapping does not turn into the beacon a tag names
    /// (e.g. `irk:…` → the phone's `ibeacon:…`). Matched without regard to case.
    public var ids: [String: String]
    /// Rooms whose readings are dropped without being counted (nodes outside the venue).
    public var ignore: Set<String>

    enum CodingKeys: String, CodingKey, CaseIterable { case root, rooms, ids, ignore }

    public init(
        root: String = "espresense", rooms: [String: GatewayID] = [:], ids: [String: String] = [:],
        ignore: Set<String> = []
    ) {
        self.root = root
        self.rooms = rooms
        self.ids = ids
        self.ignore = ignore
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        root = try container.decodeIfPresent(String.self, forKey: .root) ?? "espresense"
        rooms = try container.decodeIfPresent([String: GatewayID].self, forKey: .rooms) ?? [:]
        ids = try container.decodeIfPresent([String: String].self, forKey: .ids) ?? [:]
        ignore = Set(try container.decodeIfPresent([String].self, forKey: .ignore) ?? [])
        try ForeignSightingDecoder.checkTopicPrefix(root, key: .root, in: container)
        var seen: [String: String] = [:]
        for (id, beacon) in ids {
            if let other = seen.updateValue(id, forKey: id.lowercased()) {
                throw DecodingError.dataCorruptedError(
                    forKey: .ids, in: container,
                    debugDescription: "\"\(other)\" and \"\(id)\" differ only in case: ids are matched without it")
            }
            guard ForeignSightingDecoder.isUsableID(beacon) else {
                throw DecodingError.dataCorruptedError(
                    forKey: .ids, in: container,
                    debugDescription: "\"\(id)\" maps to \"\(beacon)\": expected a beacon id such as "
                        + "ibeacon:<uuid>:<major>:<minor> (no spaces, at most 200 characters)")
            }
        }
    }
}

/// hub.yaml's `openMQTTGateway:` section: OpenMQTTGateway or Theengs Gateway BLE gateways, whose readings come on
/// `<prefix>/<gateway>/BTtoMQTT/<address>` (docs/foreign-gateways.md).
public struct OpenMQTTGatewaySettings: Decodable, Sendable, Hashable {
    /// The topic prefix before the gateway name (OpenMQTTGateway's and Theengs Gateway's default: `home`).
    public var prefix: String
    /// Gateway name as it publishes → gateway of the venue. A name not listed is taken as the gateway of the same id.
    public var gateways: [String: GatewayID]
    /// Gateway names whose readings are dropped without being counted, e.g. `TheengsGateway` when it only decodes
    /// other gateways' `undecoded` messages (its republished readings no longer say which node heard them).
    public var ignore: Set<String>

    enum CodingKeys: String, CodingKey, CaseIterable { case prefix, gateways, ignore }

    public init(prefix: String = "home", gateways: [String: GatewayID] = [:], ignore: Set<String> = []) {
        self.prefix = prefix
        self.gateways = gateways
        self.ignore = ignore
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        prefix = try container.decodeIfPresent(String.self, forKey: .prefix) ?? "home"
        gateways = try container.decodeIfPresent([String: GatewayID].self, forKey: .gateways) ?? [:]
        ignore = Set(try container.decodeIfPresent([String].self, forKey: .ignore) ?? [])
        try ForeignSightingDecoder.checkTopicPrefix(prefix, key: .prefix, in: container)
    }
}

/// Turns ESPresense and OpenMQTTGateway / Theengs Gateway readings into sighting lines of our gateways. Pure and
/// stateless; never traps on any input.
///
/// These payloads carry no scan time, so a sighting's `t` is the hub's receive time (`receivedAt`); they carry no
/// boot or sequence number either, so there is no outbox, acknowledgement or deduplication for them.
public struct ForeignSightingDecoder: Sendable {
    /// What one message is.
    public enum Outcome: Sendable, Hashable {
        /// A reading of a beacon, mapped to one of our gateways.
        case sighting(SightingLine)
        /// Not a reading we can use, and nothing wrong: another topic (a node's status or telemetry), a message
        /// with no RSSI (sensor data read over a connection), a device with no identity, an ignored node.
        case ignored(reason: String)
        /// Counted under `code`: `malformed`, `too-large` or `unknown-gateway`; `message` says what to fix.
        case rejected(code: String, message: String)
    }

    public let espresense: ESPresenseSettings?
    public let openMQTTGateway: OpenMQTTGatewaySettings?
    /// `espresense.ids` keyed by lowercased ESPresense id.
    let aliases: [String: String]

    public init(espresense: ESPresenseSettings?, openMQTTGateway: OpenMQTTGatewaySettings?) {
        self.espresense = espresense
        self.openMQTTGateway = openMQTTGateway
        aliases = Dictionary(
            (espresense?.ids ?? [:]).map { ($0.key.lowercased(), $0.value) }, uniquingKeysWith: { first, _ in first })
    }

    /// The MQTT filters to subscribe to: `<root>/devices/+/+` and `<prefix>/+/BTtoMQTT/+` for the configured ones.
    public var subscriptionFilters: [String] {
        (espresense.map { ["\($0.root)/devices/+/+"] } ?? [])
            + (openMQTTGateway.map { ["\($0.prefix)/+/BTtoMQTT/+"] } ?? [])
    }

    /// Decodes one message received at `receivedAt` (hub clock, seconds since 1970), which becomes the sighting's
    /// scan time. Topics of neither project are `.ignored`.
    public func decode(topic: String, payload: [UInt8], receivedAt: Double) -> Outcome {
        if let espresense, let levels = Self.levels(of: topic, under: espresense.root), levels.count == 3,
            levels[0] == "devices"
        {
            return decodeESPresense(payload, topicID: levels[1], room: levels[2], at: receivedAt)
        }
        if let openMQTTGateway, let levels = Self.levels(of: topic, under: openMQTTGateway.prefix) {
            guard levels.count == 3, levels[1] == "BTtoMQTT" else {
                return .ignored(reason: "OpenMQTTGateway message that is not a BTtoMQTT reading (status, commands)")
            }
            return decodeOpenMQTTGateway(payload, name: levels[0], at: receivedAt)
        }
        if let espresense, Self.levels(of: topic, under: espresense.root) != nil {
            return .ignored(reason: "ESPresense message that is not a device reading (room status, telemetry)")
        }
        return .ignored(reason: "not an ESPresense or OpenMQTTGateway topic")
    }

    // MARK: ESPresense

    func decodeESPresense(_ payload: [UInt8], topicID: String, room: String, at t: Double) -> Outcome {
        guard let settings = espresense, !settings.ignore.contains(room) else {
            return .ignored(reason: "ESPresense room \"\(room)\" is in espresense.ignore")
        }
        let fields: [String: Field]
        switch Self.fields(of: payload, source: "ESPresense") {
        case .failure(let outcome): return outcome.value
        case .success(let value): fields = value
        }
        guard let gateway = settings.rooms[room] ?? GatewayID(rawValue: room) else {
            return .rejected(
                code: "unknown-gateway",
                message: "ESPresense room \"\(room)\" is not a gateway id (1-64 of A-Z a-z 0-9 . _ : -): map it to "
                    + "one under espresense.rooms in hub.yaml")
        }
        let id: String
        switch fields["id"] {
        case nil, .null: id = topicID
        case .string(let text): id = text
        default: return .rejected(code: "malformed", message: "ESPresense reading whose \"id\" is not a string")
        }
        let rssi: Int
        switch Self.rssi(fields["rssi"], source: "ESPresense") {
        case .failure(let outcome): return outcome.value
        case .success(let value): rssi = value
        }
        guard Self.isUsableID(id) else {
            return .ignored(reason: "ESPresense reading without a usable device id")
        }
        let beacon = aliases[id.lowercased()] ?? Self.espresenseBeacon(id)
        return .sighting(
            SightingLine(
                t: t, gateway: gateway, beacon: beacon, rssi: rssi, txPower: Self.power(fields["rssi@1m"]),
                kind: Self.kind(of: beacon)))
    }

    /// ESPresense's beacon ids in ours: `iBeacon:<uuid>-<major>-<minor>`, `altBeacon:<id1>-<id2>-<id3>` and
    /// `eddy:<namespace>-<instance>`; any other id (`irk:…`, `known:…`, `apple:…`, a MAC…) → `espresense:<id>`,
    /// lowercased.
    ///
    /// ESPresense (3.0 to 4.0.6) writes the Eddystone namespace's fifth byte twice (22 hex digits); the copy is
    /// dropped, and a 20-digit namespace is taken as it is.
    static func espresenseBeacon(_ id: String) -> String {
        let lowered = id.lowercased()
        for (prefix, ours) in [("ibeacon:", "ibeacon:"), ("altbeacon:", "altbeacon:")] where lowered.hasPrefix(prefix) {
            let parts = lowered.dropFirst(prefix.count).split(separator: "-", omittingEmptySubsequences: false)
            if parts.count == 7, let uuid = canonicalUUID(parts[0..<5].joined()),
                let major = UInt16(parts[5]), let minor = UInt16(parts[6])
            {
                return "\(ours)\(uuid):\(major):\(minor)"
            }
        }
        if lowered.hasPrefix("eddy:") {
            let parts = lowered.dropFirst("eddy:".count).split(separator: "-", omittingEmptySubsequences: false)
            if parts.count == 2, parts[1].count == 12, isHex(parts[1]), isHex(parts[0]) {
                var namespace = Array(parts[0])
                if namespace.count == 22 && namespace[8..<10] == namespace[10..<12] {
                    namespace.removeSubrange(10..<12)
                }
                if namespace.count == 20 { return "eddystone-uid:\(String(namespace)):\(parts[1])" }
            }
        }
        return "espresense:\(lowered)"
    }

    // MARK: OpenMQTTGateway / Theengs Gateway

    func decodeOpenMQTTGateway(_ payload: [UInt8], name: String, at t: Double) -> Outcome {
        guard let settings = openMQTTGateway, !settings.ignore.contains(name) else {
            return .ignored(reason: "OpenMQTTGateway \"\(name)\" is in openMQTTGateway.ignore")
        }
        let fields: [String: Field]
        switch Self.fields(of: payload, source: "OpenMQTTGateway") {
        case .failure(let outcome): return outcome.value
        case .success(let value): fields = value
        }
        guard let gateway = settings.gateways[name] ?? GatewayID(rawValue: name) else {
            return .rejected(
                code: "unknown-gateway",
                message: "OpenMQTTGateway name \"\(name)\" is not a gateway id (1-64 of A-Z a-z 0-9 . _ : -): map it "
                    + "to one under openMQTTGateway.gateways in hub.yaml")
        }
        let rssi: Int
        switch Self.rssi(fields["rssi"], source: "OpenMQTTGateway") {
        case .failure(let outcome): return outcome.value
        case .success(let value): rssi = value
        }
        // Raw advertisement data first (pubadvdata, or an `undecoded` message): our own decoder names the beacon
        // exactly as an agent would, with the power it advertises.
        let frames = Self.frames(fields)
        if let frame = frames.first(where: { $0.beaconID != nil }), let beacon = frame.beaconID {
            return .sighting(
                SightingLine(
                    t: t, gateway: gateway, beacon: beacon, rssi: rssi, txPower: Self.power(frame.txPowerAt1m),
                    kind: frame.kind))
        }
        if !frames.isEmpty && frames.allSatisfy({ $0.kind == .eddystoneTLM }) {
            return .ignored(reason: "Eddystone-TLM frame, which carries no identity")
        }
        // Theengs' decoded iBeacon: its `txpower` is then the beacon's measured power at 1 m.
        if case .string(let text) = fields["uuid"], let uuid = Self.canonicalUUID(text) {
            guard let major = Self.uint16(fields["major"]), let minor = Self.uint16(fields["minor"]) else {
                return .rejected(
                    code: "malformed", message: "OpenMQTTGateway iBeacon without integer \"major\" and \"minor\"")
            }
            return .sighting(
                SightingLine(
                    t: t, gateway: gateway, beacon: "ibeacon:\(uuid):\(major):\(minor)", rssi: rssi,
                    txPower: Self.power(fields["txpower"]), kind: .iBeacon))
        }
        // The device address. Its `txpower`, if any, is the advertised transmit power, not a power at 1 m.
        for key in ["id", "mac"] {
            if case .string(let text) = fields[key], let address = Self.address(text) {
                return .sighting(SightingLine(t: t, gateway: gateway, beacon: "mac:\(address)", rssi: rssi))
            }
        }
        return .ignored(reason: "OpenMQTTGateway reading with no beacon identity or device address")
    }

    /// Beacon frames in `manufacturerdata` and `servicedata` + `servicedatauuid` (16-bit, `0xfeaa` or `feaa`),
    /// rebuilt as AD structures for our decoder. Data that is not hex is passed over.
    static func frames(_ fields: [String: Field]) -> [BeaconFrame] {
        var structures: [[UInt8]] = []
        if case .string(let text) = fields["manufacturerdata"], let data = hex(text), !data.isEmpty, data.count < 255 {
            structures.append([UInt8(data.count + 1), 0xFF] + data)
        }
        if case .string(let text) = fields["servicedata"], let data = hex(text), data.count < 253,
            case .string(let uuidText) = fields["servicedatauuid"],
            let uuid = hex(uuidText.hasPrefix("0x") ? String(uuidText.dropFirst(2)) : uuidText), uuid.count == 2
        {
            structures.append([UInt8(data.count + 3), 0x16, uuid[1], uuid[0]] + data)
        }
        return structures.flatMap { (try? BeaconDecoder.decode($0))?.frames ?? [] }
    }

    // MARK: Fields

    /// One top-level value of a payload, as far as the decoder reads it: nested values are not decoded.
    enum Field: Decodable, Sendable {
        case null
        case bool(Bool)
        case number(Double)
        case string(String)
        case other

        init(from decoder: any Decoder) throws {
            let container = try decoder.singleValueContainer()
            if container.decodeNil() {
                self = .null
            } else if let value = try? container.decode(Bool.self) {
                self = .bool(value)
            } else if let value = try? container.decode(Double.self) {
                self = .number(value)
            } else if let value = try? container.decode(String.self) {
                self = .string(value)
            } else {
                self = .other
            }
        }
    }

    /// An outcome carried through `Result`'s failure side.
    struct Early: Error {
        var value: Outcome
    }

    static func fields(of payload: [UInt8], source: String) -> Result<[String: Field], Early> {
        guard payload.count <= ContractCoding.maximumPayloadBytes else {
            return .failure(
                Early(value: .rejected(code: "too-large", message: "payload of \(payload.count) bytes exceeds 256 KiB")))
        }
        guard !payload.isEmpty else {
            return .failure(Early(value: .ignored(reason: "empty payload (a cleared retained message)")))
        }
        guard let fields = try? JSONDecoder().decode([String: Field].self, from: Data(payload)) else {
            return .failure(
                Early(value: .rejected(code: "malformed", message: "\(source) payload that is not a JSON object")))
        }
        return .success(fields)
    }

    /// Whole dBm in -127…20: ESPresense sends its filtered RSSI with decimals, so numbers are rounded. No `rssi`
    /// is not an error (sensor data read over a connection has none); anything but a number in range is.
    static func rssi(_ field: Field?, source: String) -> Result<Int, Early> {
        switch field {
        case nil, .null:
            return .failure(Early(value: .ignored(reason: "\(source) message without \"rssi\": not a sighting")))
        case .number(let value) where value.isFinite && (-127...20).contains(value.rounded()):
            return .success(Int(value.rounded()))
        default:
            return .failure(
                Early(
                    value: .rejected(
                        code: "malformed", message: "\(source) \"rssi\" is not a number of dBm in -127…20")))
        }
    }

    /// A plausible measured power at 1 m (-127…-1 dBm), or nil: some iBeacons put their battery voltage in that
    /// byte, and a non-negative 1 m power means "unknown" in practice.
    static func power(_ field: Field?) -> Int? {
        guard case .number(let value) = field, value.isFinite else { return nil }
        return power(Int(value.rounded()))
    }

    static func power(_ value: Int?) -> Int? {
        guard let value, (-127 ... -1).contains(value) else { return nil }
        return value
    }

    static func uint16(_ field: Field?) -> UInt16? {
        guard case .number(let value) = field, value.isFinite, value == value.rounded() else { return nil }
        return UInt16(exactly: value)
    }

    static func kind(of beacon: String) -> AdvertisementKind? {
        AdvertisementKind.allCases.first { $0 != .eddystoneTLM && beacon.hasPrefix($0.rawValue + ":") }
    }

    // MARK: Text

    /// 1 to 200 characters, none of them white space or control characters.
    static func isUsableID(_ text: String) -> Bool {
        (1...200).contains(text.count)
            && text.unicodeScalars.allSatisfy { !$0.properties.isWhitespace && !CharacterSet.controlCharacters.contains($0) }
    }

    static func isHex(_ text: some StringProtocol) -> Bool {
        text.utf8.allSatisfy { nibble($0) != nil }
    }

    /// Strict hex (digits and a-f, either case; even length) → bytes.
    static func hex(_ text: String) -> [UInt8]? {
        let digits = Array(text.utf8)
        guard digits.count % 2 == 0 else { return nil }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(digits.count / 2)
        for index in stride(from: 0, to: digits.count, by: 2) {
            guard let high = nibble(digits[index]), let low = nibble(digits[index + 1]) else { return nil }
            bytes.append(high << 4 | low)
        }
        return bytes
    }

    static func nibble(_ digit: UInt8) -> UInt8? {
        switch digit {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): digit - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): digit - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): digit - UInt8(ascii: "A") + 10
        default: nil
        }
    }

    /// 32 hex digits, with or without the dashes → lowercase 8-4-4-4-12.
    static func canonicalUUID(_ text: String) -> String? {
        guard let bytes = hex(text.replacingOccurrences(of: "-", with: "")), bytes.count == 16 else { return nil }
        return uuidString(bytes, uppercase: false)
    }

    /// `AA:BB:CC:DD:EE:FF`, `aa-bb-…` or `AABBCCDDEEFF` → `aa:bb:cc:dd:ee:ff`.
    static func address(_ text: String) -> String? {
        let plain = text.count == 17 ? text.filter { $0 != ":" && $0 != "-" } : text
        guard let bytes = hex(plain), bytes.count == 6 else { return nil }
        return bytes.map { [$0].hexString }.joined(separator: ":")
    }

    /// The topic levels below `prefix`, or nil when the topic is not under it.
    static func levels(of topic: String, under prefix: String) -> [String]? {
        guard topic.hasPrefix(prefix + "/") else { return nil }
        return topic.dropFirst(prefix.count + 1).split(separator: "/", omittingEmptySubsequences: false).map(String.init)
    }

    /// A topic prefix of one or more non-empty levels, without wildcards.
    static func checkTopicPrefix<K: CodingKey>(_ prefix: String, key: K, in container: KeyedDecodingContainer<K>)
        throws
    {
        let levels = prefix.split(separator: "/", omittingEmptySubsequences: false)
        guard !levels.contains(where: { $0.isEmpty || $0.contains("+") || $0.contains("#") }),
            !prefix.unicodeScalars.contains(where: { CharacterSet.controlCharacters.contains($0) })
        else {
            throw DecodingError.dataCorruptedError(
                forKey: key, in: container,
                debugDescription: "\"\(prefix)\" is not a topic prefix: expected levels such as home or site/esp, "
                    + "without +, # or empty levels")
        }
    }
}
