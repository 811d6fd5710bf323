import BeaconConfig
import BeaconModel
import Foundation
import Simulator
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// The radio model's statistics must match its parameters: a regression over many receptions recovers the path-loss
/// slope and the combined spread; the shadowing and fading processes have their σ and correlation lengths.
@Suite struct RadioModelTests {
    /// A hall with one gateway at the tags' height (so distances are flat); `gateway` adds keys to the gateway.
    func venue(radio: String = "", walls: String = "", gateway: String = "") throws -> Venue {
        try VenueLoader.decode(
            """
            site: lab
            zones:
              - { id: hall, rect: { x: -30, y: -30, width: 60, height: 60 } }
            gateways:
              - { id: gw, zone: hall, position: [0, 0], height: 1.2\(gateway) }
            \(walls)
            radio:
              gatewayGainSigma: 0
            \(radio)
            """, file: "lab.yaml")
    }

    func fit(_ xs: [Double], _ ys: [Double]) -> (slope: Double, intercept: Double, residualSigma: Double) {
        let n = Double(xs.count)
        let mx = xs.reduce(0, +) / n
        let my = ys.reduce(0, +) / n
        let sxy = zip(xs, ys).map { ($0 - mx) * ($1 - my) }.reduce(0, +)
        let sxx = xs.map { ($0 - mx) * ($0 - mx) }.reduce(0, +)
        let slope = sxy / sxx
        let intercept = my - slope * mx
        let residual = zip(xs, ys).map { $1 - (intercept + slope * $0) }
        return (slope, intercept, (residual.map { $0 * $0 }.reduce(0, +) / (n - 2)).squareRoot())
    }

    @Test func fittedPathLossAndSpreadMatchTheParameters() throws {
        let lab = try venue(radio: "  packetLoss: 0\n  sensitivity: -120")
        var rng = SeededGenerator(seed: 1)
        var xs: [Double] = []
        var ys: [Double] = []
        // One shadowing realisation is one draw: receptions near the gateway all see the same local patch. Average
        // over many independent realisations, as over many gateways.
        for _ in 0..<40 {
            let model = RadioModel(venue: lab, using: &rng)
            for _ in 0..<750 {
                let distance = pow(10, Double.random(in: 0...1.4, using: &rng))  // 1 to 25 m
                let angle = Double.random(in: 0..<(2 * Double.pi), using: &rng)
                let position = Point(distance * cos(angle), distance * sin(angle))
                let mean = try #require(model.meanRSSI(tagP0: -59, at: position, gateway: "gw", bodyFactor: 0))
                let fading = FadingProcess(sigma: lab.radio.fadingSigma, tau: lab.radio.fadingTauSeconds, using: &rng)
                    .value
                let rssi = try #require(model.receive(mean: mean, fading: fading, using: &rng))
                xs.append(10 * log10(distance))
                ys.append(Double(rssi))
            }
        }
        let result = fit(xs, ys)
        let settings = lab.radio
        // Noise is a mixture: σ² + p(1−p)·deep², with its mean p·deep lower.
        let noiseVariance =
            settings.noiseSigma * settings.noiseSigma + settings.deepFadeShare * (1 - settings.deepFadeShare)
            * settings.deepFadeDB * settings.deepFadeDB
        let expectedSigma =
            (settings.shadowingSigma * settings.shadowingSigma + settings.fadingSigma * settings.fadingSigma
            + noiseVariance).squareRoot()
        #expect(abs(result.slope + settings.pathLossExponent) < 0.1, "slope \(result.slope)")
        #expect(abs(result.residualSigma - expectedSigma) < 0.4, "σ \(result.residualSigma) vs \(expectedSigma)")
        // The intercept carries the shadowing near the gateway, one draw per realisation: three standard errors.
        let interceptTolerance = 3 * settings.shadowingSigma / 40.0.squareRoot()
        #expect(abs(result.intercept - (-59 - settings.deepFadeShare * settings.deepFadeDB)) < interceptTolerance)
    }

