import BeaconModel

/// Gateways as beacons (issue 22): every gateway advertises a beacon of its own, and every other gateway hears it
/// through the same radio as the tags (path loss, walls, static shadowing, the receiver's gain, fading, noise,
/// losses). A gateway's transmitter is off its nominal power by an offset of its own, as real radios are.
public struct GatewayBeacons: Sendable {
    /// One advertisement of `tx`'s beacon heard by `rx`.
    public struct Reception: Sendable, Hashable {
        public var t: Double
        public var tx: GatewayID
        public var rx: GatewayID
        public var rssi: Int
    }

    /// The power at 1 m each gateway puts in its frame (the nominal), dBm.
    public let measuredPower: Double
    /// How far each gateway's transmitter is from that, dB.
    public let transmitOffsets: [GatewayID: Double]
    public let intervalSeconds: Double
    let radio: RadioModel
    let gateways: [GatewayID]

    /// `transmitOffsetSigma`: σ of the transmit offsets (held to ±3σ).
    public init(
        venue: Venue, radio: RadioModel, measuredPower: Double = -59, transmitOffsetSigma: Double = 2,
        intervalSeconds: Double = 0.2, seed: UInt64
    ) {
        var rng = SeededGenerator(seed: seed)
        self.measuredPower = measuredPower
        self.intervalSeconds = intervalSeconds
        self.radio = radio
        gateways = venue.gateways.map(\.id).sorted { $0.rawValue < $1.rawValue }
        var offsets: [GatewayID: Double] = [:]
        for id in gateways {
            offsets[id] = min(
                max(transmitOffsetSigma * rng.gaussian(), -3 * transmitOffsetSigma), 3 * transmitOffsetSigma)
        }
        transmitOffsets = offsets
    }

    /// Every reception from `start` for `duration` seconds, in time order per link; `seed` draws fading, noise and
    /// losses.
    public func receptions(from start: Double, duration: Double, seed: UInt64) -> [Reception] {
        var rng = SeededGenerator(seed: seed)
        var heard: [Reception] = []
        let settings = radio.settings
        for tx in gateways {
            for rx in gateways where rx != tx {
                guard
                    let mean = radio.meanLinkRSSI(
                        txP0: measuredPower + (transmitOffsets[tx] ?? 0), from: tx, to: rx)
                else { continue }
                var fading = FadingProcess(sigma: settings.fadingSigma, tau: settings.fadingTauSeconds, using: &rng)
                // Each transmitter starts at its own phase, as unsynchronised gateways do.
                var t = start + Double.random(in: 0..<intervalSeconds, using: &rng)
                while t < start + duration {
                    let value = fading.advance(by: intervalSeconds, using: &rng)
                    if let rssi = radio.receive(mean: mean, fading: value, using: &rng) {
                        heard.append(Reception(t: t, tx: tx, rx: rx, rssi: rssi))
                    }
                    t += intervalSeconds
                }
            }
        }
        return heard
    }
}
