/// Simulator: a radio unlike the one the rest of `RadioSettings` describes (a venue file's `radio.foreign:`), so that
/// the engine can be tried on radio it does not model. With it, each packet fades as Nakagami-m power instead of
/// Gaussian dB noise with deep fades; a second shadowing field varies at another scale; each advertising channel has
/// its own small-scale field; receivers differ in sensitivity, and some quantise or saturate; links suffer bursts of
/// deep fades; and crowds in a room attenuate the tags in it. docs/venue.md gives the keys.
public struct ForeignRadioSettings: Sendable, Hashable, Decodable {
    /// Nakagami-m shape of each packet's power (1: Rayleigh; larger: closer to a steady line of sight).
    public var nakagamiM = 1.0
    /// A second static shadowing field per gateway, σ dB, correlated over this many metres.
    public var coarseShadowingSigma = 4.0
    public var coarseShadowingMetres = 12.0
    /// Each of the three advertising channels has its own static field per gateway, σ dB, correlated over this many
    /// metres (frequency-selective multipath); each packet is heard on one channel, drawn at random.
    public var channelSigma = 3.0
    public var channelCorrelationMetres = 0.5
    /// Each gateway's sensitivity is `sensitivity` plus a draw uniform in 0…this, dB.
    public var sensitivitySpreadDB = 10.0
    /// This share of gateways reports levels in steps of `quantisationDB`.
    public var quantisedShare = 0.5
    public var quantisationDB = 3.0
    /// This share of gateways reports no level above `saturationDBm`.
    public var saturatedShare = 0.5
    public var saturationDBm = -55.0
    /// Deep-fade bursts per (tag, gateway) link: this many a minute, exponential lengths of this mean, this deep.
    public var fadeBurstsPerMinute = 1.0
    public var fadeBurstSeconds = 2.0
    public var fadeBurstDB = 20.0
    /// Crowds: this share of the zones fill and empty over a period of this many minutes; a full room attenuates
    /// the tags in it by up to this much at each gateway (a fixed share of it per gateway).
    public var crowdedShare = 0.5
    public var crowdPeriodMinutes = 20.0
    public var crowdLossDB = 6.0

    enum CodingKeys: String, CodingKey, CaseIterable {
        case nakagamiM, coarseShadowingSigma, coarseShadowingMetres, channelSigma, channelCorrelationMetres
        case sensitivitySpreadDB, quantisedShare, quantisationDB, saturatedShare, saturationDBm
        case fadeBurstsPerMinute, fadeBurstSeconds, fadeBurstDB, crowdedShare, crowdPeriodMinutes, crowdLossDB
    }

    public init() {}

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        func value(_ key: CodingKeys, _ current: Double, _ range: ClosedRange<Double>) throws -> Double {
            guard let found = try container.decodeIfPresent(Double.self, forKey: key) else { return current }
            guard range.contains(found) else {
                throw DecodingError.dataCorruptedError(
                    forKey: key, in: container, debugDescription: "expected \(range.lowerBound)...\(range.upperBound)")
            }
            return found
        }
        nakagamiM = try value(.nakagamiM, nakagamiM, 0.5...20)
        coarseShadowingSigma = try value(.coarseShadowingSigma, coarseShadowingSigma, 0...20)
        coarseShadowingMetres = try value(.coarseShadowingMetres, coarseShadowingMetres, 1...100)
        channelSigma = try value(.channelSigma, channelSigma, 0...20)
        channelCorrelationMetres = try value(.channelCorrelationMetres, channelCorrelationMetres, 0.25...10)
        sensitivitySpreadDB = try value(.sensitivitySpreadDB, sensitivitySpreadDB, 0...30)
        quantisedShare = try value(.quantisedShare, quantisedShare, 0...1)
        quantisationDB = try value(.quantisationDB, quantisationDB, 1...10)
        saturatedShare = try value(.saturatedShare, saturatedShare, 0...1)
        saturationDBm = try value(.saturationDBm, saturationDBm, -90 ... -20)
        fadeBurstsPerMinute = try value(.fadeBurstsPerMinute, fadeBurstsPerMinute, 0...60)
        fadeBurstSeconds = try value(.fadeBurstSeconds, fadeBurstSeconds, 0.1...60)
        fadeBurstDB = try value(.fadeBurstDB, fadeBurstDB, 0...40)
        crowdedShare = try value(.crowdedShare, crowdedShare, 0...1)
        crowdPeriodMinutes = try value(.crowdPeriodMinutes, crowdPeriodMinutes, 1...1440)
        crowdLossDB = try value(.crowdLossDB, crowdLossDB, 0...30)
    }
}
