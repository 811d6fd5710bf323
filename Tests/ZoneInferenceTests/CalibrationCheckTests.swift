import BeaconConfig
import BeaconModel
import Foundation
import Simulator
import Testing

@testable import ZoneInference

/// `beacon-hub calibrate`'s expected accuracy per zone: which seconds of a walk are scored, that each fold's
/// calibration never sees its own fold, and that on a venue whose gateways read far off the model the cross-validated
/// figure shows what calibration gains.
@Suite struct CalibrationCheckTests {
    /// A walk of two stops in the row venue, a reading a second from each gateway (the tag's own room's the loudest):
    /// scored are the stops' seconds less the settling seconds and the warm-up, each in its stop's zone.
    @Test func aPlanOfStopsScoresTheStopsSecondsInTheirZones() throws {
        let venue = try TestVenue.venue()
        let stops = [
            Calibrator.Stop(zone: "a", from: 100, to: 160), Calibrator.Stop(zone: "b", from: 170, to: 230),
        ]
        var sightings: [SightingLine] = []
        for tenth in stride(from: 1000, to: 2300, by: 5) {
            let t = Double(tenth) / 10
            let inA = t < 165
            sightings.append(
                SightingLine(t: t, gateway: "gw-a", beacon: TestVenue.beacon, rssi: inA ? -62 : -85, txPower: -59))
            sightings.append(
                SightingLine(t: t, gateway: "gw-b", beacon: TestVenue.beacon, rssi: inA ? -85 : -62, txPower: -59))
            // Another beacon's readings are not the walk's.
            sightings.append(
                SightingLine(t: t, gateway: "gw-c", beacon: "ibeacon:other:1:1", rssi: -40, txPower: -59))
        }
        let check = try #require(
            CalibrationCheck.run(
                venue: venue, settings: InferenceSettings(), beacon: TestVenue.beacon.uppercased(), stops: stops,
                route: [], sightings: sightings.shuffled(), site: "row"))
        // a: whole seconds 105 (first reading + 5 s warm-up) … 157 (stop end − 2 s settling, exclusive); b: 172 … 227.
        #expect(check.zones.map(\.zone) == ["a", "b"])
        #expect(check.zones.map(\.seconds) == [53, 56])
        // Readings this clear are placed right with and without calibration (the move to b, at 165 s, is confirmed
        // before b's first scored second).
        #expect(check.zones.map(\.correctBefore) == [53, 56] && check.zones.map(\.correctAfter) == [53, 56])
        #expect(check.before == 1 && check.after == 1)
        // Each stop reading (2 gateways × 2 a second, settling excluded) is in exactly one fold, so the five folds'
        // calibrations together saw each of them four times.
        let used = (56 + 56) * 2 * 2
        #expect(check.sightingsPerFold.count == 5)
        #expect(check.sightingsPerFold.reduce(0, +) == 4 * used)
        #expect(check.sightingsPerFold.allSatisfy { $0 < used && $0 > used / 2 })
    }

    /// Four rooms in a row whose gateways read 8 dB too loud and too quiet by turns: uncalibrated, the loud rooms pull
    /// the tag in; a strolling walk's calibration — scored only on seconds it did not learn from — corrects it.
    @Test func onAVenueOffTheModelTheHeldOutSecondsShowTheGain() throws {
        let venue = try VenueLoader.decode(
            """
            site: lab
            zones:
              - { id: a, rect: { x: 0, y: 0, width: 8, height: 8 } }
              - { id: b, rect: { x: 8, y: 0, width: 8, height: 8 } }
              - { id: c, rect: { x: 16, y: 0, width: 8, height: 8 } }
              - { id: d, rect: { x: 24, y: 0, width: 8, height: 8 } }
            doors:
              - { between: [outside, a], at: [4, 0] }
              - { between: [a, b], at: [8, 4] }
              - { between: [b, c], at: [16, 4] }
              - { between: [c, d], at: [24, 4] }
            gateways:
              - { id: gw-a, zone: a, position: [4, 4], height: 2, gainOffset: 8 }
              - { id: gw-b, zone: b, position: [12, 4], height: 2, gainOffset: -8 }
              - { id: gw-c, zone: c, position: [20, 4], height: 2, gainOffset: 8 }
              - { id: gw-d, zone: d, position: [28, 4], height: 2, gainOffset: -8 }
            radio:
              pathLossExponent: 2.2
              shadowingSigma: 0
            """, file: "lab.yaml")
        let walk = try SimulatedWalk(venue: venue, seed: 7, dwell: 60)
        var settings = InferenceSettings()
        settings.method = .position
        let check = try #require(
            CalibrationCheck.run(
                venue: venue, settings: settings, beacon: walk.plan.beacon, stops: walk.plan.stops,
                route: walk.plan.route, sightings: walk.sightings, site: "lab"))
        #expect(check.zones.map(\.zone) == ["a", "b", "c", "d"])
        #expect(check.zones.allSatisfy { $0.seconds >= 50 })
        // When written: a 53 → 53, b 0 → 38, c 56 → 44, d 0 → 42 of 53 / 56 / 56 / 56 s (49 → 80 %): the quiet rooms
        // are found, the loud one loses a little of what its loudness gave it.
        #expect(check.after >= check.before + 0.2, "before \(check.before), after \(check.after): \(check.zones)")
        #expect(check.after >= 0.7, "\(check.zones)")
        for quiet in [1, 3] { #expect(check.zones[quiet].after >= check.zones[quiet].before + 0.5, "\(check.zones)") }
    }
}
