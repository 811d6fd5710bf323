import BeaconModel

#if canImport(Glibc)
    import Glibc
#endif

/// One venue's realisation of `ForeignRadioSettings`: a radio built to differ from `RadioModel`'s own assumptions
/// (and from anything the engine models), for testing on radio nobody tuned for. Per gateway: its sensitivity,
/// whether it quantises or saturates, a coarse shadowing field and one small-scale field per advertising channel; per
/// crowded zone: its phase and what a full room costs at each gateway. Pure: every draw comes from the stream passed
/// in, and the per-packet draws from the caller's.
struct ForeignRadio: Sendable {
    let settings: ForeignRadioSettings
    let sensitivity: [GatewayID: Double]
    /// The step each gateway reports levels in (1 dB: integer dBm, as every gateway does).
    let step: [GatewayID: Double]
    /// The highest level each gateway reports (+∞ when it does not saturate).
    let ceiling: [GatewayID: Double]
    let coarse: [GatewayID: ShadowingField]
    let channels: [GatewayID: [ShadowingField]]
    let crowds: [ZoneID: Crowd]
    /// E[10·log10 g] for g ~ Gamma(m, 1/m): subtracted, so that a packet's level is the link's mean on average in dB.
    let fadingMean: Double

    /// A zone that fills and empties: full at the crest of a sine of `period` seconds, empty for half of it.
    struct Crowd: Sendable {
        let period: Double
        let phase: Double
        /// What a full room costs at each gateway, dB.
        let loss: [GatewayID: Double]

        func level(at t: Double) -> Double { max(0, sin(2 * Double.pi * t / period + phase)) }
    }

    /// Advertising channels 37, 38 and 39.
    static let channelCount = 3

    init(
        settings: ForeignRadioSettings, venue: Venue, bounds: (min: Point, max: Point), using rng: inout SeededGenerator
    ) {
        self.settings = settings
        var sensitivity: [GatewayID: Double] = [:]
        var step: [GatewayID: Double] = [:]
        var ceiling: [GatewayID: Double] = [:]
        var coarse: [GatewayID: ShadowingField] = [:]
        var channels: [GatewayID: [ShadowingField]] = [:]
        for gateway in venue.gateways.sorted(by: { $0.id.rawValue < $1.id.rawValue }) {
            var stream = rng.split()
            sensitivity[gateway.id] =
                venue.radio.sensitivity + Double.random(in: 0...settings.sensitivitySpreadDB, using: &stream)
            step[gateway.id] =
                Double.random(in: 0..<1, using: &stream) < settings.quantisedShare ? settings.quantisationDB : 1
            ceiling[gateway.id] =
                Double.random(in: 0..<1, using: &stream) < settings.saturatedShare ? settings.saturationDBm : .infinity
            coarse[gateway.id] = ShadowingField(
                covering: bounds, sigma: settings.coarseShadowingSigma, correlation: settings.coarseShadowingMetres,
                using: &stream)
            channels[gateway.id] = (0..<Self.channelCount).map { _ in
                ShadowingField(
                    covering: bounds, sigma: settings.channelSigma, correlation: settings.channelCorrelationMetres,
                    using: &stream)
            }
        }
        var crowds: [ZoneID: Crowd] = [:]
        for zone in venue.zones {
            var stream = rng.split()
            guard Double.random(in: 0..<1, using: &stream) < settings.crowdedShare else { continue }
            let period = 60 * settings.crowdPeriodMinutes * Double.random(in: 0.7...1.3, using: &stream)
            let phase = Double.random(in: 0..<(2 * Double.pi), using: &stream)
            let loss = Dictionary(
                uniqueKeysWithValues: venue.gateways.map {
                    ($0.id, settings.crowdLossDB * Double.random(in: 0.3...1, using: &stream))
                })
            crowds[zone.id] = Crowd(period: period, phase: phase, loss: loss)
        }
        self.sensitivity = sensitivity
        self.step = step
        self.ceiling = ceiling
        self.coarse = coarse
        self.channels = channels
        self.crowds = crowds
        fadingMean = 10 / log(10) * (Self.digamma(settings.nakagamiM) - log(settings.nakagamiM))
    }

    /// What the crowd in `zone` costs a tag there at `gateway` at time `t`, dB (0 outside every crowded zone).
    func crowdLoss(zone: ZoneID?, gateway: GatewayID, at t: Double) -> Double {
        guard let zone, let crowd = crowds[zone] else { return 0 }
        return crowd.level(at: t) * (crowd.loss[gateway] ?? 0)
    }

    /// One packet heard at `gateway` from `position` on a random channel, its link's level `level` (all but the
    /// per-packet part): the channel's field, Nakagami-m fading, the gateway's sensitivity, ceiling and step. Nil
    /// below the sensitivity.
    func receive(level: Double, gateway: GatewayID, position: Point, using rng: inout some RandomNumberGenerator)
        -> Int?
    {
        let channel = Int.random(in: 0..<Self.channelCount, using: &rng)
        let fields = channels[gateway] ?? []
        let selective = channel < fields.count ? fields[channel].value(at: position) : 0
        let fading = 10 * log10(max(Self.gamma(shape: settings.nakagamiM, using: &rng) / settings.nakagamiM, 1e-12))
        let rssi = level + selective + fading - fadingMean
        guard rssi >= sensitivity[gateway] ?? -95 else { return nil }
        let stepDB = step[gateway] ?? 1
        let reported = min((rssi / stepDB).rounded() * stepDB, ceiling[gateway] ?? .infinity)
        return Int(reported.rounded())
    }

    /// A Gamma(shape, 1) draw: Marsaglia and Tsang's method, boosted below shape 1.
    static func gamma(shape: Double, using rng: inout some RandomNumberGenerator) -> Double {
        if shape < 1 {
            let u = Double.random(in: Double.leastNonzeroMagnitude..<1, using: &rng)
            return gamma(shape: shape + 1, using: &rng) * pow(u, 1 / shape)
        }
        let d = shape - 1.0 / 3
        let c = 1 / (9 * d).squareRoot()
        while true {
            let x = rng.gaussian()
            let v = (1 + c * x) * (1 + c * x) * (1 + c * x)
            guard v > 0 else { continue }
            let u = Double.random(in: Double.leastNonzeroMagnitude..<1, using: &rng)
            if log(u) < 0.5 * x * x + d - d * v + d * log(v) { return d * v }
        }
    }

    /// ψ(x) for x > 0: the recurrence up to 6, then the asymptotic series.
    static func digamma(_ x: Double) -> Double {
        var x = x
        var result = 0.0
        while x < 6 {
            result -= 1 / x
            x += 1
        }
        let inverse = 1 / (x * x)
        return result + log(x) - 0.5 / x
            - inverse * (1.0 / 12 - inverse * (1.0 / 120 - inverse * (1.0 / 252 - inverse / 240)))
    }
}
