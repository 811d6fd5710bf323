import BeaconModel

#if canImport(Glibc)
    import Glibc
#endif

/// Turns a calibration walk — one tag standing in each zone for about 30 s, or walked along a route of marked points —
/// into a `Calibration`: per zone and gateway the level, spread and how often it was heard; per gateway its offset from
/// the geometric model; and along the route, every `pointSeconds`, where the tag was and what each gateway showed.
public struct Calibrator: Sendable {
    /// One marked point of the route: the tag passed (x, y) at time `t` (unix seconds). Between two points it moved
    /// in a straight line at an even pace; a pause is the same point twice.
    public struct RoutePoint: Sendable, Hashable, Codable {
        public var t: Double
        public var x: Double
        public var y: Double
        /// True when the tag's place between this point and the next is unknown (a phone walk's stay in a whole zone
        /// came between): nothing is interpolated there.
        public var gap: Bool?

        public init(t: Double, x: Double, y: Double, gap: Bool? = nil) {
            self.t = t
            self.x = x
            self.y = y
            self.gap = gap
        }
    }

    /// One stop of the plan: the tag stood in `zone` from `from` to `to` (unix seconds).
    public struct Stop: Sendable, Hashable, Codable {
        public var zone: ZoneID
        public var from: Double
        public var to: Double

        public init(zone: ZoneID, from: Double, to: Double) {
            self.zone = zone
            self.from = from
            self.to = to
        }
    }

    /// Seconds dropped at each end of a stop: the person is still settling or already leaving.
    public static let settle = 2.0
    /// The route's readings are pooled over windows of this many seconds (at a slow walk, a metre or two).
    public static let pointSeconds = 2.0
    /// Two route points further apart in time than this, at different places, are not joined by a straight walk: the
    /// tag's place between them is unknown (a phone walk's taps: the walker may have stopped to talk on the way).
    public static let routeGapSeconds = 60.0

    let model: VenueModel
    let beacon: String
    let stops: [Stop]
    let route: [RoutePoint]
    /// Per route window: the tag's interpolated positions summed, how many, and per gateway its readings.
    var windows: [Int: Window] = [:]

    struct Window: Sendable {
        var x = 0.0
        var y = 0.0
        var count = 0
        /// The readings' directions of travel as unit vectors, summed, and how many had one.
        var east = 0.0
        var north = 0.0
        var moving = 0
        var readings: [Int: [Double]] = [:]
        var seconds: [Int: Set<Int>] = [:]

        mutating func add(
            _ rssi: Double, gateway: Int, at place: (x: Double, y: Double, heading: Double?), second: Int
        ) {
            x += place.x
            y += place.y
            count += 1
            if let heading = place.heading {
                east += cos(heading)
                north += sin(heading)
                moving += 1
            }
            readings[gateway, default: []].append(rssi)
            seconds[gateway, default: []].insert(second)
        }

        /// The window's direction of travel in degrees; nil unless every reading had one and they agree (within
        /// about 45° of their mean).
        var heading: Double? {
            guard moving == count, count > 0 else { return nil }
            let n = Double(count)
            guard (east * east + north * north).squareRoot() / n >= 0.7 else { return nil }
            let degrees = atan2(north, east) * 180 / Double.pi
            return ((degrees < 0 ? degrees + 360 : degrees) * 10).rounded() / 10
        }
    }
    /// Per stop, per gateway: readings and the whole seconds in which there was one.
    var readings: [[Int: [Double]]]
    var seconds: [[Int: Set<Int>]]
    var txPower: Double?
    public private(set) var used = 0

    /// `model` must be uncalibrated: offsets are measured against its geometry.
    public init(model: VenueModel, beacon: String, stops: [Stop], route: [RoutePoint] = []) {
        self.model = model
        self.beacon = beacon.lowercased()
        self.stops = stops.sorted { $0.from < $1.from }
        self.route = route.sorted { $0.t < $1.t }
        readings = stops.map { _ in [:] }
        seconds = stops.map { _ in [:] }
    }

    /// Takes one sighting; sightings of other beacons or outside every stop are ignored.
    public mutating func add(_ sighting: SightingLine) {
        guard sighting.beacon == beacon, let gateway = model.gatewayIndex[sighting.gateway] else { return }
        let place = place(at: sighting.t)
        if let place {
            if let power = sighting.txPower { txPower = Double(power) }
            let since = sighting.t - route[0].t
            windows[Int((since / Self.pointSeconds).rounded(.down)), default: Window()].add(
                Double(sighting.rssi), gateway: gateway, at: place, second: Int(since.rounded(.down)))
            used += 1
        }
        guard
            let stop = stops.firstIndex(where: {
                sighting.t >= $0.from + Self.settle && sighting.t < $0.to - Self.settle
            })
        else { return }
        if let power = sighting.txPower { txPower = Double(power) }
        readings[stop][gateway, default: []].append(Double(sighting.rssi))
        seconds[stop][gateway, default: []].insert(Int((sighting.t - stops[stop].from).rounded(.down)))
        if place == nil { used += 1 }
    }

