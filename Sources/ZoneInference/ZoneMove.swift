import BeaconModel

/// A change of a tag's zone as the engine decided it, whatever the region's notify flags say: the record the hub's
/// history (zone visits, transitions) is built from. Events are for subscribers and may be silenced; moves are not.
public struct ZoneMove: Sendable, Hashable {
    public var tag: TagID
    public var beacon: String
    /// The tag's region id, if a region tracks it.
    public var region: String?
    /// The zone left (`nil`: the tag was in no zone).
    public var from: ZoneID?
    /// The zone entered (`nil`: the tag left every zone).
    public var to: ZoneID?
    /// When the engine decided, on the sightings' clock.
    public var t: Double
    /// The decision's probability (1 for an absence exit).
    public var confidence: Double

    public init(
        tag: TagID, beacon: String, region: String?, from: ZoneID?, to: ZoneID?, t: Double, confidence: Double
    ) {
        self.tag = tag
        self.beacon = beacon
        self.region = region
        self.from = from
        self.to = to
        self.t = t
        self.confidence = confidence
    }
}
