#if canImport(Glibc)
    import Glibc
#endif

/// How much the mean of the readings a gateway heard overstates the mean it would have had if none had been lost below
/// sensitivity. Near sensitivity only the readings that fade up are heard, so their mean sits above the link's level;
/// far above it nothing is lost. Tabulated by the level's margin over sensitivity, for a reading's own spread as the
/// engine takes it (`ObservationModel`: about 4 dB, with a tail for fades), and for a walker turning about, with the
/// body between tag and gateway part of the time (`PositionMap.fitBodyLossDB`).
struct HeardMean: Sendable {
    /// For a walker turning about, the body between the tag and the gateway part of the time; and for one whose
    /// heading the fit knows (the body taken out separately).
    static let turning = HeardMean(model: readings(body: PositionMap.fitBodyLossDB))
    static let facing = HeardMean(model: readings(body: 0))

    /// The spread of one reading about its link's level: 4 dB of noise and fading, nearly Gaussian (30 degrees of
    /// freedom, as `ObservationModel.start`: a heavy upper tail would read a mean just above sensitivity as a level
    /// far below it); a body of `body` dB between tag and gateway for half of a turning walker's headings (as much of
    /// it as the cosine of the angle puts in the way) lowers the readings by `body`/π on average and widens them by
    /// its spread.
    static func readings(body: Double) -> ObservationModel {
        let mean = body / Double.pi
        let variance = body * body / 4 - mean * mean
        return ObservationModel(sigma: (16 + variance).squareRoot(), degrees: 30, loss: 0.15, shift: -mean)
    }

    /// Margins tabulated (dB): from `lowest` to `highest` in `step`s. At `highest` and above the excess is 0.
    static let lowest = -20.0
    static let highest = 40.0
    static let step = 0.25

    /// Per margin, the mean offset of the heard readings from the level, dB, and the share of readings heard.
    let offsets: [Double]
    let shares: [Double]

    init(model: ObservationModel) {
        // The table's floor for levels no component explains is not noise a reading has: take it out.
        let probability = model.tables.heard.map {
            max((exp(Double($0)) - ReadingNoise.outlierFloor) / (1 - ReadingNoise.outlier), 0)
        }
        let count = Int(((Self.highest - Self.lowest) / Self.step).rounded()) + 1
        let all = probability.reduce(0, +)
        // Per margin, the readings heard: their mass (the share, against all) and their mean offset.
        let rows = (0..<count).map { k in
            let margin = Self.lowest + Double(k) * Self.step
            var total = 0.0
            var weighted = 0.0
            for (i, p) in probability.enumerated() {
                let offset = ReadingNoise.lower + Double(i) * ReadingNoise.step
                guard offset >= -margin else { continue }
                total += p
                weighted += p * offset
            }
            return (share: all > 0 ? total / all : 0, offset: total > 0 ? weighted / total : -margin)
        }
        shares = rows.map(\.share)
        offsets = rows.map(\.offset)
    }

    /// The heard readings' mean offset from the level at `margin` dB over sensitivity (linear between table rows).
    func offset(margin: Double) -> Double {
        let position = (min(max(margin, Self.lowest), Self.highest) - Self.lowest) / Self.step
        let row = min(Int(position.rounded(.down)), offsets.count - 2)
        let fraction = position - Double(row)
        return offsets[row] * (1 - fraction) + offsets[row + 1] * fraction
    }

    /// The share of readings heard at `margin` dB over sensitivity (linear between table rows; none below the table).
    func share(margin: Double) -> Double {
        guard margin > Self.lowest else { return 0 }
        let position = (min(margin, Self.highest) - Self.lowest) / Self.step
        let row = min(Int(position.rounded(.down)), shares.count - 2)
        let fraction = position - Double(row)
        return shares[row] * (1 - fraction) + shares[row + 1] * fraction
    }

    /// For readings heard with mean `heardMean` (dBm) by a gateway of `sensitivity`: how much that mean is above the
    /// mean without the cut, dB (≥ 0). Finds the level whose heard readings average `heardMean`, and compares its
    /// offset at that margin with the offset far above sensitivity. A mean within about a dB of sensitivity says only
    /// that the level is far below it: it is taken as `lowest` below.
    func excess(heardMean: Double, sensitivity: Double) -> Double {
        let far = offsets[offsets.count - 1]
        guard heardMean - sensitivity < Self.highest + far else { return 0 }
        // level + offset(level − sensitivity) grows with the level: bisect for the one that gives `heardMean`.
        var low = sensitivity + Self.lowest
        var high = heardMean - far + 1
        for _ in 0..<48 {
            let middle = (low + high) / 2
            if middle + offset(margin: middle - sensitivity) < heardMean { low = middle } else { high = middle }
        }
        let level = (low + high) / 2
        return max(offset(margin: level - sensitivity) - far, 0)
    }
}
