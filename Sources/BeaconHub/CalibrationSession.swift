import BeaconModel
import ZoneInference

/// A calibration walk in progress on the dashboard's calibration page or through `beacon-hub calibrate --live`
/// (docs/dashboard.md, "The calibration page"): the beacon carried, the places the walker said they were (marks), and
/// every sighting of the beacon since the start. Each mark starts a stay of `seconds` at the place, ended early by the
/// next mark; a stay in a zone is a stop of the plan file, a stay at a point is also a pause on its route. Pure: time
/// is passed in.
public struct CalibrationSession: Sendable {
    /// One tap: the walker is at (x, y), or somewhere in `zone`, from `t` until `until`.
    public struct Mark: Sendable, Hashable, Codable {
        public var n: Int
        public var t: Double
        public var until: Double
        /// The zone tapped, or the zone holding the point (nil for a point outside every zone).
        public var zone: ZoneID?
        public var x: Double?
        public var y: Double?
        public var isPoint: Bool { x != nil && y != nil }
    }

    /// One zone's share of the walk so far.
    public struct Progress: Sendable, Hashable {
        public enum Quality: String, Sendable, Hashable, Codable { case none, poor, fair, good }
        public var zone: ZoneID
        /// Standing seconds the calibration uses (each stay less its settling seconds at both ends).
        public var seconds: Int
        /// Gateways that heard the beacon during those seconds.
        public var gateways: Int
        public var quality: Quality
    }

    public let id: String
    /// Lowercased, as sightings carry it.
    public let beacon: String
    public let who: String
    public let started: Double
    /// How long a stay lasts unless the next mark comes first.
    public let seconds: Double
    public private(set) var marks: [Mark] = []
    /// A plan file's stops and route, given in place of marks (`beacon-hub calibrate --live … plan`).
    public private(set) var given: (stops: [Calibrator.Stop], route: [Calibrator.RoutePoint])?
    public private(set) var sightings: [SightingLine] = []
    /// Sightings beyond `maxSightings`, not kept.
    public private(set) var dropped = 0

    /// About 30 minutes of a beacon advertising at 10 Hz heard by 10 gateways.
    public static let maxSightings = 200_000
    public static let secondsRange = 5.0...600.0

    public init(id: String, beacon: String, who: String, started: Double, seconds: Double) {
        self.id = id
        self.beacon = beacon.lowercased()
        self.who = who
        self.started = started
        self.seconds = seconds
    }

    /// Keeps a sighting of the carried beacon (others are ignored).
    public mutating func add(_ sighting: SightingLine) {
        guard sighting.beacon == beacon else { return }
        guard sightings.count < Self.maxSightings else {
            dropped += 1
            return
        }
        sightings.append(sighting)
    }

    /// Records a tap at `t`, ending the stay before it there. A zone must be the venue's; a point must lie on the floor
    /// plan (its zone may be none).
    public mutating func mark(
        zone: ZoneID?, x: Double?, y: Double?, at t: Double, until: Double? = nil, venue: Venue
    ) throws(CalibrationSessionError) {
        var place: ZoneID?
        switch (zone, x, y) {
        case (let zone?, nil, nil):
            guard venue.zones.contains(where: { $0.id == zone }) else {
                throw CalibrationSessionError(
                    .badMark,
                    "zone \(zone) is not in the venue: one of \(venue.zones.map(\.id.rawValue).joined(separator: ", "))"
                )
            }
            place = zone
        case (nil, let x?, let y?):
            guard x.isFinite, y.isFinite, Self.onPlan(x, y, venue: venue) else {
                throw CalibrationSessionError(.badMark, "the point (\(x), \(y)) is not on the venue's floor plan")
            }
            place = venue.zone(at: Point(x, y))?.id
        default:
            throw CalibrationSessionError(
                .badMark, "a mark is a zone ({\"zone\": id}) or a point ({\"x\": m, \"y\": m})")
        }
        guard given == nil else {
            throw CalibrationSessionError(.badMark, "this walk was given a plan file: it takes no marks")
        }
        if let last = marks.last, t < last.t {
            throw CalibrationSessionError(.badMark, "a mark cannot come before the previous one (t \(t) < \(last.t))")
        }
        guard t >= started - 1 else {
            throw CalibrationSessionError(
                .badMark, "a mark cannot come before the session started (t \(t) < \(started))")
        }
        let end = until ?? t + seconds
        guard end >= t else { throw CalibrationSessionError(.badMark, "a stay cannot end before it starts") }
        if !marks.isEmpty { marks[marks.count - 1].until = min(marks[marks.count - 1].until, t) }
        marks.append(Mark(n: marks.count + 1, t: t, until: end, zone: place, x: x, y: y))
    }

    /// Takes a plan file's stops and route in place of the marks (which go). Stops must name the venue's zones.
    public mutating func replacePlan(
        stops: [Calibrator.Stop], route: [Calibrator.RoutePoint], venue: Venue
    ) throws(CalibrationSessionError) {
        guard !stops.isEmpty || !route.isEmpty else {
            throw CalibrationSessionError(.badRequest, "the plan has neither stops nor a route")
        }
        for stop in stops where !venue.zones.contains(where: { $0.id == stop.zone }) {
            throw CalibrationSessionError(.badMark, "the plan's stop in \(stop.zone): no such zone in the venue")
        }
        if let stop = stops.first(where: { $0.to < $0.from }) {
            throw CalibrationSessionError(.badMark, "the plan's stop in \(stop.zone) ends before it starts")
        }
        marks = []
        given = (stops.sorted { $0.from < $1.from }, route.sorted { $0.t < $1.t })
    }

