/// The identifier parts of a `regions:` entry, as agent.yaml and hub.yaml both write them (docs/configuration.md):
/// CLBeaconRegion's UUID / major / minor, an Eddystone namespace / instance, an AltBeacon id1 / id2 / id3. Each file's
/// region type checks the values and builds what it needs from them.
public enum RegionKeys {
    public struct IBeacon: Decodable, Sendable {
        public var uuid: String
        public var major: UInt16?
        public var minor: UInt16?
        enum CodingKeys: String, CodingKey, CaseIterable { case uuid, major, minor }
    }

    public struct Eddystone: Decodable, Sendable {
        public var namespace: String
        public var instance: String?
        enum CodingKeys: String, CodingKey, CaseIterable { case namespace, instance }
    }

    public struct AltBeacon: Decodable, Sendable {
        public var id1: String
        public var id2: UInt16?
        public var id3: UInt16?
        enum CodingKeys: String, CodingKey, CaseIterable { case id1, id2, id3 }
    }
}
