import BeaconConfig
import BeaconModel
import Foundation
import ZoneInference

/// One entry of hub.yaml's `regions:` list: a CLBeaconRegion-style group of tags (exactly one of `ibeacon`,
/// `eddystone`, `altbeacon`, as in agent.yaml) and which events its tags produce.
public struct HubRegionSettings: Decodable, Sendable, Hashable {
    public var region: TagRegion

    enum CodingKeys: String, CodingKey, CaseIterable {
        case id, ibeacon, eddystone, altbeacon, notifyOnEntry, notifyOnExit, stayedSeconds
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        let id = try container.decode(String.self, forKey: .id)
        func invalid(_ key: CodingKeys, _ message: String) -> DecodingError {
            DecodingError.dataCorruptedError(forKey: key, in: container, debugDescription: message)
        }
        func hex(_ text: String, digits: Int, key: CodingKeys, what: String) throws -> String {
            let plain = text.replacingOccurrences(of: "-", with: "").lowercased()
            guard plain.count == digits, plain.allSatisfy(\.isHexDigit) else {
                throw invalid(key, "expected \(what) (\(digits) hex digits) but found \"\(text)\"")
            }
            return plain
        }
        func uuid(_ text: String, key: CodingKeys, what: String) throws -> String {
            let plain = Array(try hex(text, digits: 32, key: key, what: what))
            return [0..<8, 8..<12, 12..<16, 16..<20, 20..<32].map { String(plain[$0]) }.joined(separator: "-")
        }
        func numbers(_ first: UInt16?, _ second: UInt16?, key: CodingKeys, _ message: String) throws -> String {
            guard second == nil || first != nil else { throw invalid(key, message) }
            return [first, second].compactMap { $0.map { ":\($0)" } }.joined()
        }
        let present = [CodingKeys.ibeacon, .eddystone, .altbeacon].filter { container.contains($0) }
        guard present.count == 1 else {
            throw invalid(.id, "region \"\(id)\" needs exactly one of ibeacon, eddystone, altbeacon")
        }
        let prefix: String
        switch present[0] {
        case .ibeacon:
            let settings = try container.decode(RegionKeys.IBeacon.self, forKey: .ibeacon)
            prefix =
                "ibeacon:" + (try uuid(settings.uuid, key: .ibeacon, what: "a proximity UUID"))
                + (try numbers(
                    settings.major, settings.minor, key: .ibeacon, "a minor needs a major, as in CLBeaconRegion"))
        case .eddystone:
            let settings = try container.decode(RegionKeys.Eddystone.self, forKey: .eddystone)
            prefix =
                "eddystone-uid:" + (try hex(settings.namespace, digits: 20, key: .eddystone, what: "a namespace"))
                + (try settings.instance.map { ":" + (try hex($0, digits: 12, key: .eddystone, what: "an instance")) }
                    ?? "")
        default:
            let settings = try container.decode(RegionKeys.AltBeacon.self, forKey: .altbeacon)
            prefix =
                "altbeacon:" + (try uuid(settings.id1, key: .altbeacon, what: "an id1"))
                + (try numbers(settings.id2, settings.id3, key: .altbeacon, "an id3 needs an id2"))
        }
        let stayed = try container.decodeIfPresent(Double.self, forKey: .stayedSeconds) ?? 600
        guard stayed >= 0 else { throw invalid(.stayedSeconds, "expected seconds ≥ 0 (0 turns stayed events off)") }
        region = TagRegion(
            id: id, prefix: prefix,
            notifyOnEntry: try container.decodeIfPresent(Bool.self, forKey: .notifyOnEntry) ?? true,
            notifyOnExit: try container.decodeIfPresent(Bool.self, forKey: .notifyOnExit) ?? true,
            stayedSeconds: stayed == 0 ? nil : stayed)
    }
}

/// One entry of hub.yaml's `tags:` list: a beacon the venue names.
public struct HubTagSettings: Decodable, Sendable, Hashable {
    public var id: TagID
    /// The canonical beacon id (docs/mqtt.md, "Beacon identity").
    public var beacon: String

    enum CodingKeys: String, CodingKey, CaseIterable { case id, beacon }
}
