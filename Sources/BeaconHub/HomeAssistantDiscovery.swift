import BeaconModel
import Foundation

/// Home Assistant MQTT discovery (docs/integrations.md): retained config messages that make each zone's occupancy and
/// each tag's zone a sensor, fed by the hub's own retained topics.
///
/// Pure: it reads what the hub publishes and returns the configs to publish beside it, so `Hub.Session.send` keeps
/// them in order with the state they describe. One per active period; nothing is announced before `announceAll()`,
/// which the session calls once the hub has said `online` (and again after each reconnect).
public struct HomeAssistantDiscovery: Sendable {
    public let settings: HomeAssistantSettings
    let topics: Topics
    /// The discovery node id: `settings.nodeID`, or `beacontracker_<escaped site>`.
    public let node: String
    let zones: [Zone]
    let device: Device
    let origin = Origin(name: "BeaconTracker", swVersion: BeaconTrackerVersion.current)
    /// Every tag to announce, in the order first known: the venue's and hub.yaml's, then those first seen published.
    var tags: [TagID] = []
    var known: Set<TagID> = []
    /// Tags whose state carried a battery (Eddystone-TLM), in the order first seen: each gets a battery sensor.
    var batteryTags: [TagID] = []
    var withBattery: Set<TagID> = []
    /// Set by `announceAll()`: from then on, a tag seen for the first time is announced at once.
    var announcing = false
    let tagStatePrefix: String

    struct Zone: Sendable, Hashable {
        var id: ZoneID
        var name: String
    }

    /// The venue's zones (`loadedVenue`) and the tags the venue file and hub.yaml name.
    public init(configuration: HubConfiguration) {
        let venue = configuration.loadedVenue
        self.init(
            settings: configuration.homeAssistant, topics: configuration.mqtt.topics(site: configuration.site),
            zones: venue?.zones.map { Zone(id: $0.id, name: $0.name) } ?? [],
            tags: (venue?.namedTags.map(\.id) ?? []) + configuration.tags.map(\.id))
    }

    init(settings: HomeAssistantSettings, topics: Topics, zones: [Zone], tags: [TagID]) {
        self.settings = settings
        self.topics = topics
        self.zones = zones
        node = settings.nodeID ?? "beacontracker_" + Self.escape(topics.site.rawValue)
        device = Device(
            identifiers: [node], name: "BeaconTracker \(topics.site.rawValue)", manufacturer: "BeaconTracker",
            model: "beacon-hub", swVersion: BeaconTrackerVersion.current)
        tagStatePrefix = "\(topics.root)/\(topics.site.rawValue)/tags/"
        for tag in tags { remember(tag) }
    }

    /// Every zone's config and every known tag's, in that order. Called after the hub says `online`, first and after
    /// each reconnect (the broker may have lost retained messages).
    public mutating func announceAll() -> [HubCore.Outgoing] {
        guard settings.enabled else { return [] }
        announcing = true
        return zones.map { zoneConfig($0) }
            + (settings.tagSensors ? tags.map { tagConfig($0) } + batteryTags.map { batteryConfig($0) } : [])
    }

    /// The configs of tags whose state appears in `messages` for the first time; to be published before them.
    /// Before `announceAll()` such tags are only remembered.
    public mutating func configs(for messages: [HubCore.Outgoing]) -> [HubCore.Outgoing] {
        guard settings.enabled, settings.tagSensors else { return [] }
        var configs: [HubCore.Outgoing] = []
        for message in messages {
            guard let tag = tag(stateTopic: message.topic), !message.payload.isEmpty else { continue }
            if remember(tag), announcing { configs.append(tagConfig(tag)) }
            // A battery sensor once the tag reports one (iBeacon and AltBeacon tags never do).
            if !withBattery.contains(tag), Self.carriesBattery(message.payload) {
                withBattery.insert(tag)
                batteryTags.append(tag)
                if announcing { configs.append(batteryConfig(tag)) }
            }
        }
        return configs
    }