    /// Within the venue's extent (its zones' and gateways' bounding box), with a metre to spare.
    static func onPlan(_ x: Double, _ y: Double, venue: Venue) -> Bool {
        let points = venue.zones.flatMap(\.shape.vertices) + venue.gateways.map(\.position)
        guard let minX = points.map(\.x).min(), let maxX = points.map(\.x).max(), let minY = points.map(\.y).min(),
            let maxY = points.map(\.y).max()
        else { return false }
        return x >= minX - 1 && x <= maxX + 1 && y >= minY - 1 && y <= maxY + 1
    }

    /// The stay in progress at `now`, if any.
    public func current(at now: Double) -> Mark? {
        guard let last = marks.last, now < last.until else { return nil }
        return last
    }

    /// The walk so far as the plan file gives it: a stop per stay in a zone (stays in the same zone one after another
    /// make one stop), and per stay at a point a pause on the route (the point at the stay's start and end). Between
    /// two point stays the walker went straight, unless a zone stay came between (`gap`) or more than
    /// `Calibrator.routeGapSeconds` passed.
    public func plan(at now: Double) -> (stops: [Calibrator.Stop], route: [Calibrator.RoutePoint]) {
        if let given { return given }
        var stops: [Calibrator.Stop] = []
        var route: [Calibrator.RoutePoint] = []
        for (index, mark) in marks.enumerated() where mark.t < now {
            let end = min(mark.until, now)
            if let zone = mark.zone {
                // Taps one after another in the same zone are one stay there (a walker tapping where they are as
                // they go round it): one stop, settling only at its ends.
                if let last = stops.last, last.zone == zone, last.to == mark.t {
                    stops[stops.count - 1].to = end
                } else {
                    stops.append(Calibrator.Stop(zone: zone, from: mark.t, to: end))
                }
            }
            if let x = mark.x, let y = mark.y {
                let next = marks.dropFirst(index + 1).first
                route.append(Calibrator.RoutePoint(t: mark.t, x: x, y: y))
                route.append(Calibrator.RoutePoint(t: end, x: x, y: y, gap: next.map { !$0.isPoint } ?? false))
            }
        }
        return (stops, route)
    }

    /// Per zone of the venue, in its order: the standing seconds so far, the gateways that heard the beacon in them and
    /// what that is worth (none: nothing; poor: under 10 s or under 2 gateways; fair: under 20 s or under 3 gateways;
    /// good otherwise).
    public func progress(venue: Venue, at now: Double) -> [Progress] {
        // The stops' standing spans, in time order; the page asks every second, so each sighting is placed by a
        // binary search, not by trying every span.
        let spans = plan(at: now).stops.compactMap { stop -> (from: Double, to: Double, zone: ZoneID)? in
            let from = stop.from + Calibrator.settle
            let to = min(stop.to, now) - Calibrator.settle
            return to > from ? (from, to, stop.zone) : nil
        }.sorted { $0.from < $1.from }
        let longest = spans.map { $0.to - $0.from }.max() ?? 0
        var heard: [ZoneID: Set<GatewayID>] = [:]
        for sighting in sightings {
            // The last span starting at or before the sighting, then back over any (a plan's) that overlap it.
            var low = 0
            var high = spans.count
            while low < high {
                let middle = (low + high) / 2
                if spans[middle].from <= sighting.t { low = middle + 1 } else { high = middle }
            }
            var index = low - 1
            while index >= 0 && spans[index].from > sighting.t - longest - 1 {
                if sighting.t < spans[index].to { heard[spans[index].zone, default: []].insert(sighting.gateway) }
                index -= 1
            }
        }
        return venue.zones.map { zone in
            let seconds = Int(
                spans.filter { $0.zone == zone.id }.map { $0.to - $0.from }.reduce(0, +).rounded(.down))
            let gateways = heard[zone.id]?.count ?? 0
            let quality: Progress.Quality =
                seconds == 0
                ? .none
                : seconds < 10 || gateways < 2
                    ? .poor
                    : seconds < 20 || gateways < 3 ? .fair : .good
            return Progress(zone: zone.id, seconds: seconds, gateways: gateways, quality: quality)
        }
    }
}

/// What is wrong with a calibration request: the code says which rule, the message what to do.
public struct CalibrationSessionError: Error, Sendable, CustomStringConvertible {
    public enum Code: String, Sendable {
        case badMark = "bad-mark"
        case badRequest = "bad-request"
        case noSession = "no-session"
        case sessionOpen = "session-open"
        case nothingRecorded = "nothing-recorded"
        case notActive = "not-active"
        case noVersion = "no-version"
    }

    public var code: Code
    public var message: String

    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    public var description: String { "\(code.rawValue): \(message)" }
}
