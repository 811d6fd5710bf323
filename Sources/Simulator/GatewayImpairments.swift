import BeaconModel

/// What happens to an advertisement at a gateway beyond the radio's level and noise: interference bursts (a further
/// loss and noise while one is on) and the gateway's clock (its offset and a delay before it stamps the scan time).
/// Shared by the run and the calibration walk, so that both are in the same radio. Each draws from its own stream:
/// a venue without bursts or clocks draws exactly what it drew before they existed.
struct GatewayImpairments: Sendable {
    let settings: RadioSettings
    /// When each gateway suffers interference.
    private(set) var bursts: InterferenceBursts
    /// Each gateway's clock offset (`RadioModel.clockOffsets`), in the venue's order.
    let clockOffsets: [Double]
    private var interferenceDraws: SeededGenerator
    private var clockDraws: SeededGenerator

    init(
        venue: Venue, radio: RadioModel, start: Double, schedules: inout SeededGenerator,
        interferenceDraws: SeededGenerator, clockDraws: SeededGenerator
    ) {
        settings = venue.radio
        bursts = InterferenceBursts(
            settings: venue.radio, gateways: venue.gateways.count, start: start, using: &schedules)
        clockOffsets = venue.gateways.map { radio.clockOffsets[$0.id] ?? 0 }
        self.interferenceDraws = interferenceDraws
        self.clockDraws = clockDraws
    }

    /// One advertisement at gateway `index` (venue order) at true time `t`: `RadioModel.receive`, with a burst's
    /// noise before it and its loss after. Nil when the gateway does not hear it.
    mutating func receive(
        _ radio: RadioModel, gateway index: Int, at t: Double, mean: Double, fading: Double,
        using rng: inout SeededGenerator
    ) -> Int? {
        let burst = bursts.isActive(gateway: index, at: t)
        let level = burst ? mean + settings.interferenceNoiseDB * interferenceDraws.gaussian() : mean
        guard let rssi = radio.receive(mean: level, fading: fading, using: &rng),
            !burst || Double.random(in: 0..<1, using: &interferenceDraws) >= settings.interferencePacketLoss
        else { return nil }
        return rssi
    }

    /// The scan time gateway `index` stamps on what it heard at true time `t`: its clock's offset and the delay
    /// before it reads the report.
    mutating func stamp(gateway index: Int, at t: Double) -> Double {
        let delay =
            settings.clockJitterSeconds > 0 ? Double.random(in: 0...settings.clockJitterSeconds, using: &clockDraws) : 0
        return t + clockOffsets[index] + delay
    }
}
