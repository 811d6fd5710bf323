import BeaconModel

/// The accuracy a calibration walk lets one expect, per zone: the engine replays the walk's own sightings and each
/// second the tag stood in a zone is scored against where the plan says it was — the stops' seconds (less their
/// settling seconds) when the plan has stops, else every second of the route; a stop says which zone the tag was in,
/// the route where there is no stop. *Before* is the engine with `current` (uncalibrated by default). *After* is
/// cross-validated: the walk is cut into `chunkSeconds` stretches dealt round-robin into `folds` folds, and each
/// fold's seconds are scored by an engine whose calibration was made without that fold's sightings — so a zone's
/// figure says what the calibration does for readings it did not learn from, not how well it remembers them.
public struct CalibrationCheck: Sendable, Hashable {
    /// One zone's scored seconds and how many of them the engine reported the zone the tag was in.
    public struct Zone: Sendable, Hashable {
        public var zone: ZoneID
        public var seconds: Int
        public var correctBefore: Int
        public var correctAfter: Int

        public var before: Double { Double(correctBefore) / Double(max(seconds, 1)) }
        public var after: Double { Double(correctAfter) / Double(max(seconds, 1)) }
    }

    /// The zones the walk scored, in the venue's order.
    public var zones: [Zone]
    public var folds: Int
    public var chunkSeconds: Double
    /// Per fold, the walk's sightings its calibration was made from.
    public var sightingsPerFold: [Int]

    public var seconds: Int { zones.map(\.seconds).reduce(0, +) }
    public var before: Double { Double(zones.map(\.correctBefore).reduce(0, +)) / Double(max(seconds, 1)) }
    public var after: Double { Double(zones.map(\.correctAfter).reduce(0, +)) / Double(max(seconds, 1)) }

    /// Seconds after the tag is first heard that are not scored: the engine has not had a chance to place it yet.
    public static let warmUpSeconds = 5.0

    /// Runs the check on a walk: `sightings` in any order (other beacons' are ignored), `stops` and `route` as in the
    /// plan; `venue` the venue file (`current`'s placements, if any, put its gateways elsewhere). Nil when the walk has
    /// no scorable second.
    public static func run(
        venue: Venue, settings: InferenceSettings, beacon: String, stops: [Calibrator.Stop],
        route: [Calibrator.RoutePoint], sightings: [SightingLine], site: SiteID, folds: Int = 5,
        chunkSeconds: Double = 10, current: Calibration? = nil, learned: LearnedRadio = LearnedRadio()
    ) -> CalibrationCheck? {
        let beacon = beacon.lowercased()
        let walk = sightings.filter { $0.beacon == beacon }.sorted { $0.t < $1.t }
        guard let first = walk.first, let last = walk.last, folds >= 2, chunkSeconds > 0 else { return nil }
        // The gateways stand where the calibration in force placed them; the walk's calibrations keep them there.
        let placements = current?.placements
        let model = VenueModel(venue: venue.placed(by: placements), settings: settings)
        let plain = Calibrator(model: model, beacon: beacon, stops: stops, route: route)
        let origin = plain.route.first?.t ?? plain.stops.first?.from ?? first.t
        func fold(_ t: Double) -> Int {
            let chunk = Int(((t - origin) / chunkSeconds).rounded(.down))
            return ((chunk % folds) + folds) % folds
        }

        // Where the plan says the tag was, each whole second.
        let start = (first.t + warmUpSeconds).rounded(.up)
        let end = last.t.rounded(.down)
        guard end >= start else { return nil }
        let count = Int(end - start) + 1
        var truth = [Int?](repeating: nil, count: count)
        for index in 0..<count {
            let t = start + Double(index)
            let stop = plain.stops.first { t >= $0.from + Calibrator.settle && t < $0.to - Calibrator.settle }
            if !plain.stops.isEmpty && stop == nil { continue }
            // A stop names its zone (the person said so); between stops, the route's place says it.
            if let stop {
                truth[index] = model.zones.firstIndex(of: stop.zone)
            } else if !plain.route.isEmpty {
                guard let place = plain.place(at: t), let zone = venue.zone(at: Point(place.x, place.y)) else {
                    continue
                }
                truth[index] = model.zones.firstIndex(of: zone.id)
            }
        }
        guard truth.contains(where: { $0 != nil }) else { return nil }

        /// The zone the engine reports each second while replaying the walk.
        func replay(_ calibration: Calibration?) -> [Int?] {
            let tag = TagID(unchecked: "calibration-walk")
            var engine = ZoneEngine(
                venue: venue, settings: settings,
                directory: TagDirectory(named: [(beacon: beacon, tag: tag)], regions: []), calibration: calibration)
            engine.apply(learned)
            var events: [ZoneEvent] = []
            var reported = [Int?](repeating: nil, count: count)
            var next = 0
            func sample(upTo t: Double) {
                while next < count && start + Double(next) <= t {
                    engine.advance(to: start + Double(next), events: &events)
                    reported[next] = engine.reportedState(tag)?.zone.flatMap { model.zones.firstIndex(of: $0) }
                    next += 1
                }
                events.removeAll(keepingCapacity: true)
            }
            for sighting in walk {
                sample(upTo: sighting.t.nextDown)
                engine.ingest(sighting, events: &events)
            }
            sample(upTo: end)
            return reported
        }

        let before = replay(current)
        var after = [Int?](repeating: nil, count: count)
        var used: [Int] = []
        for k in 0..<folds {
            var calibrator = plain
            for sighting in walk where fold(sighting.t) != k { calibrator.add(sighting) }
            used.append(calibrator.used)
            var calibration = calibrator.result(site: site, created: 0).calibration
            calibration.placements = placements
            let reported = replay(calibration)
            for index in 0..<count where fold(start + Double(index)) == k { after[index] = reported[index] }
        }

        var rows = model.zones.map { Zone(zone: $0, seconds: 0, correctBefore: 0, correctAfter: 0) }
        for index in 0..<count {
            guard let zone = truth[index] else { continue }
            rows[zone].seconds += 1
            if before[index] == zone { rows[zone].correctBefore += 1 }
            if after[index] == zone { rows[zone].correctAfter += 1 }
        }
        return CalibrationCheck(
            zones: rows.filter { $0.seconds > 0 }, folds: folds, chunkSeconds: chunkSeconds, sightingsPerFold: used)
    }
}
