#if canImport(Glibc)
    import Glibc
#endif

/// A reading's noise, tabulated: the log-probability of hearing an integer RSSI at a given offset from the mean level,
/// and of missing an advertisement at a given margin below sensitivity. The engine's tables come from its own
/// `ObservationModel`; the simulator makes the position oracle's from its radio (`init(radio:extraVariance:walking:)`
/// in the Simulator module), which the engine never sees.
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
