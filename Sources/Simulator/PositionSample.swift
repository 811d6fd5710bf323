import BeaconModel

/// Where a tag truly was at one moment: a line of a positions file (`{"tag":…,"t":…,"x":…,"y":…}`, venue metres), for
/// recordings whose truth has positions (scripts/kolakowski-to-sightings.py writes one). `beacon-sim score --positions`
/// turns them into near-boundary intervals, as `beacon-sim run` does for its walkers.
public struct PositionSample: Sendable, Hashable, Codable {
    public var tag: TagID
    public var t: Double
    public var x: Double
    public var y: Double

    public init(tag: TagID, t: Double, x: Double, y: Double) {
        self.tag = tag
        self.t = t
        self.x = x
        self.y = y
    }

    /// The intervals during which each tag was near a zone boundary. Each sample stands for the time halfway to its
    /// neighbours (the first and last for themselves alone), so consecutive near samples make one interval.
    public static func nearBoundaryIntervals(
        _ samples: [PositionSample], boundaries: ZoneBoundaries
    ) -> [NearBoundaryInterval] {
        var intervals: [NearBoundaryInterval] = []
        for (tag, own) in Dictionary(grouping: samples, by: \.tag).sorted(by: { $0.key.rawValue < $1.key.rawValue }) {
            let sorted = own.sorted { $0.t < $1.t }
            var openedAt: Double?
            for (index, sample) in sorted.enumerated() {
                let near = boundaries.isNear(Point(sample.x, sample.y))
                let halfway = index == 0 ? sample.t : (sorted[index - 1].t + sample.t) / 2
                if near && openedAt == nil {
                    openedAt = halfway
                } else if !near, let from = openedAt {
                    intervals.append(NearBoundaryInterval(tag: tag, from: from, to: halfway))
                    openedAt = nil
                }
            }
            if let from = openedAt, let last = sorted.last, last.t > from {
                intervals.append(NearBoundaryInterval(tag: tag, from: from, to: last.t))
            }
        }
        return intervals
    }
}
