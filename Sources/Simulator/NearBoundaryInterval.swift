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

    /// One tag's intervals from its positions in time order, each marked near or not: a sample stands for the time
    /// halfway to its neighbours (the first from its own time, the last up to its own), so consecutive near samples
    /// make one interval.
    public struct Builder: Sendable {
        public let tag: TagID
        public private(set) var intervals: [NearBoundaryInterval] = []
        private var openedAt: Double?
        private var last: Double?

        public init(tag: TagID) { self.tag = tag }

        public mutating func add(t: Double, near: Bool) {
            let halfway = last.map { ($0 + t) / 2 } ?? t
            last = t
            if near && openedAt == nil {
                openedAt = halfway
            } else if !near, let from = openedAt {
                intervals.append(NearBoundaryInterval(tag: tag, from: from, to: halfway))
                openedAt = nil
            }
        }

        /// The intervals, the last one closed at the last sample.
        public mutating func finish() -> [NearBoundaryInterval] {
            if let from = openedAt, let last, last > from {
                intervals.append(NearBoundaryInterval(tag: tag, from: from, to: last))
            }
            openedAt = nil
            return intervals
        }
    }
}
