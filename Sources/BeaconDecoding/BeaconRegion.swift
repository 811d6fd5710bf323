/// A group of beacons with CoreLocation's CLBeaconRegion semantics: a proximity UUID alone matches every
/// major/minor, UUID + major every minor, UUID + major + minor one beacon. Likewise Eddystone namespace (+ instance)
/// and AltBeacon id1 (+ id2 (+ id3)).
public struct BeaconRegion: Sendable, Hashable {
    /// What the region matches.
    public enum Criteria: Sendable, Hashable {
        case iBeacon(uuid: [UInt8], major: UInt16?, minor: UInt16?)
        case eddystone(namespace: [UInt8], instance: [UInt8]?)
        case altBeacon(id1: [UInt8], id2: UInt16?, id3: UInt16?)
    }

    public var id: String
    public var criteria: Criteria

    public init(id: String, criteria: Criteria) {
        self.id = id
        self.criteria = criteria
    }

    /// True when `frame` belongs to this region. TLM, URL and EID frames carry no UUID or namespace and never match
    /// by themselves (TLM follows the identity frame of its device).
    public func matches(_ frame: BeaconFrame) -> Bool {
        switch (criteria, frame) {
        case (.iBeacon(let uuid, let major, let minor), .iBeacon(let beacon)):
            return beacon.uuid == uuid && (major.map { $0 == beacon.major } ?? true)
                && (minor.map { $0 == beacon.minor } ?? true)
        case (.eddystone(let namespace, let instance), .eddystoneUID(let beacon)):
            return beacon.namespace == namespace && (instance.map { $0 == beacon.instance } ?? true)
        case (.altBeacon(let id1, let id2, let id3), .altBeacon(let beacon)):
            return beacon.id1 == id1 && (id2.map { $0 == beacon.id2 } ?? true) && (id3.map { $0 == beacon.id3 } ?? true)
        default:
            return false
        }
    }
}
