import BeaconModel
import Foundation

/// `beacon-sim calibration-walk`: a person standing with one tag in each zone in turn, turning slowly once around
/// (as docs/inference.md asks of a real calibration), in the same radio realisation as `beacon-sim run` with the same
/// seed — same gateway gains, shadowing, antennas and clock offsets, and interference bursts drawn from the same
/// settings — so that a calibration computed from it applies to that run.
public enum CalibrationWalk {
    /// The calibration tag: not one of any venue's tags.
    public static let beacon = "ibeacon:c0ffee00-ca11-4b1e-9a7e-5e7c0ffee000:65535:65535"
    public static let txPower = -59
    public static let interval = 0.5

    /// What the walk produced.
    public struct Summary: Sendable {
        public var sightings: Int
        public var stops: Int
    }

    /// Writes `sightings.jsonl` and `plan.yaml` (the plan `beacon-hub calibrate --plan` reads) into `directory`.
    /// `skipping`: zones the walker never enters (a part of the venue left unwalked: what a calibration does to the
    /// zones it has no readings of).
    public static func writeFiles(
        venue: Venue, seed: UInt64, start: Double, dwell: Double, strolling: Bool = false,
        skipping: Set<ZoneID> = [], directory: String
    ) throws -> Summary {
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let writer = try LineFileWriter(path: "\(directory)/sightings.jsonl")
        var plan = [
            "# Calibration plan written by beacon-sim calibration-walk (docs/inference.md, \"Calibration\").",
            "beacon: \"\(beacon)\"", "stops:",
        ]
        // The radio is the first stream split off the seed, exactly as in VenueSimulation.
        var rng = SeededGenerator(seed: seed)
        var radioStream = rng.split()
        let radio = RadioModel(venue: venue, using: &radioStream)
        var walk = SeededGenerator(seed: seed ^ 0xCA11_B4A7)
        // Bursts and clock delays draw from streams of their own, so a venue without them walks exactly as before.
        var schedules = SeededGenerator(seed: seed ^ 0xB0_0257)
        var impairments = GatewayImpairments(
            venue: venue, radio: radio, start: start, schedules: &schedules,
            interferenceDraws: SeededGenerator(seed: seed ^ 0x1_7E2F),
            clockDraws: SeededGenerator(seed: seed ^ 0xC_10C4), links: venue.gateways.count,
            fadeDraws: SeededGenerator(seed: seed ^ 0xFADE_B0257))
        var t = start
        // The route: where the tag was, every `routeSeconds` of each stop (a stroll's ellipse, or the standing spot at
        // both ends), as a person marking points as they pass would give it.
        var route: [String] = []
        for zone in venue.zones where !skipping.contains(zone.id) {
            let standing = standingSpot(in: zone.shape, using: &walk)
            var fading = venue.gateways.map { _ in
                FadingProcess(sigma: venue.radio.fadingSigma, tau: venue.radio.fadingTauSeconds, using: &walk)
            }
            let from = t
            while t < from + dwell {
                // One slow turn over the stop: standing, on the spot; strolling, the walker faces the way they walk.
                let turn = (t - from) / dwell
                let heading = strolling ? strollHeading(in: zone.shape, turn: turn) : 2 * Double.pi * turn
                let spot = strolling ? strollPoint(in: zone.shape, turn: turn) : standing
                if (t - from).truncatingRemainder(dividingBy: routeSeconds) < interval / 2 {
                    route.append("  - { t: \(t), x: \(rounded(spot.x)), y: \(rounded(spot.y)) }")
                }
                for (index, gateway) in venue.gateways.enumerated() {
                    let faded = fading[index].advance(by: interval, using: &walk)
                    let angle = atan2(gateway.position.y - spot.y, gateway.position.x - spot.x) - heading
                    guard
                        let mean = radio.meanRSSI(
                            tagP0: Double(txPower), at: spot, gateway: gateway.id, bodyFactor: max(0, -cos(angle))),
                        let rssi = impairments.receive(
                            radio, gateway: index, link: index, at: t, mean: mean, fading: faded, from: spot,
                            zone: zone.id, using: &walk)
                    else { continue }
                    writer.write(
                        SimulationRun.line(
                            for: SightingLine(
                                t: impairments.stamp(gateway: index, at: t), gateway: gateway.id,
                                beacon: beacon, rssi: rssi, txPower: txPower, kind: .iBeacon)))
                }
                t += interval
            }
            plan.append("  - { zone: \(zone.id), from: \(from), to: \(t) }")
            let last = strolling ? strollPoint(in: zone.shape, turn: (t - from) / dwell) : standing
            route.append("  - { t: \(t), x: \(rounded(last.x)), y: \(rounded(last.y)) }")
            // Walking to the next zone: not part of the plan.
            t += 15
        }
        try writer.close()
        plan += ["route:"] + route
        try (plan.joined(separator: "\n") + "\n").write(
            toFile: "\(directory)/plan.yaml", atomically: true, encoding: .utf8)
        return Summary(sightings: writer.lines, stops: venue.zones.count { !skipping.contains($0.id) })
    }

