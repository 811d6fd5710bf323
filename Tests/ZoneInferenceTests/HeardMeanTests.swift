import BeaconModel
import Simulator
import Testing

@testable import ZoneInference

/// Near sensitivity a gateway hears only the readings that fade up: `HeardMean` takes their mean back to the mean
/// without the cut, and the calibration's fit uses weak links that way.
@Suite struct HeardMeanTests {
    /// The radio's default reading noise for a tag whose carrier's body is not in the way, drawn: the mean of the
    /// readings at or above sensitivity, of a link `margin` dB over it.
    static func heardMean(margin: Double, sensitivity: Double, draws: Int = 200_000) -> Double {
        let radio = RadioSettings()
        let sigma = (radio.noiseSigma * radio.noiseSigma + radio.fadingSigma * radio.fadingSigma).squareRoot()
        var generator = SeededGenerator(seed: 7)
        var total = 0.0
        var heard = 0
        for _ in 0..<draws {
            var reading = sensitivity + margin + sigma * generator.gaussian()
            if Double.random(in: 0..<1, using: &generator) < radio.deepFadeShare { reading -= radio.deepFadeDB }
            guard reading >= sensitivity else { continue }
            total += reading
            heard += 1
        }
        return total / Double(heard)
    }

    /// The engine's spread of a reading is its own (nearly Gaussian, 4 dB), not the simulator's (Gaussian noise and
    /// fading with a share of deep fades): on the simulator's readings the cut comes back to within half a dB.
    @Test(arguments: [-3.0, 0.0, 2.0, 5.0, 10.0])
    func theCutIsTakenBack(margin: Double) {
        let radio = RadioSettings()
        let mean = Self.heardMean(margin: margin, sensitivity: -95)
        // Without the cut the readings would average the level less the deep fades' share.
        let uncut = -95 + margin - radio.deepFadeShare * radio.deepFadeDB
        let excess = HeardMean.facing.excess(heardMean: mean, sensitivity: -95)
        #expect(abs(mean - excess - uncut) < 0.5, "heard \(mean), excess \(excess), uncut \(uncut)")
        // Close to sensitivity the cut matters; far above it, it does not.
        if margin <= 2 { #expect(excess > 1.5) }
    }

    @Test func farAboveSensitivityNothingIsTakenAndWeakerMeansLoseMore() {
        for table in [HeardMean.facing, HeardMean.turning] {
            #expect(table.excess(heardMean: -40, sensitivity: -95) == 0)
            #expect(table.excess(heardMean: -60, sensitivity: -95) < 0.01)
            let excesses = stride(from: -94.0, through: -70, by: 1).map {
                table.excess(heardMean: $0, sensitivity: -95)
            }
            #expect(zip(excesses, excesses.dropFirst()).allSatisfy { $0 >= $1 })
        }
    }

    @Test func aWeakLinkTeachesTheFitLessThanItsHeardMean() throws {
        let venue = try TestVenue.venue()
        let map = PositionMap(
            venue: venue, settings: InferenceSettings(), grid: FloorGrid(venue: venue, reach: 1, cellSide: 0.5),
            exponent: 2)
        let levels = map.levelSteps.map { Float($0) / Float(ReadingNoise.stepsPerDB) }
        func residual(sensitivity: Double) throws -> Double {
            // 8 m from gw-a, 4 dB over sensitivity, heard in half the seconds: it teaches (it used to be left out).
            let point = Calibration.Point(
                x: 2, y: 4, levels: ["gw-a": Calibration.Profile(mean: -91, sd: 2, heard: 0.5, samples: 4)])
            let samples = PositionMap.fitSamples(
                gateway: "gw-a", g: 0, position: venue.gateways[0].position, points: [point], level: levels,
                grid: map.grid, referencePower: -59, bias: 0, bodyLossDB: 10, sensitivity: sensitivity)
            return try #require(samples.first).residual
        }
        // The same mean far above sensitivity is taken as heard; near it, as less than heard.
        let uncut = try residual(sensitivity: -130)
        let cut = try residual(sensitivity: -95)
        #expect(uncut > -20 && cut > -20)
        #expect(cut < uncut - 1 && cut > uncut - 10, "near sensitivity \(cut), far above it \(uncut)")
    }
}
