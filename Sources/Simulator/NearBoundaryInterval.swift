import BeaconModel

/// One interval during which a tag was near a zone boundary (`ZoneBoundaries`): a line of `near-boundary.jsonl`
/// (docs/simulator.md), unix seconds.
public struct NearBoundaryInterval: Sendable, Hashable, Codable {
    public var tag: TagID
    public var from: Double
    public var to: Double

    public init(tag: TagID, from: Double, to: Double) {
        self.tag = tag
        self.from = from
        self.to = to
    }
}
