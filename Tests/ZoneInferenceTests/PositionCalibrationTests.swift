import BeaconConfig
import BeaconModel
import Foundation
import Simulator
import Testing

@testable import ZoneInference

/// The `position` method's calibration: a route's points become per-gateway gains and a residual map, recovering
/// known levels; a plan's route becomes points where the tag was.
@Suite struct PositionCalibrationTests {
    static var settings: InferenceSettings {
        var settings = InferenceSettings()
        settings.method = .position
        settings.learnsExponent = false
        return settings
    }

    /// Two 10 × 8 m rooms with a light wall between them (its door at the south end), one gateway in each.
    static func venue() throws -> Venue {
        try VenueLoader.decode(
            """
            site: walled
            zones:
              - { id: a, rect: { x: 0, y: 0, width: 10, height: 8 } }
              - { id: b, rect: { x: 10, y: 0, width: 10, height: 8 } }
            doors:
              - { between: [outside, a], at: [5, 0] }
              - { between: [a, b], at: [10, 1] }
            walls:
              - { from: [10, 2], to: [10, 8], material: light }
            gateways:
              - { id: gw-a, zone: a, position: [5, 4] }
              - { id: gw-b, zone: b, position: [15, 4] }
            """, file: "walled.yaml")
    }

    /// What a calibration tag of −59 dBm shows at (x, y): the uncalibrated map's level plus `truth`, plus the noise's
    /// mean offset (what the map's fit takes off), as the mean of four readings.
    static func point(
        _ x: Double, _ y: Double, map: PositionMap, truth: (String, Double, Double) -> Double
    ) -> Calibration.Point {
        let cell = map.grid.cell(containing: Point(x, y))!
        var levels: [String: Calibration.Profile] = [:]
        for (g, id) in ["gw-a", "gw-b"].enumerated() {
            let level =
                Double(map.level(g, cell)) - 59 + truth(id, x, y) + Double(map.noise.meanOffset)
            levels[id] = Calibration.Profile(mean: level, sd: 3, heard: 1, samples: 4)
        }
        return Calibration.Point(x: x, y: y, levels: levels)
    }

    /// `plain` (exponent 2.2) fitted to a walk with a point at each of `xs` × `ys`, each reading `truth` over it.
    static func fitted(
        _ venue: Venue, plain: PositionMap, settings: InferenceSettings, xs: StrideTo<Double>, ys: StrideTo<Double>,
        truth: (String, Double, Double) -> Double
    ) -> PositionMap {
        var points: [Calibration.Point] = []
        for x in xs {
            for y in ys { points.append(point(x, y, map: plain, truth: truth)) }
        }
        let calibration = Calibration(
            site: venue.site, created: 0, referencePower: -59, gatewayOffsets: [:], zones: [:], points: points)
        return PositionMap(venue: venue, settings: settings, grid: plain.grid, exponent: 2.2, calibration: calibration)
    }

    /// A walk over both rooms, a point every metre: gw-a reads 4 dB louder than the model everywhere and a further
    /// 6 dB louder in the north-west corner (x < 4, y > 5: a reflector); gw-b reads 3 dB quieter in its own room and
    /// 3 dB louder through the wall in room a (the wall is thinner than the model thinks).
    @Test func theFitRecoversGainsAndAResidualThatStopsAtTheWall() throws {
        let venue = try Self.venue()
        // The points' means are the levels themselves, not what a gateway near its sensitivity hears of them: with
        // the sensitivity far below, there is no cut for the fit to take back (`HeardMeanTests` has that).
        var settings = Self.settings
        settings.sensitivity = -120
        let plain = PositionMap(
            venue: venue, settings: settings, grid: FloorGrid(venue: venue, reach: 1, cellSide: 0.5), exponent: 2.2)
        let truth = { (id: String, x: Double, y: Double) -> Double in
            id == "gw-a" ? 4 + (x < 4 && y > 5 ? 6 : 0) : (x < 10 ? 3 : -3)
        }
        let fitted = Self.fitted(
            venue, plain: plain, settings: settings, xs: stride(from: 0.7, to: 20, by: 1.0),
            ys: stride(from: 0.7, to: 8, by: 1.0), truth: truth)
        #expect(fitted.fits.count == 2)
        let gains = fitted.fits.map(\.gain)
        // gw-a's gain is 4 plus the reflector's share of its points, shrunk a little by the prior; gw-b's the middle
        // of its two rooms'.
        #expect(abs(gains[1]) < 0.3, "gw-b gain \(gains[1])")
        #expect(gains[0] > 4 && gains[0] < 5.5, "gw-a gain \(gains[0])")
        let grid = plain.grid
        func change(_ g: Int, _ x: Double, _ y: Double) -> Double {
            let cell = grid.cell(containing: Point(x, y))!
            return Double(fitted.level(g, cell) - plain.level(g, cell))
        }
        // Where the walk was, the fitted level is the truth within a dB.
        for (x, y) in [(2.0, 2.0), (7.0, 3.0), (12.0, 6.0), (18.0, 1.5)] {
            #expect(abs(change(0, x, y) - truth("gw-a", x, y)) < 1, "gw-a at (\(x), \(y)): \(change(0, x, y))")
            #expect(abs(change(1, x, y) - truth("gw-b", x, y)) < 1, "gw-b at (\(x), \(y)): \(change(1, x, y))")
        }
        #expect(abs(change(0, 1.5, 7.0) - 10) < 1.5, "the reflector's corner: \(change(0, 1.5, 7.0))")
        // The fit explains the points better than the gains alone, and the gains better than the geometry.
        let fit = fitted.fits[0]
        #expect(fit.fittedRMS < fit.gainRMS && fit.gainRMS < fit.geometricRMS)
        #expect(fitted.fits[1].fittedRMS < 1 && fitted.fits[1].gainRMS > 2.5)
        // A residual on one side of the wall does not leak to the other: gw-b's corrections either side of it are
        // each side's own, not a blend (half a metre apart, well within the smoothing length).
        #expect(abs(change(1, 10.25, 6.0) - -3) < 1, "east of the wall: \(change(1, 10.25, 6.0))")
        #expect(abs(change(1, 9.75, 6.0) - 3) < 1, "west of the wall: \(change(1, 9.75, 6.0))")
        // Beyond the walk (the grid's margin outside the building), the gain alone.
        #expect(abs(change(1, 25, 4) - gains[1]) < 0.01)
    }

