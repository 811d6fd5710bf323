import BeaconModel
import Testing

@testable import ZoneInference

#if canImport(Glibc)
    import Glibc
#endif

/// The `position` method's observation model: its tables against exact sums, and the engine choosing the spread of the
/// readings it is given.
@Suite struct ObservationModelTests {
    /// Every integer reading at some offset from the level, heard or lost: the probabilities sum to one.
    @Test func aModelsTablesAreAProbabilityOfEveryReading() {
        for model in [
            ObservationModel(sigma: 3.5, degrees: 12, loss: 0.15), ObservationModel(sigma: 9, degrees: 3, loss: 0.4),
        ] {
            let noise = model.tables
            // A level of −70.3 dBm far above a sensitivity of −120: nothing is cut off, only lost.
            var heard = 0.0
            for rssi in -160 ... -10 { heard += exp(Double(noise.heard[ReadingNoise.index(Float(rssi) + 70.3)])) }
            #expect(abs(heard - (1 - model.loss)) < 0.003, "\(model): heard \(heard)")
            // Far below sensitivity every advertisement is missed; far above, only the lost ones.
            #expect(abs(exp(Double(noise.missed[ReadingNoise.index(60)])) - 1) < 0.005)
            #expect(abs(exp(Double(noise.missed[ReadingNoise.index(-60)])) - model.loss) < 0.005)
            // At the spread's centre half the advertisements that are not lost fall below it.
            let atLevel = exp(Double(noise.missed[ReadingNoise.index(Float(model.shift))]))
            #expect(abs(atLevel - (model.loss + (1 - model.loss) / 2)) < 0.01, "\(model): \(atLevel)")
        }
    }

    /// Heavy tails: a reading 25 dB off the level costs a cell far less under 3 degrees of freedom than under 30.
    @Test func heavyTailsForgiveAFarReading() {
        let heavy = ObservationModel(sigma: 5, degrees: 3, loss: 0.15).tables
        let light = ObservationModel(sigma: 5, degrees: 30, loss: 0.15).tables
        let far = ReadingNoise.index(Float(-25 + ObservationModel.typicalShift))
        #expect(heavy.heard[far] - light.heard[far] > 2)
        // Near the level the lighter tails hold more.
        let centre = ReadingNoise.index(Float(ObservationModel.typicalShift))
        #expect(light.heard[centre] > heavy.heard[centre])
    }

    /// A tag walking through the three rooms, its levels from the engine's own law at the start exponent, with noise
    /// of a known spread: the engine takes a narrow model for quiet readings and a wide one for noisy readings.
    @Test(arguments: [(2.0, 0.0...5.0), (11.0, 9.0...12.0)])
    func theReadingsChooseTheSpread(sigma: Double, chosen: ClosedRange<Double>) throws {
        var settings = InferenceSettings()
        settings.method = .position
        settings.learnsExponent = false
        settings.learnsNoise = true
        var driver = Driver(engine: try TestVenue.engine(settings: settings))
        let start = try #require(driver.engine.positionNoise)
        #expect(!chosen.contains(start.sigma), "the test starts elsewhere than it expects to end")
        let gateways: [(GatewayID, Point)] = [("gw-a", Point(10, 4)), ("gw-b", Point(30, 4)), ("gw-c", Point(50, 4))]
        // A fixed sequence of Gaussian draws (Box–Muller over a linear congruential generator).
        var state: UInt64 = 0x5EED
        func uniform() -> Double {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return (Double(state >> 11) + 0.5) / Double(1 << 53)
        }
        func gaussian() -> Double { (-2 * log(uniform())).squareRoot() * cos(2 * Double.pi * uniform()) }
        let exponent = settings.pathLossExponent
        for second in 0..<900 {
            let x = 2 + 56 * (0.5 - 0.5 * cos(Double(second) / 900 * 2 * Double.pi * 2))
            let t = Double(second)
            driver.advance(to: t)
            for (gateway, position) in gateways {
                let distance = max(((x - position.x) * (x - position.x) + 0.64 + 1).squareRoot(), 0.5)
                let rssi = -59 - 10 * exponent * log10(distance) + sigma * gaussian()
                guard rssi > -95 else { continue }
                driver.engine.ingest(
                    SightingLine(
                        t: t, gateway: gateway, beacon: TestVenue.beacon, rssi: Int(rssi.rounded()), txPower: -59))
            }
        }
        let model = try #require(driver.engine.positionNoise)
        #expect(chosen.contains(model.sigma), "readings of σ \(sigma) dB chose \(model)")
    }

    /// A gateway deaf below −88 dBm beside two that hear down to −95: its sensitivity is taken from its readings, the
    /// others' stay where the settings put them.
    @Test func aDeafGatewaysSensitivityComesFromItsReadings() throws {
        var settings = InferenceSettings()
        settings.method = .position
        var driver = Driver(engine: try TestVenue.engine(settings: settings))
        let gateways: [(GatewayID, Point)] = [("gw-a", Point(10, 4)), ("gw-b", Point(30, 4)), ("gw-c", Point(50, 4))]
        // Four advertisements a second for 20 minutes: gw-c hears well over the 1,000 readings the engine waits for.
        for step in 0..<4800 {
            let t = Double(step) / 4
            let x = 2 + 56 * (0.5 - 0.5 * cos(t / 1200 * 2 * Double.pi * 2))
            driver.advance(to: t)
            for (gateway, position) in gateways {
                let distance = max(((x - position.x) * (x - position.x) + 0.64 + 1).squareRoot(), 0.5)
                let rssi = -59 - 30 * log10(distance) + Double([0, 2, -1, 3, -2, 1, -3][step % 7])
                guard rssi > (gateway == "gw-c" ? -88 : -95) else { continue }
                driver.engine.ingest(
                    SightingLine(
                        t: t, gateway: gateway, beacon: TestVenue.beacon, rssi: Int(rssi.rounded()), txPower: -59))
            }
        }
        let sensitivities = driver.engine.positionSensitivities
        let deaf = try #require(sensitivities["gw-c"])
        #expect(deaf > -89 && deaf < -86, "gw-c: \(deaf)")
        // A fit of the gateways' links rebuilds the maps: what the readings taught stays.
        driver.engine.apply(LearnedRadio(gains: ["gw-a": 1.5]))
        #expect(driver.engine.positionSensitivities["gw-c"] == deaf)
        // The others read down to the settings' sensitivity, a wobble short of it at most.
        for gateway: GatewayID in ["gw-a", "gw-b"] {
            let value = try #require(sensitivities[gateway])
            #expect(value >= settings.sensitivity && value <= settings.sensitivity + 2, "\(gateway): \(value)")
        }
    }
}
