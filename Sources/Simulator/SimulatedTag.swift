import BeaconModel

/// One tag of a venue file after `count` expansion: its beacon, calibrated power and advertising interval.
public struct SimulatedTag: Sendable, Hashable {
    public var id: TagID
    public var beacon: String
    public var kind: AdvertisementKind
    /// True power at 1 m, dBm (the radio's P0 for this tag).
    public var p0: Double
    /// Its measured power at 1 m, dBm: what it advertises, if it does.
    public var txPower: Int
    public var interval: Double
    public var carrier: Venue.Tag.Carrier
    public var start: ZoneID
    /// Whether its sightings carry `txPower` (`advertisesPower` of its entry).
    public var advertisesPower = true
    /// Its battery and TLM frames (`battery` of its entry).
    public var battery: Venue.Tag.Battery?

    /// Expands the venue's tag entries (`Venue.Tag.expanded`), drawing each tag's true power around its txPower.
    public static func expand(_ venue: Venue, using rng: inout SeededGenerator) -> [SimulatedTag] {
        var tags: [SimulatedTag] = []
        for entry in venue.tags {
            for named in entry.expanded {
                let p0 =
                    Double(entry.txPower ?? -59)
                    + Double.random(in: -venue.radio.p0Spread...venue.radio.p0Spread, using: &rng)
                tags.append(
                    SimulatedTag(
                        id: named.id, beacon: named.beacon, kind: named.kind, p0: p0, txPower: entry.txPower ?? -59,
                        interval: entry.interval, carrier: entry.carrier, start: entry.start ?? venue.zones[0].id,
                        advertisesPower: entry.advertisesPower, battery: entry.battery))
            }
        }
        return tags
    }
}

/// One ground-truth interval: where a tag really was from `enter` to `exit` (zone nil: in no zone).
public struct TruthInterval: Sendable, Hashable, Codable {
    public var tag: TagID
    public var zone: ZoneID?
    public var enter: Double
    public var exit: Double

    public init(tag: TagID, zone: ZoneID?, enter: Double, exit: Double) {
        self.tag = tag
        self.zone = zone
        self.enter = enter
        self.exit = exit
    }

    private enum CodingKeys: String, CodingKey { case tag, zone, enter, exit }

    /// Writes `zone` as an explicit null when the tag is in no zone (docs/simulator.md).
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(tag, forKey: .tag)
        try container.encode(zone, forKey: .zone)
        try container.encode(enter, forKey: .enter)
        try container.encode(exit, forKey: .exit)
    }
}