    /// A gateway whose antenna faces east (+x) reads 14 dB less behind it than ahead (a cardioid) and 2 dB more than
    /// the model ahead. A walk that passes all round it, but not the room's far west end, teaches the fit the ratio
    /// and the gain; the map then shades the far end behind it, where no point was, by the ratio. The omni gateway
    /// gets no ratio.
    @Test func theFitLearnsTheAntennaOfAGatewayFacingOneWay() throws {
        let venue = try VenueLoader.decode(
            """
            site: hall
            zones:
              - { id: hall, rect: { x: 0, y: 0, width: 24, height: 10 } }
            doors:
              - { between: [outside, hall], at: [12, 0] }
            gateways:
              - { id: gw-a, zone: hall, position: [8, 5], height: 2, antenna: { facing: 0 } }
              - { id: gw-b, zone: hall, position: [18, 5], height: 2 }
            """, file: "hall.yaml")
        var settings = Self.settings
        settings.sensitivity = -120
        let plain = PositionMap(
            venue: venue, settings: settings, grid: FloorGrid(venue: venue, reach: 1, cellSide: 0.5), exponent: 2.2)
        let gateway = venue.gateways[0]
        func shade(_ x: Double, _ y: Double) -> Double {
            PositionMap.behind(gateway, dx: x - gateway.position.x, dy: y - gateway.position.y)
        }
        let truth = { (id: String, x: Double, y: Double) -> Double in id == "gw-a" ? 2 - 14 * shade(x, y) : 0 }
        let fitted = Self.fitted(
            venue, plain: plain, settings: settings, xs: stride(from: 4.3, to: 24, by: 1.0),
            ys: stride(from: 0.7, to: 10, by: 1.0), truth: truth)
        let ratio = try #require(fitted.fits[0].frontToBack)
        #expect(abs(ratio - 14) < 1, "front-to-back \(ratio) dB")
        #expect(abs(fitted.fits[0].gain - 2) < 0.5, "gain \(fitted.fits[0].gain) dB")
        #expect(fitted.fits[1].frontToBack == nil && abs(fitted.fits[1].gain) < 0.3)
        // Behind the gateway, 3 m beyond the last point: the ratio's shade, not the gain alone.
        let cell = try #require(plain.grid.cell(containing: Point(0.5, 5)))
        let change = Double(fitted.level(0, cell) - plain.level(0, cell))
        #expect(abs(change - truth("gw-a", 0.5, 5)) < 1.5, "at (0.5, 5): \(change) dB, truth \(truth("gw-a", 0.5, 5))")
        #expect(shade(0.5, 5) > 0.9)
    }

    /// End to end through the simulator: a strolling calibration walk (`beacon-sim calibration-walk`) in a venue whose
    /// gateways' gains are known (+5, −4, +2, −6 dB, no shadowing, exponent 2.2), read by `Calibrator` from its plan's
    /// route alone (no stops, so no areas: the points fit the gains against the geometry), chooses exponent 2.2 and ranks the gateways' gains as they are, their median error within 1.5 dB and each
    /// within 3. The walker faces the way they walk and their body (10 dB in the simulator) hides the gateways behind
    /// them: the fit takes it out with the heading the route gives. (When written: gains +4.9, −2.6, +1.5, −4.6 dB.
    /// Without the heading the fit chose exponent 1.8 and two gains 4 dB off; so it did with the heading but the
    /// tracking's 6 dB of body loss.)
    @Test func aSimulatedWalkRecoversTheSimulatorsGains() throws {
        let venue = try Self.lab()
        let walk = try SimulatedWalk(venue: venue, seed: 5, dwell: 60)
        var calibrator = Calibrator(
            model: VenueModel(venue: venue, settings: Self.settings), beacon: walk.plan.beacon,
            stops: [], route: walk.plan.route)
        for sighting in walk.sightings { calibrator.add(sighting) }
        let calibration = calibrator.result(site: "lab", created: 0).calibration
        #expect(calibration.areas == nil)
        var settings = Self.settings
        settings.learnsExponent = true
        let fit = try #require(RadioMapFit(venue: venue, settings: settings, calibration: calibration))
        #expect(fit.exponent == 2.2)
        var errors: [Double] = []
        for row in fit.gateways {
            let truth = try #require(Self.labGains[row.gateway.rawValue])
            errors.append(abs(row.gain - truth))
            #expect(abs(row.gain - truth) < 3, "\(row.gateway): fitted \(row.gain) dB, truth \(truth) dB, \(row)")
            #expect(row.points >= 20)
        }
        #expect(errors.sorted()[1...2].reduce(0, +) / 2 < 1.5, "errors \(errors)")
        let ranked = fit.gateways.sorted { $0.gain > $1.gain }.map(\.gateway.rawValue)
        #expect(ranked == ["gw-1", "gw-3", "gw-2", "gw-4"])
    }

