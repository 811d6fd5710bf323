import BeaconModel
import ZoneInference

#if canImport(Glibc)
    import Glibc
#endif

/// The simulator's own radio as noise tables, for the position oracle (which knows the radio the venue was drawn with):
/// per-packet Gaussian noise plus slow fading, the deep-fade mixture, packet loss and sensitivity, and for walking
/// carriers the body loss as a mixture over the angle between heading and gateway. The engine weighs readings with its
/// own `ObservationModel` and never sees these (`scripts/check-engine-model.sh`).
extension ReadingNoise {
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
        let count = Int(((ReadingNoise.upper - ReadingNoise.lower) / ReadingNoise.step).rounded()) + 1
        let loss = radio.packetLoss
        let outlier = ReadingNoise.outlier
        var heard = [Float](repeating: 0, count: count)
        var missed = [Float](repeating: 0, count: count)
        for i in 0..<count {
            let x = ReadingNoise.lower + Double(i) * ReadingNoise.step
            let p = (1 - loss) * (cdf(x + 0.5) - cdf(x - 0.5))
            heard[i] = Float(log(p * (1 - outlier) + ReadingNoise.outlierFloor))
            missed[i] = Float(log(min(max(loss + (1 - loss) * cdf(x), outlier), 1)))
        }
        self.init(heard: heard, missed: missed)
    }
}