    /// Where the route says the tag was at `t`, and the way it was going (radians; nil on a pause or at the route's
    /// last point); nil outside the route's time.
    func place(at t: Double) -> (x: Double, y: Double, heading: Double?)? {
        guard let first = route.first, let last = route.last, t >= first.t, t <= last.t else { return nil }
        var low = 0
        var high = route.count - 1
        // The last point at or before t.
        while low < high {
            let middle = (low + high + 1) / 2
            if route[middle].t <= t { low = middle } else { high = middle - 1 }
        }
        let a = route[low]
        guard low + 1 < route.count else { return (a.x, a.y, nil) }
        let b = route[low + 1]
        if a.gap == true && t > a.t { return nil }
        let share = b.t > a.t ? (t - a.t) / (b.t - a.t) : 0
        let moved = ((b.x - a.x) * (b.x - a.x) + (b.y - a.y) * (b.y - a.y)).squareRoot()
        if moved >= 0.1 && b.t - a.t > Self.routeGapSeconds { return nil }
        return (
            a.x + (b.x - a.x) * share, a.y + (b.y - a.y) * share, moved >= 0.1 ? atan2(b.y - a.y, b.x - a.x) : nil
        )
    }

    /// Whether the route moves at least `aboutMetres` from where it was as `stop` began, within it: the walker went
    /// about the zone rather than standing at one spot.
    func walksAbout(_ stop: Stop) -> Bool {
        guard let start = place(at: stop.from) else { return false }
        return route.contains { point in
            point.t > stop.from && point.t <= stop.to
                && (point.x - start.x) * (point.x - start.x) + (point.y - start.y) * (point.y - start.y)
                    >= Self.aboutMetres * Self.aboutMetres
        }
    }

    /// How far a route must go within a stop for the stop to be a walk about its zone.
    public static let aboutMetres = 1.0

    /// The route's windows as calibration points (nil without a route).
    func routePoints() -> [Calibration.Point]? {
        guard !route.isEmpty else { return nil }
        return windows.keys.sorted().compactMap { index in
            let window = windows[index]!
            guard window.count > 0 else { return nil }
            var levels: [String: Calibration.Profile] = [:]
            for (gateway, values) in window.readings {
                levels[model.gateways[gateway].rawValue] =
                    Self.profile(
                        values, secondsHeard: window.seconds[gateway]?.count ?? 0, duration: Self.pointSeconds
                    ).profile
            }
            let n = Double(window.count)
            return Calibration.Point(
                x: (window.x / n * 100).rounded() / 100, y: (window.y / n * 100).rounded() / 100, levels: levels,
                heading: window.heading)
        }
    }

    /// One gateway's readings over `duration` seconds, `secondsHeard` of which had one: the profile as written (levels
    /// to 0.1 dB, the share heard to 0.01), and its mean and share unrounded.
    static func profile(
        _ values: [Double], secondsHeard: Int, duration: Double
    ) -> (profile: Calibration.Profile, mean: Double, heard: Double) {
        let mean = values.reduce(0, +) / Double(values.count)
        let variance = values.map { ($0 - mean) * ($0 - mean) }.reduce(0, +) / Double(max(values.count - 1, 1))
        let heard = min(Double(secondsHeard) / duration, 1)
        let profile = Calibration.Profile(
            mean: (mean * 10).rounded() / 10, sd: (variance.squareRoot() * 10).rounded() / 10,
            heard: (heard * 100).rounded() / 100, samples: values.count)
        return (profile, mean, heard)
    }

    /// The standing seconds of stops `indices` together, and per gateway heard in them its profile, mean and share
    /// heard.
    func profiles(
        of indices: [Int]
    ) -> (seconds: Double, levels: [Int: (profile: Calibration.Profile, mean: Double, heard: Double)]) {
        let duration = indices.map { max(stops[$0].to - stops[$0].from - 2 * Self.settle, 1).rounded(.up) }
            .reduce(0, +)
        var levels: [Int: (profile: Calibration.Profile, mean: Double, heard: Double)] = [:]
        for gateway in Set(indices.flatMap { readings[$0].keys }) {
            let values = indices.flatMap { readings[$0][gateway] ?? [] }
            let secondsHeard = indices.map { seconds[$0][gateway]?.count ?? 0 }.reduce(0, +)
            levels[gateway] = Self.profile(values, secondsHeard: secondsHeard, duration: duration)
        }
        return (duration, levels)
    }