    @Test func shadowingHasItsSigmaAndCorrelationLength() {
        var rng = SeededGenerator(seed: 2)
        let field = ShadowingField(
            covering: (Point(0, 0), Point(120, 120)), sigma: 4, correlation: 2, using: &rng)
        func correlation(at lag: Double) -> Double {
            var a: [Double] = []
            var b: [Double] = []
            for _ in 0..<8_000 {
                let p = Point(Double.random(in: 10...110, using: &rng), Double.random(in: 10...110, using: &rng))
                a.append(field.value(at: p))
                b.append(field.value(at: Point(p.x + lag, p.y)))
            }
            let ma = a.reduce(0, +) / Double(a.count)
            let mb = b.reduce(0, +) / Double(b.count)
            let cov = zip(a, b).map { ($0 - ma) * ($1 - mb) }.reduce(0, +)
            let va = a.map { ($0 - ma) * ($0 - ma) }.reduce(0, +)
            let vb = b.map { ($0 - mb) * ($0 - mb) }.reduce(0, +)
            return cov / (va * vb).squareRoot()
        }
        let samples = (0..<8_000).map { _ in
            field.value(at: Point(Double.random(in: 10...110, using: &rng), Double.random(in: 10...110, using: &rng)))
        }
        let mean = samples.reduce(0, +) / Double(samples.count)
        let sigma = (samples.map { ($0 - mean) * ($0 - mean) }.reduce(0, +) / Double(samples.count)).squareRoot()
        #expect(abs(sigma - 4) < 0.5, "σ \(sigma)")
        #expect(correlation(at: 0.5) > 0.8)
        #expect((0.2...0.6).contains(correlation(at: 2)), "ρ(2 m) \(correlation(at: 2))")
        #expect(abs(correlation(at: 10)) < 0.15)
    }

    @Test func fadingHasItsSigmaAndTimeConstant() {
        var rng = SeededGenerator(seed: 3)
        var fading = FadingProcess(sigma: 2, tau: 5, using: &rng)
        let series = (0..<200_000).map { _ in fading.advance(by: 0.1, using: &rng) }
        let mean = series.reduce(0, +) / Double(series.count)
        let variance = series.map { ($0 - mean) * ($0 - mean) }.reduce(0, +) / Double(series.count)
        let lag = 50  // τ = 5 s at 0.1 s steps
        let autocovariance =
            zip(series, series.dropFirst(lag)).map { ($0 - mean) * ($1 - mean) }.reduce(0, +)
            / Double(series.count - lag)
        #expect(abs(variance.squareRoot() - 2) < 0.15)
        #expect(abs(autocovariance / variance - exp(-1)) < 0.06)
    }

    @Test func lossAndSensitivityDropReceptions() throws {
        let lab = try venue()
        var rng = SeededGenerator(seed: 4)
        let model = RadioModel(venue: lab, using: &rng)
        let heard = (0..<20_000).filter { _ in model.receive(mean: -50, fading: 0, using: &rng) != nil }.count
        #expect(abs(Double(20_000 - heard) / 20_000 - lab.radio.packetLoss) < 0.01)
        #expect((0..<2_000).allSatisfy { _ in model.receive(mean: -130, fading: 0, using: &rng) == nil })
    }

