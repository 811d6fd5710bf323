/// Simulator: the radio model's parameters (a venue file's `radio:` section). Defaults follow published indoor BLE
/// measurements; docs/venue.md gives the sources and ranges.
public struct RadioSettings: Sendable, Hashable, Decodable {
    /// RSSI at 1 m, dBm, and the spread of tags around it (uniform ±).
    public var p0 = -59.0
    public var p0Spread = 3.0
    /// Path-loss exponent n in P0 − 10·n·log10(d), walls modelled separately.
    public var pathLossExponent = 2.0
    /// Two slopes: beyond `breakpointMetres` the loss grows with `farPathLossExponent` instead (continuous at the
    /// breakpoint). Both or neither; none is one slope.
    public var breakpointMetres: Double?
    public var farPathLossExponent: Double?
    /// Static shadowing: σ dB, correlated over this many metres.
    public var shadowingSigma = 4.0
    public var shadowingCorrelationMetres = 2.0
    /// Per-packet noise σ dB, and the share of packets that come in a further `deepFadeDB` lower.
    public var noiseSigma = 3.5
    public var deepFadeShare = 0.10
    public var deepFadeDB = 6.0
    /// Slow fading, AR(1): σ dB and time constant, seconds.
    public var fadingSigma = 2.0
    public var fadingTauSeconds = 5.0
    /// Loss when the carrier's body is between tag and gateway, dB (8–12 published).
    public var bodyLossDB = 10.0
    /// Share of advertisements a gateway misses regardless of level.
    public var packetLoss = 0.15
    /// Below this, a gateway hears nothing, dBm.
    public var sensitivity = -95.0
    /// σ of each gateway's gain offset, dB (a gateway's own `gainOffset` overrides).
    public var gatewayGainSigma = 2.0
    /// Random delay added to each advertising interval, seconds (0–10 ms in the spec).
    public var advertisingJitterSeconds = 0.010
    /// Interference bursts (Wi-Fi traffic, a microwave oven): per gateway, bursts start at random at this rate per
    /// hour and last `interferenceBurstSeconds` on average (both exponential); during one the gateway misses a
    /// further `interferencePacketLoss` of advertisements and its readings get `interferenceNoiseDB` more noise (σ).
    /// A rate of 0 is none.
    public var interferenceBurstsPerHour = 0.0
    public var interferenceBurstSeconds = 20.0
    public var interferencePacketLoss = 0.5
    public var interferenceNoiseDB = 3.0
    /// Gateway clocks: each gateway's scan times are off by a constant drawn with this σ (clipped at 3σ), seconds,
    /// plus a delay drawn for every sighting, uniform in 0…`clockJitterSeconds`. Both 0: scan times are exact.
    public var clockOffsetSigmaSeconds = 0.0
    public var clockJitterSeconds = 0.0
    /// A radio unlike the one above (`ForeignRadioSettings`); none: the radio above.
    public var foreign: ForeignRadioSettings?

    enum CodingKeys: String, CodingKey, CaseIterable {
        case p0, p0Spread, pathLossExponent, shadowingSigma, shadowingCorrelationMetres, noiseSigma, deepFadeShare
        case deepFadeDB, fadingSigma, fadingTauSeconds, bodyLossDB, packetLoss, sensitivity, gatewayGainSigma
        case advertisingJitterSeconds, breakpointMetres, farPathLossExponent, interferenceBurstsPerHour
        case interferenceBurstSeconds, interferencePacketLoss, interferenceNoiseDB, clockOffsetSigmaSeconds
        case clockJitterSeconds, foreign
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
        p0 = try value(.p0, p0, -100...0)
        p0Spread = try value(.p0Spread, p0Spread, 0...20)
        pathLossExponent = try value(.pathLossExponent, pathLossExponent, 1...6)
        shadowingSigma = try value(.shadowingSigma, shadowingSigma, 0...20)
        shadowingCorrelationMetres = try value(.shadowingCorrelationMetres, shadowingCorrelationMetres, 0.1...50)
        noiseSigma = try value(.noiseSigma, noiseSigma, 0...20)
        deepFadeShare = try value(.deepFadeShare, deepFadeShare, 0...1)
        deepFadeDB = try value(.deepFadeDB, deepFadeDB, 0...40)
        fadingSigma = try value(.fadingSigma, fadingSigma, 0...20)
        fadingTauSeconds = try value(.fadingTauSeconds, fadingTauSeconds, 0.1...600)
        bodyLossDB = try value(.bodyLossDB, bodyLossDB, 0...30)
        packetLoss = try value(.packetLoss, packetLoss, 0...0.99)
        sensitivity = try value(.sensitivity, sensitivity, -120 ... -40)
        gatewayGainSigma = try value(.gatewayGainSigma, gatewayGainSigma, 0...20)
        advertisingJitterSeconds = try value(.advertisingJitterSeconds, advertisingJitterSeconds, 0...1)
        if container.contains(.breakpointMetres) || container.contains(.farPathLossExponent) {
            for key in [CodingKeys.breakpointMetres, .farPathLossExponent] where !container.contains(key) {
                throw DecodingError.dataCorruptedError(
                    forKey: key, in: container,
                    debugDescription: "missing: give both breakpointMetres and farPathLossExponent, or neither")
            }
            breakpointMetres = try value(.breakpointMetres, 0, 0.5...100)
            farPathLossExponent = try value(.farPathLossExponent, 0, 1...8)
        }
        interferenceBurstsPerHour = try value(.interferenceBurstsPerHour, interferenceBurstsPerHour, 0...3600)
        interferenceBurstSeconds = try value(.interferenceBurstSeconds, interferenceBurstSeconds, 0.1...3600)
        interferencePacketLoss = try value(.interferencePacketLoss, interferencePacketLoss, 0...1)
        interferenceNoiseDB = try value(.interferenceNoiseDB, interferenceNoiseDB, 0...20)
        clockOffsetSigmaSeconds = try value(.clockOffsetSigmaSeconds, clockOffsetSigmaSeconds, 0...1)
        clockJitterSeconds = try value(.clockJitterSeconds, clockJitterSeconds, 0...0.5)
        foreign = try container.decodeIfPresent(ForeignRadioSettings.self, forKey: .foreign)
    }
}
