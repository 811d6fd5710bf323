#if canImport(Glibc)
    import Glibc
#endif

/// How the `position` method weighs a reading against the level a cell expects: a Student-t spread about the level
/// (heavy-tailed: a deep fade, a body or a reflection costs a cell little more than a far miss), a share of the
/// advertisements lost whatever the level, and a cut-off at the gateway's sensitivity (a reading would be heard only
/// at or above it). Nothing in it is the simulator's radio: the engine holds a grid of these (`candidates`), starts
/// from a broad one (`start`) and takes the one whose predictions of each next reading, from the beliefs of the first
/// tags heard, have been best (`learnsNoise`): the spread and the tail are then the venue's own.
public struct ObservationModel: Sendable, Hashable, Codable {
    /// Scale of the spread about the expected level, dB: the readings' own noise and the map's error together.
    public var sigma: Double
    /// The Student-t's degrees of freedom: 2–4 for heavy tails, large for nearly Gaussian.
    public var degrees: Double
    /// Share of advertisements no gateway hears, whatever the level.
    public var loss: Double
    /// Where the spread is centred, dB from the level: a reading comes in below the link's level on average (a body
    /// between tag and gateway part of the time, fades), and a calibration's levels are taken back by it.
    public var shift: Double

    public init(sigma: Double, degrees: Double, loss: Double, shift: Double = Self.typicalShift) {
        self.sigma = sigma
        self.degrees = degrees
        self.loss = loss
        self.shift = shift
    }

    /// A carrier's body between tag and gateway half the time, at a few dB, and an occasional fade: 2.5 dB below the
    /// level on average.
    public static let typicalShift = -2.5

    enum CodingKeys: String, CodingKey { case sigma, degrees, loss, shift }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        sigma = try container.decode(Double.self, forKey: .sigma)
        degrees = try container.decode(Double.self, forKey: .degrees)
        loss = try container.decode(Double.self, forKey: .loss)
        shift = try container.decodeIfPresent(Double.self, forKey: .shift) ?? Self.typicalShift
    }

    /// Where the engine starts, and what it keeps without `learnsNoise`: the readings' own spread of about 4 dB
    /// widened by `modelSigmaDB` of map error (6.4 dB at the default), nearly Gaussian (30 degrees of freedom). Chosen
    /// on the training data (docs/inference.md, "Observation model from packets"): 3 degrees of freedom cost the
    /// TETAM hall's straight walks 10 points, 12 the foreign radio's venues half a point.
    package static func start(settings: InferenceSettings) -> ObservationModel {
        ObservationModel(
            sigma: (16 + settings.modelSigmaDB * settings.modelSigmaDB).squareRoot(), degrees: 30, loss: 0.15)
    }

    /// The models the engine weighs against each other, `start` first: spreads from a clean line of sight with a good
    /// map (3.5 dB) to a crowded hall on a poor one (12 dB), light and heavy tails. The loss stays at 15 %: what a
    /// gateway misses beyond it is its sensitivity's (`ZoneEngine.learnSensitivities`).
    package static func candidates(settings: InferenceSettings) -> [ObservationModel] {
        var models = [start(settings: settings)]
        for sigma in [3.5, 5.0, 6.5, 9.0, 12.0] {
            for degrees in [3.0, 30.0] {
                let model = ObservationModel(sigma: sigma, degrees: degrees, loss: 0.15)
                if !models.contains(model) { models.append(model) }
            }
        }
        return models
    }

    /// The Student-t's density at `x` dB from the level.
    func density(_ x: Double) -> Double {
        let x = x - shift
        let nu = degrees
        let scale = sigma
        let logNorm = lgamma((nu + 1) / 2) - lgamma(nu / 2) - 0.5 * log(nu * Double.pi) - log(scale)
        return exp(logNorm - (nu + 1) / 2 * log1p(x * x / (nu * scale * scale)))
    }

    /// The noise tables of this model (`ReadingNoise`): the probability of an integer reading at each offset from the
    /// level, and of a missed advertisement at each margin of sensitivity over the level.
    package var tables: ReadingNoise {
        // The distribution function on a grid ten times finer than the tables', by the midpoint rule.
        let fine = 10
        let step = ReadingNoise.step / Double(fine)
        let lower = ReadingNoise.lower - 1
        let upper = ReadingNoise.upper + 1
        let count = Int(((upper - lower) / step).rounded())
        var cdf = [Double](repeating: 0, count: count + 1)
        for i in 0..<count { cdf[i + 1] = cdf[i] + density(lower + (Double(i) + 0.5) * step) * step }
        let total = cdf[count]
        func distribution(_ x: Double) -> Double {
            let position = (x - lower) / step
            let i = min(max(Int(position.rounded(.down)), 0), count - 1)
            let fraction = min(max(position - Double(i), 0), 1)
            return (cdf[i] + (cdf[i + 1] - cdf[i]) * fraction) / total
        }
        let entries = ReadingNoise.lastIndex + 1
        var heard = [Float](repeating: 0, count: entries)
        var missed = [Float](repeating: 0, count: entries)
        let outlier = ReadingNoise.outlier
        for i in 0..<entries {
            let x = ReadingNoise.lower + Double(i) * ReadingNoise.step
            let p = (1 - loss) * (distribution(x + 0.5) - distribution(x - 0.5))
            heard[i] = Float(log(p * (1 - outlier) + ReadingNoise.outlierFloor))
            missed[i] = Float(log(min(max(loss + (1 - loss) * distribution(x), outlier), 1)))
        }
        return ReadingNoise(heard: heard, missed: missed)
    }
}