    /// The same stroll with the zones tapped instead of the route (a phone walk's zone taps): where in its zone the
    /// walker was is unknown, so each zone is one area, and what it teaches is each gateway's level over that zone —
    /// not the gains, which stay at 0, nor the exponent. With the venue's exponent, each gateway's mean level over
    /// each zone comes within 3.5 dB of the simulator's and on average within half the gains' error (when written:
    /// 0.8–3.0 dB off, mean 1.6, from 2–6 dB off, mean 4.25: the walker strolled the zone's middle, not all of it,
    /// and their body hid some gateways more than the average the fit takes out), and outside every zone the map is as
    /// it was.
    @Test func aZoneTappedStrollTeachesEachZonesLevels() throws {
        let venue = try Self.lab()
        let walk = try SimulatedWalk(venue: venue, seed: 5, dwell: 60)
        var calibrator = Calibrator(
            model: VenueModel(venue: venue, settings: Self.settings), beacon: walk.plan.beacon,
            stops: walk.plan.stops, route: [])
        for sighting in walk.sightings { calibrator.add(sighting) }
        let calibration = calibrator.result(site: "lab", created: 0).calibration
        #expect(calibration.points == nil)
        let areas = try #require(calibration.areas)
        #expect(areas.map(\.zone.rawValue).sorted() == ["east", "west"])
        #expect(areas.allSatisfy { $0.seconds >= 50 && $0.levels.count == 4 })
        var settings = Self.settings
        settings.pathLossExponent = 2.2
        let grid = FloorGrid(venue: venue, reach: 1, cellSide: 0.5)
        let plain = PositionMap(venue: venue, settings: settings, grid: grid, exponent: 2.2)
        let fitted = PositionMap(
            venue: venue, settings: settings, grid: grid, exponent: 2.2, calibration: calibration)
        #expect(fitted.fits.allSatisfy { $0.points == 0 && $0.areas == 2 && $0.gain == 0 })
        var errors: [String: (before: Double, after: Double)] = [:]
        for (z, zone) in venue.zones.enumerated() {
            let cells = (0..<grid.count).filter { grid.zoneOfCell[$0] == Int32(z) }
            for (g, gateway) in venue.gateways.enumerated() {
                let truth = try #require(Self.labGains[gateway.id.rawValue])
                // The simulator's level is the plain map's (the same exponent, no shadowing) plus the gain.
                let change =
                    cells.reduce(0.0) { $0 + Double(fitted.level(g, $1) - plain.level(g, $1)) }
                    / Double(cells.count)
                errors["\(zone.id)/\(gateway.id)"] = (abs(truth), abs(change - truth))
            }
        }
        #expect(errors.values.allSatisfy { $0.after < 3.5 }, "\(errors)")
        let after = errors.values.map(\.after).reduce(0, +)
        #expect(after < errors.values.map(\.before).reduce(0, +) / 2, "\(errors)")
        let outside = try #require(grid.cell(containing: Point(-0.5, -0.5)))
        #expect(fitted.level(0, outside) == plain.level(0, outside))
        // Areas do not choose the exponent: the one to start from is the settings'.
        settings.learnsExponent = true
        settings.pathLossExponent = 2.6
        #expect(try #require(RadioMapFit(venue: venue, settings: settings, calibration: calibration)).exponent == 2.6)
        // Without areas (a file from before them) the walk gives offsets only, and no fit.
        var offsetsOnly = calibration
        offsetsOnly.areas = nil
        #expect(RadioMapFit(venue: venue, settings: settings, calibration: offsetsOnly) == nil)
    }

