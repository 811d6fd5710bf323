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

    /// The intervals during which each tag was near a zone boundary (`NearBoundaryInterval.Builder`).
    public static func nearBoundaryIntervals(
        _ samples: [PositionSample], boundaries: ZoneBoundaries
    ) -> [NearBoundaryInterval] {
        Dictionary(grouping: samples, by: \.tag).sorted { $0.key.rawValue < $1.key.rawValue }.flatMap { tag, own in
            var builder = NearBoundaryInterval.Builder(tag: tag)
            for sample in own.sorted(by: { $0.t < $1.t }) {
                builder.add(t: sample.t, near: boundaries.isNear(Point(sample.x, sample.y)))
            }
            return builder.finish()
        }
    }
}
