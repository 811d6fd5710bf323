import BeaconModel

#if canImport(Glibc)
    import Glibc
#endif

/// A reading's noise, tabulated: the log-probability of hearing an integer RSSI at a given offset from the mean level,
/// and of missing an advertisement at a given margin below sensitivity. The engine's tables come from its own
/// `ObservationModel`; `init(radio:extraVariance:walking:)` makes the simulator's (per-packet Gaussian noise plus slow
/// fading, the deep-fade mixture, packet loss and sensitivity, and for walking carriers the body loss as a mixture over
/// the angle between heading and gateway) for the position oracle, and for the calibration fit's `HeardMean`.
package struct ReadingNoise: Sendable {
    /// log P(heard with RSSI k) for k − mean = `lower` + i·`step`.
    package let heard: [Float]
    /// log P(not heard) for sensitivity − mean = `lower` + i·`step`.
    package let missed: [Float]
    package static let lower = -120.0
    package static let upper = 80.0
    package static let step = 0.1
    /// The tables' last index, (`upper` − `lower`) / `step`, and their steps per dB, 1 / `step`: written out, because
    /// a constant computed at first use costs a lazy-initialisation check on every read, and the likelihood's inner
    /// loop reads them per cell (a test keeps them equal to the computed values).
    package static let lastIndex = 2000
    package static let stepsPerDB = 10

    /// `offset` dB in whole table steps from `lower`: for the integer path, where a level stored in steps per dB
    /// (`PositionMap.levelSteps`) is subtracted and `index(steps:)` gives the entry.
    package static func steps(_ offset: Float) -> Int32 {
        Int32(((offset - Float(lower)) * Float(stepsPerDB)).rounded())
    }

    /// The table index `steps` from `lower` (clamped to the tables).
    @inline(__always)
    package static func index(steps: Int32) -> Int { Int(min(max(steps, 0), Int32(lastIndex))) }

    /// A sliver of probability for anything: the filter must survive a level no component explains. `heard` gives each
    /// RSSI at least `outlierFloor`.
    package static let outlier = 1e-5
    package static let outlierFloor = outlier / 100

    /// Tables made elsewhere: by an `ObservationModel` for the engine, by the simulator's radio for the oracle.
    package init(heard: [Float], missed: [Float]) {
        precondition(heard.count == Self.lastIndex + 1 && missed.count == Self.lastIndex + 1, "a table of every step")
        self.heard = heard
        self.missed = missed
    }

    /// `extraVariance` is model error the filter should expect (dB²): the cell's extent for the exact map, and the
    /// shadowing, gain and tag-power spreads for the nominal model. `walking`: the carrier's body may be in the way.
    package init(radio: RadioSettings, extraVariance: Double, walking: Bool) {
        // Rounding to integer dBm alone is a variance of 1/12; a floor keeps a noiseless radio's likelihood finite.
        let sigma = max(
            (radio.noiseSigma * radio.noiseSigma + radio.fadingSigma * radio.fadingSigma + extraVariance)
                .squareRoot(), 0.5)
        // Components (weight, mean shift): body factor max(0, −cos θ) for θ uniform, times deep fade or not.
        var bodies: [(weight: Double, loss: Double)] = [(1, 0)]
        if walking && radio.bodyLossDB > 0 {
            let slices = 8
            bodies = [(0.5, 0)]
            for k in 0..<slices {
                let theta = Double.pi / 2 + Double.pi * (Double(k) + 0.5) / Double(slices)
                bodies.append((0.5 / Double(slices), radio.bodyLossDB * abs(cos(theta))))
            }
        }
        var components: [(weight: Double, shift: Double)] = []
        for body in bodies {
            components.append((body.weight * (1 - radio.deepFadeShare), -body.loss))
            if radio.deepFadeShare > 0 {
                components.append((body.weight * radio.deepFadeShare, -body.loss - radio.deepFadeDB))
            }
        }
        func cdf(_ x: Double) -> Double {
            components.reduce(0) { $0 + $1.weight * 0.5 * erfc(-(x - $1.shift) / (sigma * 2.0.squareRoot())) }
        }
        let count = Int(((Self.upper - Self.lower) / Self.step).rounded()) + 1
        let loss = radio.packetLoss
        let outlier = Self.outlier
        var heard = [Float](repeating: 0, count: count)
        var missed = [Float](repeating: 0, count: count)
        for i in 0..<count {
            let x = Self.lower + Double(i) * Self.step
            let p = (1 - loss) * (cdf(x + 0.5) - cdf(x - 0.5))
            heard[i] = Float(log(p * (1 - outlier) + Self.outlierFloor))
            missed[i] = Float(log(min(max(loss + (1 - loss) * cdf(x), outlier), 1)))
        }
        self.heard = heard
        self.missed = missed
    }

    /// Mean of a heard reading's offset from the mean level (negative: fades and bodies take signal away), dB.
    package var meanOffset: Float {
        var total = 0.0
        var weighted = 0.0
        for (i, value) in heard.enumerated() {
            let p = exp(Double(value))
            total += p
            weighted += p * (Self.lower + Double(i) * Self.step)
        }
        return total > 0 ? Float(weighted / total) : 0
    }

    /// Index into the tables for an offset in dB (clamped to the tabulated range).
    @inline(__always)
    package static func index(_ offset: Float) -> Int {
        // Truncating a non-negative value half a step up rounds it (`rounded()` is a libm call, 7 % of the engine).
        let position = (offset - Float(lower)) / Float(step)
        return Int(min(max(position, 0), Float((upper - lower) / step)) + 0.5)
    }
}
