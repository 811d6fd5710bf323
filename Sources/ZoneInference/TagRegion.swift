import BeaconModel

/// A named group of tags with CLBeaconRegion semantics, matched on the canonical beacon id (docs/mqtt.md): a UUID
/// alone matches every major and minor, UUID + major every minor, UUID + major + minor one beacon; likewise an
/// Eddystone namespace (+ instance) and an AltBeacon id1 (+ id2 (+ id3)). Each region sets which events its tags
/// produce, as CoreLocation's notifyOnEntry / notifyOnExit and AMap's Stayed.
public struct TagRegion: Sendable, Hashable {
    public var id: String
    /// The canonical beacon id's leading parts, e.g. `ibeacon:<uuid>` or `ibeacon:<uuid>:<major>:<minor>`.
    public var prefix: String
    public var notifyOnEntry: Bool
    public var notifyOnExit: Bool
    /// Dwell before a `stayed` event; nil: never.
    public var stayedSeconds: Double?

    public init(
        id: String, prefix: String, notifyOnEntry: Bool = true, notifyOnExit: Bool = true,
        stayedSeconds: Double? = 600
    ) {
        self.id = id
        self.prefix = prefix.lowercased()
        self.notifyOnEntry = notifyOnEntry
        self.notifyOnExit = notifyOnExit
        self.stayedSeconds = stayedSeconds
    }

    /// True when `beacon` is the prefix itself or continues it at a `:` boundary (so major 1 never matches 12).
    public func matches(beacon: String) -> Bool {
        guard beacon.hasPrefix(prefix) else { return false }
        let rest = beacon.utf8.dropFirst(prefix.utf8.count)
        return rest.isEmpty || rest.first == UInt8(ascii: ":")
    }
}

/// Which beacons the hub tracks and under which tag id: the tags named in the configuration and the venue file,
/// and, in regions, the beacons no one named (tracked under their beacon id). The first matching region wins.
public struct TagDirectory: Sendable {
    /// A tracked beacon: its tag id and the index of its region, if any.
    public struct Entry: Sendable, Hashable {
        public var tag: TagID
        public var region: Int?
    }

    public let regions: [TagRegion]
    /// Named beacons (lowercase) and their tags.
    public let named: [String: TagID]

    public init(named: [(beacon: String, tag: TagID)], regions: [TagRegion]) {
        self.named = Dictionary(named.map { ($0.beacon.lowercased(), $0.tag) }, uniquingKeysWith: { first, _ in first })
        self.regions = regions
    }

    /// The tag for `beacon`, or nil when the hub does not track it.
    public func entry(for beacon: String) -> Entry? {
        let region = regions.firstIndex { $0.matches(beacon: beacon) }
        if let tag = named[beacon] { return Entry(tag: tag, region: region) }
        guard let region, let tag = TagID(rawValue: beacon) else { return nil }
        return Entry(tag: tag, region: region)
    }
}