    /// The config topic of a zone's occupancy sensor: `<prefix>/sensor/<node>/<zone>_occupancy/config`.
    public func configTopic(zone: ZoneID) -> String { configTopic(object: Self.escape(zone.rawValue) + "_occupancy") }

    /// The config topic of a tag's zone sensor: `<prefix>/sensor/<node>/<tag>_zone/config`.
    public func configTopic(tag: TagID) -> String { configTopic(object: Self.escape(tag.rawValue) + "_zone") }

    /// The config topic of a tag's battery sensor: `<prefix>/sensor/<node>/<tag>_battery/config`.
    public func configTopic(batteryOf tag: TagID) -> String {
        configTopic(object: Self.escape(tag.rawValue) + "_battery")
    }

    /// Whether a tag state payload has a `battery` object (the hub writes it sorted, compactly).
    static func carriesBattery(_ payload: [UInt8]) -> Bool {
        let key = Array("\"battery\":{".utf8)
        guard payload.count >= key.count else { return false }
        return (0...(payload.count - key.count)).contains { start in
            payload[start..<start + key.count].elementsEqual(key)
        }
    }

    func configTopic(object: String) -> String { "\(settings.prefix)/sensor/\(node)/\(object)/config" }

    @discardableResult
    mutating func remember(_ tag: TagID) -> Bool {
        guard known.insert(tag).inserted else { return false }
        tags.append(tag)
        return true
    }

    func tag(stateTopic topic: String) -> TagID? {
        guard topic.hasPrefix(tagStatePrefix), topic.hasSuffix("/state") else { return nil }
        let id = topic.dropFirst(tagStatePrefix.count).dropLast("/state".count)
        guard !id.isEmpty, !id.contains("/") else { return nil }
        return TagID(unchecked: String(id))
    }

    // MARK: Config payloads

    func zoneConfig(_ zone: Zone) -> HubCore.Outgoing {
        let object = Self.escape(zone.id.rawValue) + "_occupancy"
        let state = topics.zoneOccupancy(zone.id)
        return outgoing(
            SensorConfig(
                name: "\(zone.name) occupancy", uniqueID: "\(node)_\(object)", stateTopic: state,
                valueTemplate: "{{ value_json.count }}", jsonAttributesTopic: state, jsonAttributesTemplate: nil,
                stateClass: "measurement", icon: "mdi:account-group", availability: [availability], device: device,
                origin: origin),
            to: configTopic(object: object))
    }

    func tagConfig(_ tag: TagID) -> HubCore.Outgoing {
        let object = Self.escape(tag.rawValue) + "_zone"
        let state = topics.tagState(tag)
        return outgoing(
            SensorConfig(
                name: "\(tag.rawValue) zone", uniqueID: "\(node)_\(object)", stateTopic: state,
                valueTemplate: Self.tagValueTemplate, jsonAttributesTopic: state,
                jsonAttributesTemplate: Self.tagAttributesTemplate, stateClass: nil, icon: "mdi:map-marker-radius",
                availability: [availability], device: device, origin: origin),
            to: configTopic(object: object))
    }

    func batteryConfig(_ tag: TagID) -> HubCore.Outgoing {
        let object = Self.escape(tag.rawValue) + "_battery"
        let state = topics.tagState(tag)
        return outgoing(
            SensorConfig(
                name: "\(tag.rawValue) battery", uniqueID: "\(node)_\(object)", stateTopic: state,
                valueTemplate: "{{ value_json.battery.milliVolts if value_json.battery is defined else none }}",
                jsonAttributesTopic: state,
                jsonAttributesTemplate:
                    "{{ {'level': value_json.battery.level, 'trend_per_week': value_json.battery.get('trendPerWeek'), "
                    + "'read': value_json.battery.t} | tojson if value_json.battery is defined else '{}' }}",
                stateClass: "measurement", icon: "mdi:battery", availability: [availability], device: device,
                origin: origin, deviceClass: "voltage", unitOfMeasurement: "mV", entityCategory: "diagnostic"),
            to: configTopic(object: object))
    }