    /// The zones a walk that leaves out every `every`-th zone of the venue's order skips: the `every`-th, the
    /// 2 × `every`-th and so on (none for `every` below 2: a walk must enter some zone).
    public static func everyOther(_ every: Int, of venue: Venue) -> Set<ZoneID> {
        guard every >= 2 else { return [] }
        return Set(venue.zones.enumerated().filter { ($0.offset + 1) % every == 0 }.map(\.element.id))
    }

    /// Seconds between the route's points.
    static let routeSeconds = 5.0

    static func rounded(_ value: Double) -> Double { (value * 100).rounded() / 100 }

    /// With `strolling`, the person walks once slowly round an ellipse over the zone's middle half instead of
    /// standing: the profile then stands for the zone, not for one spot.
    static func strollPoint(in shape: Polygon, turn: Double) -> Point {
        let xs = shape.vertices.map(\.x)
        let ys = shape.vertices.map(\.y)
        let centre = shape.centroid
        let rx = ((xs.max() ?? 0) - (xs.min() ?? 0)) / 4
        let ry = ((ys.max() ?? 0) - (ys.min() ?? 0)) / 4
        let point = Point(centre.x + rx * cos(2 * Double.pi * turn), centre.y + ry * sin(2 * Double.pi * turn))
        return shape.contains(point) ? point : centre
    }

    /// The way a walker on `strollPoint`'s ellipse faces: along it, anticlockwise (the direction of travel, so the
    /// body is beside the zone's middle, not between it and the tag). Where the stroll falls back to the centre, one
    /// slow turn.
    static func strollHeading(in shape: Polygon, turn: Double) -> Double {
        let xs = shape.vertices.map(\.x)
        let ys = shape.vertices.map(\.y)
        let rx = ((xs.max() ?? 0) - (xs.min() ?? 0)) / 4
        let ry = ((ys.max() ?? 0) - (ys.min() ?? 0)) / 4
        let angle = 2 * Double.pi * turn
        let point = strollPoint(in: shape, turn: turn)
        guard point != shape.centroid, rx > 0 || ry > 0 else { return angle }
        return atan2(ry * cos(angle), -rx * sin(angle))
    }

    /// Somewhere in the middle third of the zone, as a person told "stand in the middle" would.
    static func standingSpot(in shape: Polygon, using rng: inout SeededGenerator) -> Point {
        let centre = shape.centroid
        for _ in 0..<50 {
            let vertex = shape.vertices[Int.random(in: 0..<shape.vertices.count, using: &rng)]
            let share = Double.random(in: 0...0.33, using: &rng)
            let point = Point(centre.x + (vertex.x - centre.x) * share, centre.y + (vertex.y - centre.y) * share)
            if shape.contains(point) { return point }
        }
        return centre
    }
}
