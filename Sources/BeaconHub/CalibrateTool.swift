import BeaconConfig
import BeaconModel
import Foundation
import ZoneInference

/// `beacon-hub calibrate`: reads a calibration walk and its plan, writes the calibration file hub.yaml points at.
public enum CalibrateTool {
    /// The plan file: which beacon was carried, where it stood when (`stops`), and the marked points it passed
    /// (`route`). Either may be absent, not both.
    public struct Plan: Decodable, Sendable {
        public var beacon: String
        public var stops: [Calibrator.Stop]
        public var route: [Calibrator.RoutePoint]

        enum CodingKeys: String, CodingKey, CaseIterable { case beacon, stops, route }

        public init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            beacon = try container.decode(String.self, forKey: .beacon)
            stops = try container.decodeIfPresent([Calibrator.Stop].self, forKey: .stops) ?? []
            route = try container.decodeIfPresent([Calibrator.RoutePoint].self, forKey: .route) ?? []
            if stops.isEmpty && route.isEmpty {
                throw DecodingError.dataCorrupted(
                    DecodingError.Context(
                        codingPath: decoder.codingPath,
                        debugDescription: "the plan has neither stops nor a route: give the times the tag stood in "
                            + "each zone (stops), or the times it passed marked points (route)"))
            }
        }
    }

    public struct Result: Sendable {
        public var calibration: Calibration
        public var report: String
        /// The expected accuracy per zone, before and after (cross-validated on the walk); nil when no second of the
        /// walk could be scored.
        public var check: CalibrationCheck?
    }

    /// How a phone walk marked its stays (`--taps`).
    public enum Taps: String, Sendable, CaseIterable {
        /// A point at the route's place when each stop began (a walker who stands there).
        case points
        /// Each stop's whole zone (a walker who strolls round it).
        case zones
        /// A point at each of the route's places within each stop (a walker who strolls round the zone and taps where
        /// they are as they go).
        case route
    }

    /// `taps`: the plan's stops are a phone walk's taps and go the calibration page's way (`CalibrationSession`): each
    /// stop one tap as it began, a point or its zone; the route is then the session's, not the plan's.
    public static func run(
        configuration: HubConfiguration, inputPath: String, planPath: String, outputPath: String, taps: Taps? = nil
    ) throws -> Result {
        var plan = try ConfigLoader.load(Plan.self, from: planPath)
        let venue = try configuration.venueFile()
        if let taps { (plan.stops, plan.route) = try tapped(plan, as: taps, venue: venue) }
        // Offsets are measured against the uncalibrated geometry, with the gateways where they stand: hub.yaml's
        // calibration's placements (gateways placed from the dashboard) stay in the new calibration, as a walk on the
        // calibration page keeps them.
        let placements = configuration.loadedCalibration?.placements
        let model = VenueModel(venue: venue.placed(by: placements), settings: configuration.inference)
        var calibrator = Calibrator(model: model, beacon: plan.beacon, stops: plan.stops, route: plan.route)
        let beacon = plan.beacon.lowercased()
        var walk: [SightingLine] = []
        let input = try SightingInput.read(inputPath) { sighting in
            calibrator.add(sighting)
            if sighting.beacon == beacon { walk.append(sighting) }
        }
        var (calibration, warnings) = calibrator.result(
            site: configuration.site, created: Date().timeIntervalSince1970.rounded())
        calibration.placements = placements
        let header = """
            # Calibration of site \(configuration.site) by beacon-hub calibrate (docs/inference.md, "Calibration").
            # Point hub.yaml's `calibration:` at this file. Input: \(inputPath), plan: \(planPath).

            """
        try (header + ConfigLoader.yaml(calibration)).write(toFile: outputPath, atomically: true, encoding: .utf8)
        var lines = [
            "beacon-hub calibrate: \(calibrator.used) sightings of the tag in \(plan.stops.count) stops"
                + (plan.route.isEmpty ? " " : " and along a route of \(plan.route.count) points ")
                + "(\(input.sightings) read, \(input.skipped.count) lines skipped) → \(outputPath)",
            "  zones profiled: \(calibration.zones.count) of \(venue.zones.count); gateway offsets (dB): "
                + calibration.gatewayOffsets.sorted { $0.key < $1.key }.map {
                    "\($0.key) \(String(format: "%+.1f", $0.value))"
                }.joined(separator: ", "),
        ]
        if let fit = RadioMapFit(venue: venue, settings: configuration.inference, calibration: calibration) {
            // What the `position` method's map takes from the route (docs/inference.md, "Calibration").
            let areas = calibration.areas?.count ?? 0
            let walkedAbout: String =
                areas == 0 ? "" : ", \(areas) zones walked about (each teaches its own levels, not the gains)"
            lines.append(
                "  route: \(calibration.points?.count ?? 0) points" + walkedAbout
                    + "; position map: path-loss exponent "
                    + String(format: "%.1f", fit.exponent)
                    + "; per gateway: points, gain (dB), RMS residual (dB) against the geometry → after the gain → "
                    + "after the fit (each point left out); a gateway facing one way, its antenna's fitted "
                    + "front-to-back ratio")
            for row in fit.gateways {
                let zones: String =
                    (row.areas == 0 ? "" : ", \(row.areas) zones")
                    + (row.lowered == 0 ? "" : ", \(row.lowered) unheard (lowered)")
                lines.append(
                    "    \(row.gateway): \(row.points) points" + zones + ", gain "
                        + String(
                            format: "%+.1f, RMS %.1f → %.1f → %.1f", row.gain, row.geometricRMS, row.gainRMS,
                            row.fittedRMS)
                        + (row.frontToBack.map { String(format: "; antenna front-to-back %.1f dB", $0) } ?? ""))
            }
            let sparse = fit.gateways.filter { $0.points < 5 && $0.areas == 0 }.map(\.gateway.rawValue)
            if !sparse.isEmpty {
                warnings.append(
                    "route: fewer than 5 points taught \(sparse.joined(separator: ", ")) — walk nearer "
                        + (sparse.count == 1 ? "it" : "them") + " (its gain is then mostly the model's)")
            }
        }
        // Before: uncalibrated, the gateways placed as the calibration is.
        let placed = placements.map {
            Calibration(
                site: configuration.site, created: 0, referencePower: configuration.inference.referencePower,
                gatewayOffsets: [:], zones: [:], placements: $0)
        }
        let check = CalibrationCheck.run(
            venue: venue, settings: configuration.inference, beacon: beacon, stops: plan.stops, route: plan.route,
            sightings: walk, site: configuration.site, current: placed)
        if let check {
            lines += report(check)
            warnings += check.zones.filter { $0.seconds >= 20 && $0.after < $0.before - 0.1 }.map {
                "zone \($0.zone): calibrated, the walk's held-out seconds there scored worse than uncalibrated ("
                    + percent($0.before) + " → " + percent($0.after) + " of \($0.seconds) s) — a longer stop there, "
                    + "or a check of the plan's times there, may help"
            }
        }
        lines += warnings.map { "  warning: \($0)" }
        return Result(calibration: calibration, report: lines.joined(separator: "\n"), check: check)
    }

    /// The plan as the calibration page would have recorded it from a tap at the start of each stop.
    static func tapped(
        _ plan: Plan, as taps: Taps, venue: Venue
    ) throws -> (stops: [Calibrator.Stop], route: [Calibrator.RoutePoint]) {
        let stops = plan.stops.sorted { $0.from < $1.from }
        guard let first = stops.first else {
            throw CalibrationSessionError(.badRequest, "--taps needs the plan's stops: each is a tap")
        }
        var session = CalibrationSession(
            id: "plan", beacon: plan.beacon, who: "plan", started: first.from,
            seconds: CalibrationSession.secondsRange
                .upperBound)
        for stop in stops {
            if taps == .route {
                let places = plan.route.filter {
                    $0.t >= stop.from && $0.t < stop.to && venue.zone(at: Point($0.x, $0.y))?.id == stop.zone
                }
                if !places.isEmpty {
                    for place in places {
                        try session.mark(zone: nil, x: place.x, y: place.y, at: place.t, until: stop.to, venue: venue)
                    }
                    continue
                }
            }
            let place = plan.route.min { abs($0.t - stop.from) < abs($1.t - stop.from) }
            if taps == .points, let place, venue.zone(at: Point(place.x, place.y))?.id == stop.zone {
                try session.mark(zone: nil, x: place.x, y: place.y, at: stop.from, until: stop.to, venue: venue)
            } else {
                try session.mark(zone: stop.zone, x: nil, y: nil, at: stop.from, until: stop.to, venue: venue)
            }
        }
        return session.plan(at: .infinity)
    }

    /// The check's lines of the report: per zone, the seconds scored and the accuracy before → after.
    static func report(_ check: CalibrationCheck) -> [String] {
        let width = max(check.zones.map(\.zone.rawValue.count).max() ?? 0, 3)
        func row(_ name: String, _ seconds: Int, _ before: Double, _ after: Double) -> String {
            "    " + name.padding(toLength: width, withPad: " ", startingAt: 0)
                + String(format: " %6d s %5.0f %% → %3.0f %%", seconds, before * 100, after * 100)
        }
        return [
            "  expected accuracy per zone (the engine replaying the walk; before: uncalibrated; after: "
                + "cross-validated, each \(Int(check.chunkSeconds)) s stretch scored by a calibration made without "
                + "it, \(check.folds) folds):"
        ] + check.zones.map { row($0.zone.rawValue, $0.seconds, $0.before, $0.after) }
            + [row("all", check.seconds, check.before, check.after)]
    }

    static func percent(_ share: Double) -> String { String(format: "%.0f %%", share * 100) }
}