    /// A stroll whose route is known both ways (`--taps route`, or a plan's route): each stop the route went about in
    /// is also an area, so the walk teaches each zone's level as the zone taps do and, round the points, the field
    /// within it. In the lab with shadowing (σ 4 dB over 2 m), the map near the route comes closer to the simulator's
    /// mean levels than from the zones alone or the route alone, and the gains reported (what the fit added where the
    /// walker went) come within 2 dB of the simulator's. (When written: RMS error within 1 m of the route from the
    /// zones alone / the route alone / both 3.85 / 2.45 / 2.29 dB; gains +3.8, −5.4, +1.2, −6.5 dB.)
    @Test func aStrollOnARouteTeachesTheZonesLevelsAndTheFieldWithinThem() throws {
        var venue = try Self.lab()
        venue.radio.shadowingSigma = 4
        venue.radio.shadowingCorrelationMetres = 2
        let walk = try SimulatedWalk(venue: venue, seed: 5, dwell: 60)
        func calibration(stops: Bool, route: Bool) -> Calibration {
            var calibrator = Calibrator(
                model: VenueModel(venue: venue, settings: Self.settings), beacon: walk.plan.beacon,
                stops: stops ? walk.plan.stops : [], route: route ? walk.plan.route : [])
            for sighting in walk.sightings { calibrator.add(sighting) }
            return calibrator.result(site: "lab", created: 0).calibration
        }
        let both = calibration(stops: true, route: true)
        #expect(both.areas?.map(\.zone.rawValue).sorted() == ["east", "west"])
        #expect((both.points?.count ?? 0) >= 50)
        var settings = Self.settings
        settings.pathLossExponent = 2.2
        let grid = FloorGrid(venue: venue, reach: 1, cellSide: 0.5)
        var rng = SeededGenerator(seed: 5)
        var stream = rng.split()
        let radio = RadioModel(venue: venue, using: &stream)
        // The cells within 1 m of the route's places.
        let near = (0..<grid.count).filter { cell in
            let centre = grid.centre(cell)
            return walk.plan.route.contains {
                ($0.x - centre.x) * ($0.x - centre.x) + ($0.y - centre.y) * ($0.y - centre.y) <= 1
            }
        }
        func error(_ calibration: Calibration) throws -> Double {
            let map = PositionMap(venue: venue, settings: settings, grid: grid, exponent: 2.2, calibration: calibration)
            var squares = 0.0
            for (g, gateway) in venue.gateways.enumerated() {
                for cell in near {
                    let truth = try #require(
                        radio.meanRSSI(tagP0: 0, at: grid.centre(cell), gateway: gateway.id, bodyFactor: 0))
                    squares += (Double(map.level(g, cell)) - truth) * (Double(map.level(g, cell)) - truth)
                }
            }
            return (squares / Double(near.count * venue.gateways.count)).squareRoot()
        }
        let zones = try error(calibration(stops: true, route: false))
        let route = try error(calibration(stops: false, route: true))
        let fitted = try error(both)
        print("lab stroll, RMS error near the route: zones \(zones), route \(route), both \(fitted) dB")
        #expect(fitted < zones && fitted < route, "RMS error: zones \(zones), route \(route), both \(fitted) dB")
        let fit = try #require(RadioMapFit(venue: venue, settings: settings, calibration: both))
        for row in fit.gateways {
            #expect(row.areas == 2 && row.points >= 20)
            let truth = try #require(Self.labGains[row.gateway.rawValue])
            print("lab stroll, \(row.gateway): gain \(row.gain) dB, truth \(truth) dB")
            #expect(abs(row.gain - truth) < 2, "\(row.gateway): \(row.gain) dB, truth \(truth) dB")
        }
    }

    /// A gateway that did not hear the walker in a zone walked about (gw-4 in west, where the geometry has it heard
    /// most of the time) is lowered there until the noise would let through about a tenth of a reading over the stay,
    /// where one heard once is let through about once; heard zones keep their means' correction, and a zone already
    /// quiet enough is left alone.
    @Test func aGatewayUnheardInAZoneWalkedAboutIsLoweredThere() throws {
        let venue = try Self.lab()
        var settings = Self.settings
        settings.pathLossExponent = 2.2
        // Deaf enough that gw-4 is heard in west only part of the time: lowered by less than the residuals' cap.
        settings.sensitivity = -85
        let grid = FloorGrid(venue: venue, reach: 1, cellSide: 0.5)
        let plain = PositionMap(venue: venue, settings: settings, grid: grid, exponent: 2.2)
        let west = (0..<grid.count).filter { grid.zoneOfCell[$0] == 0 }
        let east = (0..<grid.count).filter { grid.zoneOfCell[$0] == 1 }
        let sensitivity = settings.sensitivity
        // Readings a walker going evenly over `cells` would give gateway g over `sent`, the map as `map` has it.
        func expected(_ map: PositionMap, _ g: Int, _ cells: [Int], sent: Double) -> Double {
            sent
                * cells.reduce(0.0) {
                    $0 + HeardMean.turning.share(margin: Double(map.level(g, $1)) - 59 - sensitivity)
                } / Double(cells.count)
        }
        // Each heard gateway as the plain map has it over the zone (its mean level, the noise's offset on it).
        func heard(_ g: Int, _ cells: [Int]) -> Calibration.Profile {
            let mean = cells.reduce(0.0) { $0 + Double(plain.level(g, $1)) } / Double(cells.count)
            return Calibration.Profile(mean: mean - 59 + Double(plain.noise.meanOffset), sd: 4, heard: 1, samples: 120)
        }
        let before = expected(plain, 3, west, sent: 120)
        #expect(before > 10, "the geometry has gw-4 heard in west: \(before) readings")
        var afters: [Double] = []
        for (once, allowed) in [(false, 0.1), (true, 1.0)] {
            var westLevels = ["gw-1": heard(0, west), "gw-2": heard(1, west), "gw-3": heard(2, west)]
            if once { westLevels["gw-4"] = Calibration.Profile(mean: -94, sd: 0, heard: 0.02, samples: 1) }
            let areas = [
                Calibration.Area(zone: ZoneID(unchecked: "west"), seconds: 60, levels: westLevels),
                Calibration.Area(
                    zone: ZoneID(unchecked: "east"), seconds: 60,
                    levels: [
                        "gw-1": heard(0, east), "gw-2": heard(1, east), "gw-3": heard(2, east), "gw-4": heard(3, east),
                    ]),
            ]
            let calibration = Calibration(
                site: venue.site, created: 0, referencePower: -59, gatewayOffsets: [:], zones: [:], areas: areas)
            let fitted = PositionMap(
                venue: venue, settings: settings, grid: grid, exponent: 2.2, calibration: calibration)
            #expect(fitted.fits[3].areas == 1 && fitted.fits[3].lowered == 1)
            let after = expected(fitted, 3, west, sent: 120)
            // The fit takes the area's residual a little short of whole (its prior), which leaves a few readings.
            #expect(after < before / 20 && after < 30 * allowed, "once \(once): \(before) → \(after) readings")
            afters.append(after)
            // Heard at home where the plain map has them: each such zone's correction stays within a fraction of a dB.
            for (g, cells) in [(0, west), (1, west), (3, east)] {
                let change =
                    cells.reduce(0.0) { $0 + Double(fitted.level(g, $1) - plain.level(g, $1)) } / Double(cells.count)
                #expect(abs(change) < 1, "gateway \(g): \(change) dB")
            }
        }
        #expect(afters.count == 2 && afters[0] < afters[1], "heard once is lowered less: \(afters)")
        // Quiet enough already, or too few readings sent to tell: nothing to lower.
        #expect(
            PositionMap.quietOffset(levels: [sensitivity - 40], sent: 120, allowed: 0.1, sensitivity: sensitivity)
                == nil)
        #expect(
            PositionMap.quietOffset(levels: [sensitivity + 20], sent: 5, allowed: 0.1, sensitivity: sensitivity) == nil)
        let lowered = try #require(
            PositionMap.quietOffset(levels: [sensitivity + 20], sent: 120, allowed: 0.1, sensitivity: sensitivity))
        #expect(abs(120 * HeardMean.turning.share(margin: 20 + lowered) - 0.1) < 0.01)
    }

    static let labGains = ["gw-1": 5.0, "gw-2": -4.0, "gw-3": 2.0, "gw-4": -6.0]

    /// Two 12 × 10 m rooms side by side, two gateways in each, their gains `labGains`; no shadowing.
    static func lab() throws -> Venue {
        try VenueLoader.decode(
            """
            site: lab
            zones:
              - { id: west, rect: { x: 0, y: 0, width: 12, height: 10 } }
              - { id: east, rect: { x: 12, y: 0, width: 12, height: 10 } }
            doors:
              - { between: [outside, west], at: [6, 0] }
              - { between: [west, east], at: [12, 5] }
            gateways:
              - { id: gw-1, zone: west, position: [3, 5], height: 2, gainOffset: 5 }
              - { id: gw-2, zone: west, position: [9, 5], height: 2, gainOffset: -4 }
              - { id: gw-3, zone: east, position: [15, 5], height: 2, gainOffset: 2 }
              - { id: gw-4, zone: east, position: [21, 5], height: 2, gainOffset: -6 }
            radio:
              pathLossExponent: 2.2
              shadowingSigma: 0
            """, file: "lab.yaml")
    }

    /// A calibrator for the row venue's route: from (2, 4) east to (12, 4) in 10 s, then a 10 s pause there.
    static func rowRoute() throws -> Calibrator {
        let model = VenueModel(venue: try TestVenue.venue(), settings: InferenceSettings())
        let route = [
            Calibrator.RoutePoint(t: 100, x: 2, y: 4), Calibrator.RoutePoint(t: 110, x: 12, y: 4),
            Calibrator.RoutePoint(t: 120, x: 12, y: 4),
        ]
        return Calibrator(model: model, beacon: TestVenue.beacon, stops: [], route: route)
    }

    /// The route in a plan places each reading between its marked points; readings are pooled every two seconds.
    /// A radio map given outright (`Calibration.map`) replaces the geometry of the gateways it lists at the cells it
    /// covers; the rest keeps the geometry, a map whose levels do not fill its grid is not read, and a map of every
    /// gateway leaves no exponent to choose.
    @Test func aRadioMapGivenOutrightReplacesTheGeometryWhereItHasLevels() throws {
        let venue = try Self.venue()
        let grid = FloorGrid(venue: venue, reach: 1, cellSide: 0.5)
        let plain = PositionMap(venue: venue, settings: Self.settings, grid: grid, exponent: 2.2)
        // gw-a over room a only (1-m cells, x 0…10, y 0…8): falling 1 dB a metre east and 0.1 dB a metre north.
        var levels: [Double] = []
        for row in 0..<8 {
            for column in 0..<10 { levels.append(-40 - Double(column) - 0.1 * Double(row)) }
        }
        let map = Calibration.RadioMap(
            cellMetres: 1, originX: 0, originY: 0, columns: 10, rows: 8, levels: ["gw-a": levels])
        #expect(map.problem == nil)
        func calibration(_ map: Calibration.RadioMap) -> Calibration {
            Calibration(
                site: venue.site, created: 0, referencePower: -59, gatewayOffsets: [:], zones: [:], map: map)
        }
        let given = PositionMap(
            venue: venue, settings: Self.settings, grid: grid, exponent: 2.2, calibration: calibration(map))
        var counted = (mapped: 0, geometric: 0)
        for cell in 0..<grid.count where plain.level(0, cell) > -200 {
            let centre = grid.centre(cell)
            if centre.x > 0, centre.x < 10, centre.y > 0, centre.y < 8 {
                // For a 0 dBm tag, as the engine keeps its levels: the map's, less its reference power.
                let expected = -40 - centre.x.rounded(.down) - 0.1 * centre.y.rounded(.down) + 59
                #expect(abs(Double(given.level(0, cell)) - expected) < 0.06, "cell at \(centre.x), \(centre.y)")
                counted.mapped += 1
            } else {
                #expect(given.level(0, cell) == plain.level(0, cell))
                counted.geometric += 1
            }
            #expect(given.level(1, cell) == plain.level(1, cell))
        }
        #expect(counted.mapped == 320 && counted.geometric > 300, "\(counted)")
        // Levels that do not fill the grid: named, and never read (the hub refuses the file at start).
        var short = map
        short.levels["gw-a"]?.removeLast()
        #expect(short.problem == "map.levels.gw-a has 79 levels, but columns × rows is 80")
        let unread = PositionMap(
            venue: venue, settings: Self.settings, grid: grid, exponent: 2.2, calibration: calibration(short))
        #expect((0..<grid.count).allSatisfy { unread.level(0, $0) == plain.level(0, $0) })
        // The exponent: chosen among the candidates while a gateway keeps the geometry, not once all are mapped.
        var learning = Self.settings
        learning.learnsExponent = true
        let some = ZoneEngine.positionMaps(venue: venue, settings: learning, calibration: calibration(map))
        #expect(some.maps.count == ZoneEngine.candidateExponents.count)
        var whole = map
        whole.levels["gw-b"] = levels
        #expect(
            ZoneEngine.positionMaps(venue: venue, settings: learning, calibration: calibration(whole)).maps.count == 1)
    }

    /// `beacon-sim radio-map`'s file is the simulator's own radio: read back as hub.yaml reads it, the engine's map
    /// holds the simulated mean level (shadowing, gains, walls) at each of its cells, not the geometry's.
    @Test func theExactRadioMapOfARunIsTheSimulatorsRadio() throws {
        let venue = try Self.venue()
        let written = ExactRadioMap.calibration(venue: venue, seed: 7, cellMetres: 0.5, created: 0)
        let read = try ConfigLoader.decode(
            Calibration.self, from: ExactRadioMap.yaml(written, seed: 7), file: "exact.yaml")
        #expect(read.map?.problem == nil && read.map?.levels.keys.sorted() == ["gw-a", "gw-b"])
        #expect(read.referencePower == -59 && read.site == venue.site)
        var rng = SeededGenerator(seed: 7)
        var stream = rng.split()
        let radio = RadioModel(venue: venue, using: &stream)
        let settings = Self.settings
        let grid = FloorGrid(
            venue: venue, reach: settings.maxWalkingSpeed * settings.tickSeconds, cellSide: settings.cellMetres)
        let plain = PositionMap(venue: venue, settings: settings, grid: grid, exponent: 2.2)
        let given = PositionMap(venue: venue, settings: settings, grid: grid, exponent: 2.2, calibration: read)
        var largest = (error: 0.0, change: 0.0)
        for (g, gateway) in venue.gateways.enumerated() {
            for cell in 0..<grid.count where given.level(g, cell) > -200 {
                let truth = try #require(
                    radio.meanRSSI(tagP0: 0, at: grid.centre(cell), gateway: gateway.id, bodyFactor: 0))
                largest.error = max(largest.error, abs(Double(given.level(g, cell)) - truth))
                largest.change = max(largest.change, abs(Double(given.level(g, cell) - plain.level(g, cell))))
            }
        }
        // 0.05 dB from the file's rounding, 0.05 from the engine's steps.
        #expect(largest.error <= 0.1, "\(largest)")
        #expect(largest.change > 3, "the map should differ from the geometry by the run's radio: \(largest)")
    }

    /// `beacon-sim radio-map --shadowing`: with `none` the map is the run's radio without its shadowing; with
    /// `zone-mean` each zone's shadowing, per gateway, is the same over all its cells, its mean there, and the cells in
    /// no zone have none.
    @Test func theRadioMapsShadowingIsLeftOutOrAveragedOverEachZone() throws {
        let venue = try Self.venue()
        var rng = SeededGenerator(seed: 7)
        var stream = rng.split()
        let radio = RadioModel(venue: venue, using: &stream)
        let grid = FloorGrid(venue: venue, reach: 0, cellSide: 0.5)
        func levels(_ shadowing: ExactRadioMap.Shadowing) throws -> [String: [Double]] {
            try #require(
                ExactRadioMap.calibration(venue: venue, seed: 7, cellMetres: 0.5, created: 0, shadowing: shadowing)
                    .map?.levels)
        }
        let (exact, zoneMean, none) = (try levels(.exact), try levels(.zoneMean), try levels(.none))
        var zonesSeen = Set<Int>()
        for gateway in venue.gateways {
            let id = gateway.id.rawValue
            let (exactLevels, averaged, bareLevels) = (
                try #require(exact[id]), try #require(zoneMean[id]), try #require(none[id])
            )
            var shadowOf: [Int: (sum: Double, cells: Int)] = [:]
            for cell in 0..<grid.count {
                let bare = try #require(
                    radio.meanRSSI(
                        tagP0: -59, at: grid.centre(cell), gateway: gateway.id, bodyFactor: 0, shadowed: false))
                #expect(abs(bareLevels[cell] - bare) <= 0.05)
                let zone = Int(grid.zoneOfCell[cell])
                if zone < venue.zones.count {
                    shadowOf[zone, default: (0, 0)].sum += exactLevels[cell] - bare
                    shadowOf[zone, default: (0, 0)].cells += 1
                } else {
                    #expect(abs(averaged[cell] - bare) <= 0.05)
                }
            }
            for cell in 0..<grid.count where Int(grid.zoneOfCell[cell]) < venue.zones.count {
                let zone = Int(grid.zoneOfCell[cell])
                let shadow = try #require(shadowOf[zone])
                // 0.05 dB from each of the two files' rounding.
                #expect(abs(averaged[cell] - bareLevels[cell] - shadow.sum / Double(shadow.cells)) <= 0.1)
                zonesSeen.insert(zone)
            }
        }
        #expect(zonesSeen.count == venue.zones.count)
        #expect(
            zip(try #require(exact["gw-a"]), try #require(zoneMean["gw-a"])).contains { abs($0 - $1) > 1 },
            "the shadowing should vary within a zone, or the test shows nothing")
        let averaged = ExactRadioMap.calibration(
            venue: venue, seed: 7, cellMetres: 0.5, created: 0, shadowing: .zoneMean)
        #expect(
            ExactRadioMap.yaml(averaged, seed: 7, shadowing: .zoneMean)
                .hasPrefix("# beacon-sim radio-map --seed 7 --shadowing zone-mean:"))
    }

    @Test func theHubsGeometryTakesEachZonesMeanOfTheExactMap() throws {
        let venue = try Self.venue()
        let grid = FloorGrid(venue: venue, reach: 0, cellSide: 0.5)
        var settings = InferenceSettings()
        settings.pathLossExponent = 3
        #expect(PositionMap.reach(settings: settings) > 25, "every cell of the 20 × 8 m venue within the hub's reach")
        let exact = try #require(
            ExactRadioMap.calibration(venue: venue, seed: 7, cellMetres: 0.5, created: 0).map?.levels)
        let map = ExactRadioMap.calibration(
            venue: venue, seed: 7, cellMetres: 0.5, created: 0, shadowing: .engineZoneMean, exponent: 3)
        let levels = try #require(map.map?.levels)
        for gateway in venue.gateways {
            let id = gateway.id.rawValue
            let (exactLevels, given) = (try #require(exact[id]), try #require(levels[id]))
            // The hub's geometry, written out: −59 dBm at 1 m, exponent 3 over the 3-D distance to a tag 1.2 m up,
            // and the light wall's published loss where the path crosses it.
            var hub: [Double] = []
            for cell in 0..<grid.count {
                let point = grid.centre(cell)
                let (dx, dy, dz) = (point.x - gateway.position.x, point.y - gateway.position.y, gateway.height - 1.2)
                let crossings = venue.walls.filter { Segment(point, gateway.position).intersects($0.segment) }
                hub.append(
                    -59 - 30 * log10(max(0.5, (dx * dx + dy * dy + dz * dz).squareRoot()))
                        - crossings.reduce(0) { $0 + $1.material.defaultAttenuation })
            }
            var sums: [Int: (difference: Double, cells: Int)] = [:]
            for cell in 0..<grid.count where Int(grid.zoneOfCell[cell]) < venue.zones.count {
                sums[Int(grid.zoneOfCell[cell]), default: (0, 0)].difference += exactLevels[cell] - hub[cell]
                sums[Int(grid.zoneOfCell[cell]), default: (0, 0)].cells += 1
            }
            #expect(sums.count == venue.zones.count)
            for cell in 0..<grid.count {
                let zone = Int(grid.zoneOfCell[cell])
                let shift = sums[zone].map { $0.difference / Double($0.cells) } ?? 0
                // 0.05 dB from each file's rounding.
                #expect(abs(given[cell] - hub[cell] - shift) <= 0.1, "\(id), cell \(cell), zone \(zone)")
            }
        }
        let otherExponent = try #require(
            ExactRadioMap.calibration(
                venue: venue, seed: 7, cellMetres: 0.5, created: 0, shadowing: .engineZoneMean, exponent: 2
            ).map?.levels["gw-a"])
        #expect(zip(otherExponent, try #require(levels["gw-a"])).contains { abs($0 - $1) > 1 })
        #expect(
            ExactRadioMap.yaml(map, seed: 7, shadowing: .engineZoneMean, exponent: 3)
                .hasPrefix("# beacon-sim radio-map --seed 7 --shadowing engine-zone-mean --exponent 3:"))
    }

    @Test func aRouteBecomesPointsWhereTheTagWas() throws {
        var calibrator = try Self.rowRoute()
        #expect(calibrator.place(at: 105).map { [$0.x, $0.y] } == [7, 4])
        #expect(calibrator.place(at: 115).map { [$0.x, $0.y] } == [12, 4])
        #expect(calibrator.place(at: 99) == nil && calibrator.place(at: 121) == nil)
        for tenth in stride(from: 1000, through: 1200, by: 5) {
            let t = Double(tenth) / 10
            calibrator.add(
                SightingLine(t: t, gateway: "gw-a", beacon: TestVenue.beacon, rssi: t < 110 ? -60 : -70, txPower: -59))
        }
        // Other beacons and times off the route are not used.
        calibrator.add(SightingLine(t: 105, gateway: "gw-a", beacon: "ibeacon:other:1:1", rssi: -40, txPower: -59))
        calibrator.add(SightingLine(t: 130, gateway: "gw-a", beacon: TestVenue.beacon, rssi: -40, txPower: -59))
        #expect(calibrator.used == 41)
        let points = try #require(calibrator.result(site: "row", created: 0).calibration.points)
        // Windows [100, 102), …, [118, 120), and the last reading at 120 alone.
        #expect(points.count == 11)
        #expect(points[0].x == 2.75 && points[0].y == 4, "the mean of 2, 2.5, 3 and 3.5")
        #expect(points[0].levels["gw-a"] == Calibration.Profile(mean: -60, sd: 0, heard: 1, samples: 4))
        #expect(points[6].x == 12 && points[6].levels["gw-a"]?.mean == -70)
    }

    /// The route gives each window the way the walker went; a pause gives none. The fit then takes the body out: a
    /// gateway straight behind the walker reads the body's whole loss low, one ahead none, against the average 1/π.
    @Test func theRoutesHeadingTakesTheWalkersBodyOut() throws {
        let venue = try TestVenue.venue()
        var calibrator = try Self.rowRoute()
        #expect(calibrator.place(at: 105)?.heading == 0)
        #expect(calibrator.place(at: 115).map { $0.heading == nil } == true)
        for tenth in stride(from: 1000, through: 1200, by: 5) {
            calibrator.add(
                SightingLine(t: Double(tenth) / 10, gateway: "gw-a", beacon: TestVenue.beacon, rssi: -60, txPower: -59))
        }
        let points = try #require(calibrator.result(site: "row", created: 0).calibration.points)
        #expect(points[0].heading == 0 && points[4].heading == 0)
        #expect(points[6].heading == nil && points[10].heading == nil)

        let map = PositionMap(
            venue: venue, settings: InferenceSettings(), grid: FloorGrid(venue: venue, reach: 1, cellSide: 0.5),
            exponent: 2)
        let gateway = venue.gateways[0].position  // gw-a at (10, 4)
        let levels = map.levelSteps.map { Float($0) / Float(ReadingNoise.stepsPerDB) }
        func residual(heading: Double?) throws -> Double {
            let point = Calibration.Point(
                x: 6, y: 4, levels: ["gw-a": Calibration.Profile(mean: -70, sd: 2, heard: 1, samples: 4)],
                heading: heading)
            // Far above sensitivity: nothing of the readings was cut, whichever way the walker faced.
            let samples = PositionMap.fitSamples(
                gateway: "gw-a", g: 0, position: gateway, points: [point], level: levels, grid: map.grid,
                referencePower: -59, bias: 0, bodyLossDB: 10, sensitivity: -120)
            return try #require(samples.first).residual
        }
        let average = try residual(heading: nil)
        // Walking west, away from gw-a: the body is wholly between.
        #expect(abs(try residual(heading: 180) - average - 10 * (1 - 1 / Double.pi)) < 1e-9)
        // Walking east, towards it: no body in the way.
        #expect(abs(try residual(heading: 0) - average + 10 / Double.pi) < 1e-9)
        // Walking north: the gateway is beside the walker.
        #expect(abs(try residual(heading: 90) - average + 10 / Double.pi) < 1e-9)
    }
}