    /// The zone while `inside`, else the state word (`outside`, `unknown`).
    static let tagValueTemplate = "{{ value_json.zone if value_json.state == 'inside' else value_json.state }}"
    /// The tag state without its beacon id (personal data, which Home Assistant would keep in its history) and
    /// without the per-gateway readings (noise in the recorder).
    static let tagAttributesTemplate =
        "{{ {'state': value_json.state, 'zone': value_json.get('zone'), 'since': value_json.since, "
        + "'confidence': value_json.confidence, 'last_seen': value_json.get('lastSeen')} | tojson }}"

    var availability: Availability {
        Availability(
            topic: topics.hubStatus, valueTemplate: "{{ value_json.state }}", payloadAvailable: "online",
            payloadNotAvailable: "offline")
    }

    func outgoing(_ config: SensorConfig, to topic: String) -> HubCore.Outgoing {
        // Plain strings and arrays of them: encoding cannot fail.
        let payload = (try? ContractCoding.encode(config)) ?? []
        return HubCore.Outgoing(topic: topic, payload: payload, retain: true)
    }

    // MARK: Ids

    /// An id as a discovery id (`[A-Za-z0-9_-]`), one to one: letters, digits and `-` stay, `_` becomes `__`, any
    /// other byte `_` and two lowercase hex digits (`.` → `_2e`, `:` → `_3a`). The `_` + word suffixes that follow
    /// (`_occupancy`, `_zone`) can therefore never be produced by an escaped id.
    public static func escape(_ id: String) -> String {
        var escaped = ""
        for byte in id.utf8 {
            if isPlain(byte) {
                escaped.unicodeScalars.append(UnicodeScalar(byte))
            } else if byte == UInt8(ascii: "_") {
                escaped += "__"
            } else {
                escaped += "_" + (byte < 16 ? "0" : "") + String(byte, radix: 16)
            }
        }
        return escaped
    }

    static func isPlain(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
            UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"):
            return true
        default:
            return false
        }
    }

    // MARK: Home Assistant's schema (the MQTT sensor's discovery keys, unabbreviated)

    struct SensorConfig: Encodable {
        var name: String
        var uniqueID: String
        var stateTopic: String
        var valueTemplate: String
        var jsonAttributesTopic: String
        var jsonAttributesTemplate: String?
        var stateClass: String?
        var icon: String
        var availability: [Availability]
        var device: Device
        var origin: Origin
        var deviceClass: String? = nil
        var unitOfMeasurement: String? = nil
        var entityCategory: String? = nil
        var qos = 1

        enum CodingKeys: String, CodingKey {
            case name, uniqueID = "unique_id", stateTopic = "state_topic", valueTemplate = "value_template"
            case jsonAttributesTopic = "json_attributes_topic", jsonAttributesTemplate = "json_attributes_template"
            case stateClass = "state_class", icon, availability, device, origin, qos
            case deviceClass = "device_class", unitOfMeasurement = "unit_of_measurement"
            case entityCategory = "entity_category"
        }
    }

    struct Availability: Encodable, Sendable {
        var topic: String
        var valueTemplate: String
        var payloadAvailable: String
        var payloadNotAvailable: String

        enum CodingKeys: String, CodingKey {
            case topic, valueTemplate = "value_template", payloadAvailable = "payload_available"
            case payloadNotAvailable = "payload_not_available"
        }
    }

    struct Device: Encodable, Sendable {
        var identifiers: [String]
        var name: String
        var manufacturer: String
        var model: String
        var swVersion: String

        enum CodingKeys: String, CodingKey {
            case identifiers, name, manufacturer, model, swVersion = "sw_version"
        }
    }

    struct Origin: Encodable, Sendable {
        var name: String
        var swVersion: String

        enum CodingKeys: String, CodingKey {
            case name, swVersion = "sw_version"
        }
    }
}
