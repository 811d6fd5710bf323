import BeaconModel

extension VenueSimulation {
    /// Seconds between the position samples of `nearBoundaryIntervals`.
    public static let positionStep = 0.25

    /// Per tag, in the order of `tags`, the intervals from now to `end` during which it was near a zone boundary.
    /// Copies of the walkers are advanced every `step` seconds (the simulation itself does not move; a walker's path
    /// does not depend on how finely it is advanced), from now to `end` (`NearBoundaryInterval.Builder`).
    public func nearBoundaryIntervals(
        until end: Double, step: Double = positionStep, boundaries: ZoneBoundaries
    ) -> [NearBoundaryInterval] {
        precondition(step > 0, "the position step must be positive")
        let start = time
        let samples = max(0, Int(((end - start) / step).rounded(.up)))
        var intervals: [NearBoundaryInterval] = []
        var changes: [ZoneChange] = []
        for var walker in walkers {
            // Standing carriers repeat their position for minutes: ask the geometry once per spot.
            var last: (position: Point, near: Bool)?
            var builder = NearBoundaryInterval.Builder(tag: walker.tag)
            for index in 0...samples {
                let t = min(end, start + Double(index) * step)
                walker.advance(to: t, graph: graph, venue: venue, changes: &changes)
                changes.removeAll(keepingCapacity: true)
                let near: Bool
                if let last, last.position == walker.position {
                    near = last.near
                } else {
                    near = boundaries.isNear(walker.position)
                    last = (walker.position, near)
                }
                builder.add(t: t, near: near)
            }
            intervals += builder.finish()
        }
        return intervals
    }
}
