import BeaconConfig
import BeaconDecoding
import Foundation

/// One entry of agent.yaml's `regions:` list; exactly one of `ibeacon`, `eddystone`, `altbeacon`.
public struct RegionSettings: Decodable, Sendable, Hashable {
    public var region: BeaconRegion

    enum CodingKeys: String, CodingKey, CaseIterable {
        case id, ibeacon, eddystone, altbeacon
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        let id = try container.decode(String.self, forKey: .id)
        func invalid(_ key: CodingKeys, _ message: String) -> DecodingError {
            DecodingError.dataCorruptedError(forKey: key, in: container, debugDescription: message)
        }
        func hexBytes(_ text: String, count: Int, key: CodingKeys, what: String) throws -> [UInt8] {
            let digits = text.replacingOccurrences(of: "-", with: "")
            guard let bytes = BeaconDecoding.bytes(fromHex: digits), bytes.count == count else {
                throw invalid(key, "expected \(what) (\(count * 2) hex digits) but found \"\(text)\"")
            }
            return bytes
        }
        let present = [CodingKeys.ibeacon, .eddystone, .altbeacon].filter { container.contains($0) }
        guard present.count == 1 else {
            throw invalid(.id, "region \"\(id)\" needs exactly one of ibeacon, eddystone, altbeacon")
        }
        switch present[0] {
        case .ibeacon:
            let settings = try container.decode(RegionKeys.IBeacon.self, forKey: .ibeacon)
            guard settings.minor == nil || settings.major != nil else {
                throw invalid(.ibeacon, "a minor needs a major, as in CLBeaconRegion")
            }
            region = BeaconRegion(
                id: id,
                criteria: .iBeacon(
                    uuid: try hexBytes(settings.uuid, count: 16, key: .ibeacon, what: "a proximity UUID"),
                    major: settings.major, minor: settings.minor))
        case .eddystone:
            let settings = try container.decode(RegionKeys.Eddystone.self, forKey: .eddystone)
            region = BeaconRegion(
                id: id,
                criteria: .eddystone(
                    namespace: try hexBytes(settings.namespace, count: 10, key: .eddystone, what: "a namespace"),
                    instance: try settings.instance.map {
                        try hexBytes($0, count: 6, key: .eddystone, what: "an instance")
                    }))
        default:
            let settings = try container.decode(RegionKeys.AltBeacon.self, forKey: .altbeacon)
            guard settings.id3 == nil || settings.id2 != nil else {
                throw invalid(.altbeacon, "an id3 needs an id2")
            }
            region = BeaconRegion(
                id: id,
                criteria: .altBeacon(
                    id1: try hexBytes(settings.id1, count: 16, key: .altbeacon, what: "an id1"), id2: settings.id2,
                    id3: settings.id3))
        }
    }
}