    @Test func aWallCostsExactlyItsAttenuation() throws {
        let open = try venue()
        let walled = try venue(walls: "walls:\n  - { from: [3, -5], to: [3, 5], material: heavy, attenuation: 9 }")
        var rngA = SeededGenerator(seed: 5)
        var rngB = SeededGenerator(seed: 5)
        let a = RadioModel(venue: open, using: &rngA)
        let b = RadioModel(venue: walled, using: &rngB)
        let behind = Point(6, 0)
        let inFront = Point(-6, 0)
        let openBehind = try #require(a.meanRSSI(tagP0: -59, at: behind, gateway: "gw", bodyFactor: 0))
        let walledBehind = try #require(b.meanRSSI(tagP0: -59, at: behind, gateway: "gw", bodyFactor: 0))
        #expect(abs(openBehind - walledBehind - 9) < 1e-9)
        #expect(
            a.meanRSSI(tagP0: -59, at: inFront, gateway: "gw", bodyFactor: 0)
                == b.meanRSSI(tagP0: -59, at: inFront, gateway: "gw", bodyFactor: 0))
        // The carrier's body in the way costs bodyLossDB.
        let blocked = try #require(a.meanRSSI(tagP0: -59, at: behind, gateway: "gw", bodyFactor: 1))
        #expect(abs(openBehind - blocked - open.radio.bodyLossDB) < 1e-9)
    }

    @Test func twoSlopesMeetAtTheBreakpointAndFallFasterBeyondIt() throws {
        let single = try venue()
        let double = try venue(radio: "  breakpointMetres: 5\n  farPathLossExponent: 3.5")
        var rngA = SeededGenerator(seed: 6)
        var rngB = SeededGenerator(seed: 6)
        let a = RadioModel(venue: single, using: &rngA)
        let b = RadioModel(venue: double, using: &rngB)
        // Up to the breakpoint the two venues are one (same seed, same shadowing realisation).
        for distance in [0.5, 2, 4.99, 5] {
            let point = Point(distance, 0)
            #expect(
                a.meanRSSI(tagP0: -59, at: point, gateway: "gw", bodyFactor: 0)
                    == b.meanRSSI(tagP0: -59, at: point, gateway: "gw", bodyFactor: 0))
        }
        // Continuous at the breakpoint, then 35 dB a decade instead of 20.
        #expect(abs(b.pathLoss(distance: 5 + 1e-9) - b.pathLoss(distance: 5 - 1e-9)) < 1e-6)
        #expect(abs(b.pathLoss(distance: 50) - b.pathLoss(distance: 5) - 35) < 1e-9)
        #expect(abs(a.pathLoss(distance: 50) - a.pathLoss(distance: 5) - 20) < 1e-9)
        let far = Point(0, 20)
        let lost =
            try #require(a.meanRSSI(tagP0: -59, at: far, gateway: "gw", bodyFactor: 0))
            - #require(b.meanRSSI(tagP0: -59, at: far, gateway: "gw", bodyFactor: 0))
        #expect(abs(lost - 15 * log10(4)) < 1e-9)
    }

    @Test func anAntennaLosesNothingInFrontAndItsFrontToBackBehind() throws {
        let plain = try venue()
        let directed = try venue(gateway: ", antenna: { facing: 90, frontToBackDB: 12 }")
        var rngA = SeededGenerator(seed: 7)
        var rngB = SeededGenerator(seed: 7)
        let a = RadioModel(venue: plain, using: &rngA)
        let b = RadioModel(venue: directed, using: &rngB)
        func difference(_ point: Point) throws -> Double {
            try #require(b.meanRSSI(tagP0: -59, at: point, gateway: "gw", bodyFactor: 0))
                - #require(a.meanRSSI(tagP0: -59, at: point, gateway: "gw", bodyFactor: 0))
        }
        // Facing +y: nothing in front, half the front-to-back ratio to the side, all of it behind.
        #expect(abs(try difference(Point(0, 10))) < 1e-9)
        #expect(abs(try difference(Point(10, 0)) + 6) < 1e-9)
        #expect(abs(try difference(Point(-3, 0)) + 6) < 1e-9)
        #expect(abs(try difference(Point(0, -10)) + 12) < 1e-9)
        #expect(try difference(Point(5, 5)) > difference(Point(5, -5)))
    }

    @Test func theSameSeedGivesTheSameRadio() throws {
        let museum = try VenueLoader.load(
            from: VenueLoaderPaths.root.appendingPathComponent("config/venues/museum.yaml").path)
        var one = SeededGenerator(seed: 42)
        var two = SeededGenerator(seed: 42)
        var three = SeededGenerator(seed: 43)
        let a = RadioModel(venue: museum, using: &one)
        let b = RadioModel(venue: museum, using: &two)
        let c = RadioModel(venue: museum, using: &three)
        #expect(a.gains == b.gains)
        #expect(a.gains != c.gains)
        let point = Point(14, 11)
        #expect(
            a.meanRSSI(tagP0: -59, at: point, gateway: "gw-rome", bodyFactor: 0)
                == b.meanRSSI(tagP0: -59, at: point, gateway: "gw-rome", bodyFactor: 0))
    }
}

enum VenueLoaderPaths {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()
}