    /// The calibration, and one line per finding a person should look at.
    public func result(site: SiteID, created: Double) -> (calibration: Calibration, warnings: [String]) {
        let reference = txPower ?? model.referencePower
        var zones: [String: [String: Calibration.Profile]] = [:]
        var residuals: [Int: [(value: Double, weight: Double)]] = [:]
        var warnings: [String] = []
        var areas: [Calibration.Area] = []
        // A zone may have several stops (a long walk that passes through it twice): they count together.
        var order: [ZoneID] = []
        var stopsOf: [ZoneID: [Int]] = [:]
        for (index, stop) in stops.enumerated() {
            if stopsOf[stop.zone] == nil { order.append(stop.zone) }
            stopsOf[stop.zone, default: []].append(index)
        }
        for zoneID in order {
            let indices = stopsOf[zoneID]!
            guard let zone = model.zones.firstIndex(of: zoneID) else {
                warnings.append(
                    "stop \(indices[0] + 1): zone \(zoneID) is not in the venue; skipped")
                continue
            }
            var profiles: [String: Calibration.Profile] = [:]
            for (gateway, (profile, mean, heard)) in self.profiles(of: indices).levels {
                profiles[model.gateways[gateway].rawValue] = profile
                // The gateway's own zone, or any zone where it hears well, says how loud it reads.
                if heard >= 0.5 && (model.gatewayZone[gateway] == zone || mean >= reference - 25) {
                    let expected = Double(model.mean[zone * model.gateways.count + gateway])
                    residuals[gateway, default: []].append(
                        (mean - expected, model.gatewayZone[gateway] == zone ? 4 : 1))
                }
            }
            if profiles.isEmpty {
                warnings.append(
                    "zone \(zoneID): no sightings of the tag during its stop — check the plan's times and beacon")
            } else if let strongest = profiles.max(by: { $0.value.mean < $1.value.mean }),
                let gateway = model.gatewayIndex[GatewayID(unchecked: strongest.key)],
                let served = model.gatewayZone[gateway], served != zone,
                model.gatewayZone.contains(zone)
            {
                warnings.append(
                    "zone \(zoneID): loudest gateway was \(strongest.key) of zone \(model.zones[served]) — "
                        + "check the plan, or move that zone's gateway")
            }
            zones[zoneID.rawValue] = profiles
            // The stays off the route (a zone tapped), where in the zone is unknown, and those the route went about
            // in: both teach the zone's level (`PositionMap.fit`).
            let about = indices.filter {
                place(at: (stops[$0].from + stops[$0].to) / 2) == nil || walksAbout(stops[$0])
            }
            let (standing, levels) = self.profiles(of: about)
            if !levels.isEmpty {
                areas.append(
                    Calibration.Area(
                        zone: zoneID, seconds: standing,
                        levels: Dictionary(
                            uniqueKeysWithValues: levels.map { (model.gateways[$0.key].rawValue, $0.value.profile) })))
            }
        }
        var offsets: [String: Double] = [:]
        for (gateway, values) in residuals {
            let weight = values.map(\.weight).reduce(0, +)
            let offset = values.map { $0.value * $0.weight }.reduce(0, +) / weight
            offsets[model.gateways[gateway].rawValue] = (offset * 10).rounded() / 10
        }
        let sorted = offsets.values.sorted()
        if txPower == nil, sorted.count >= 3, abs(sorted[sorted.count / 2]) >= 6 {
            let median = Int(sorted[sorted.count / 2].rounded())
            warnings.append(
                "every gateway reads about \(median > 0 ? "+" : "")\(median) dB from the model: the "
                    + "tag advertises no measured power and is not \(Int(reference)) dBm at 1 m. Fine if all tags are "
                    + "this model; else walk with a tag that advertises its power")
        }
        for gateway in model.gateways
        where !readings.contains(where: { $0[model.gatewayIndex[gateway]!] != nil })
            && !windows.values.contains(where: { $0.readings[model.gatewayIndex[gateway]!] != nil })
        {
            warnings.append("gateway \(gateway) heard nothing of the tag during the walk — is it running?")
        }
        return (
            Calibration(
                site: site, created: created, referencePower: reference, gatewayOffsets: offsets, zones: zones,
                points: routePoints(), areas: areas.isEmpty ? nil : areas),
            warnings
        )
    }
}
