import BeaconConfig
import BeaconModel
import Simulator
import Testing

@testable import ZoneInference

/// Issue 22: a gateway whose venue entry says which way its antenna faces gets its front-to-back ratio from the links,
/// its gain straight ahead, and the `position` map shades its levels by the pattern.
@Suite struct LearnedAntennaTests {
    /// One 20 × 10 m room; gw-wall on the west wall facing east (+x), gw-mid in the middle hearing alike all round.
    static func venue() throws -> Venue {
        try VenueLoader.decode(
            """
            site: antenna
            zones:
              - { id: hall, rect: { x: 0, y: 0, width: 20, height: 10 } }
            doors:
              - { between: [outside, hall], at: [10, 0] }
            gateways:
              - { id: gw-wall, zone: hall, position: [0.2, 5], antenna: { facing: 0 } }
              - { id: gw-mid, zone: hall, position: [10, 5] }
            """, file: "antenna.yaml")
    }

    @Test func theMapShadesALearnedAntennaOffItsFacing() throws {
        let venue = try Self.venue()
        var settings = InferenceSettings()
        settings.method = .position
        let grid = FloorGrid(venue: venue, reach: 1, cellSide: 0.5)
        let plain = PositionMap(venue: venue, settings: settings, grid: grid, exponent: 2.2)
        let learned = PositionMap(
            venue: venue, settings: settings, grid: grid, exponent: 2.2,
            learned: LearnedRadio(gains: ["gw-wall": 2, "gw-mid": -2], antennas: ["gw-wall": 12]))
        let flat = PositionMap(
            venue: venue, settings: settings, grid: grid, exponent: 2.2,
            learned: LearnedRadio(gains: ["gw-wall": 2, "gw-mid": -2]))
        func change(_ map: PositionMap, _ g: Int, _ x: Double, _ y: Double) -> Double {
            let cell = grid.cell(containing: Point(x, y))!
            return Double(map.level(g, cell) - plain.level(g, cell))
        }
        // Straight ahead, the gain alone; across the room at an angle, part of the 12 dB; the gateway without an
        // antenna and the map without the learned pattern, the gain everywhere.
        #expect(abs(change(learned, 0, 15.2, 5.2) - 2) < 0.3)
        let ahead = change(learned, 0, 18.2, 5.2)
        let aside = change(learned, 0, 1.2, 9.7)
        #expect(abs(ahead - 2) < 0.3, "ahead \(ahead)")
        #expect(aside < 2 - 4 && aside > 2 - 12, "aside \(aside)")
        #expect(abs(change(learned, 1, 1.2, 9.7) + 2) < 0.1)
        #expect(abs(change(learned, 1, 18.2, 5.2) + 2) < 0.1)
        #expect(abs(change(flat, 0, 1.2, 9.7) - 2) < 0.1)
        #expect(abs(change(flat, 1, 1.2, 9.7) + 2) < 0.1)
    }

    /// From every link's exact mean with no shadowing, over training venues 13–24: each antenna's ratio comes back to
    /// within a few dB, and the gains of gateways with an antenna come back far better than from a fit that takes every
    /// gateway as hearing alike all round (which took their level towards the other gateways for their gain); still
    /// when the venue file's facings are 20° out.
    @Test func theLinksGiveAnAntennasRatioAndItsGainStraightAhead() throws {
        var withTerm: [Double] = []
        var without: [Double] = []
        var ratioErrors: [Double] = []
        var facingOff: [Double] = []
        for seed: UInt64 in 13...24 {
            var venue = try VenueLoader.decode(RandomVenue.generate(seed: seed).yaml, file: "random-\(seed).yaml")
            var rng = SeededGenerator(seed: seed &+ 77)
            for index in venue.gateways.indices {
                venue.gateways[index].gainOffset = Double.random(in: -6...6, using: &rng)
            }
            venue.radio.shadowingSigma = 0
            var radioRNG = SeededGenerator(seed: seed)
            let radio = RadioModel(venue: venue, using: &radioRNG)
            let links = LinkCalibrationTests.exactLinks(venue: venue, radio: radio)
            var flat = LinkCalibration.Settings()
            flat.fitsAntennas = false
            let exponent = RadioSettings().pathLossExponent
            let fitted = try #require(LinkCalibration.solve(venue: venue, links: links, nominalExponent: exponent))
            let plain = try #require(
                LinkCalibration.solve(venue: venue, links: links, nominalExponent: exponent, settings: flat))
            #expect(plain.antennaFrontToBack.isEmpty)
            // An installer's facing, off by up to 20°.
            var guessed = venue
            var facingRNG = SeededGenerator(seed: seed &+ 999)
            for index in guessed.gateways.indices where guessed.gateways[index].antenna != nil {
                guessed.gateways[index].antenna!.facing += Double.random(in: -20...20, using: &facingRNG)
            }
            let roughly = try #require(
                LinkCalibration.solve(venue: guessed, links: links, nominalExponent: exponent))
            let mean = radio.gains.values.reduce(0, +) / Double(radio.gains.count)
            for gateway in venue.gateways {
                guard let antenna = gateway.antenna, antenna.frontToBackDB > 0 else { continue }
                let truth = radio.gains[gateway.id]! - mean
                withTerm.append(abs(try #require(fitted.receiveGains[gateway.id]).value - truth))
                without.append(abs(try #require(plain.receiveGains[gateway.id]).value - truth))
                facingOff.append(abs(try #require(roughly.receiveGains[gateway.id]).value - truth))
                let ratio = try #require(fitted.antennaFrontToBack[gateway.id])
                ratioErrors.append(abs(ratio.value - antenna.frontToBackDB))
            }
        }
        func median(_ values: [Double]) -> Double { values.sorted()[values.count / 2] }
        print(
            "antenna gateways, exact link means without shadowing, training seeds 13-24: \(withTerm.count) gateways, "
                + "gain error median \(median(withTerm)) dB with the antenna term, \(median(facingOff)) dB with facings "
                + "off by up to 20°, \(median(without)) dB without; front-to-back error median \(median(ratioErrors)) dB"
        )
        #expect(withTerm.count >= 10)
        #expect(median(withTerm) < 0.6 * median(without))
        #expect(median(facingOff) < 0.75 * median(without))
        // Not to the decibel even so: the fit takes one slope and the walls near their materials' defaults, and some
        // venues have two slopes and walls of other losses (1.0 dB gain and 2.1 dB ratio errors when written).
        #expect(median(ratioErrors) < 3)
    }
}
