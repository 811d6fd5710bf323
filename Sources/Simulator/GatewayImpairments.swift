import BeaconModel

/// What happens to an advertisement at a gateway beyond the radio's level and noise: interference bursts (a further
/// loss and noise while one is on), the gateway's clock (its offset and a delay before it stamps the scan time), and
/// with a foreign radio the links' deep-fade bursts and the crowds. Shared by the run and the calibration walk, so that
/// both are in the same radio. Each draws from its own stream: a venue without bursts, clocks or a foreign radio draws
/// exactly what it drew before they existed.
struct GatewayImpairments: Sendable {
    let settings: RadioSettings
    /// When each gateway suffers interference.
    private(set) var bursts: InterferenceBursts
    /// Each gateway's clock offset (`RadioModel.clockOffsets`), in the venue's order.
    let clockOffsets: [Double]
    /// With a foreign radio: when each (tag, gateway) link is in a deep fade (link `tag × gateways + gateway`).
    private(set) var linkFades: InterferenceBursts?
    let gatewayIDs: [GatewayID]
    private var interferenceDraws: SeededGenerator
    private var clockDraws: SeededGenerator

    /// `links`: how many (tag, gateway) links the caller numbers; `fadeDraws` schedules their deep fades when the
    /// venue's radio is foreign.
    init(
        venue: Venue, radio: RadioModel, start: Double, schedules: inout SeededGenerator,
        interferenceDraws: SeededGenerator, clockDraws: SeededGenerator, links: Int = 0,
        fadeDraws: SeededGenerator? = nil
    ) {
        settings = venue.radio
        bursts = InterferenceBursts(
            settings: venue.radio, gateways: venue.gateways.count, start: start, using: &schedules)
        clockOffsets = venue.gateways.map { radio.clockOffsets[$0.id] ?? 0 }
        gatewayIDs = venue.gateways.map(\.id)
        if let foreign = venue.radio.foreign, var fadeDraws {
            linkFades = InterferenceBursts(
                perHour: 60 * foreign.fadeBurstsPerMinute, seconds: foreign.fadeBurstSeconds, count: links,
                start: start, using: &fadeDraws)
        }
        self.interferenceDraws = interferenceDraws
        self.clockDraws = clockDraws
    }

    /// One advertisement at gateway `index` (venue order) at true time `t`: `RadioModel.receive`, with a burst's
    /// noise before it and its loss after. Nil when the gateway does not hear it. With a foreign radio, the packet
    /// was sent from `position` in `zone` over link `link`: the link's deep fade and the zone's crowd lower it.
    mutating func receive(
        _ radio: RadioModel, gateway index: Int, link: Int, at t: Double, mean: Double, fading: Double,
        from position: Point, zone: ZoneID?, using rng: inout SeededGenerator
    ) -> Int? {
        let burst = bursts.isActive(gateway: index, at: t)
        var level = burst ? mean + settings.interferenceNoiseDB * interferenceDraws.gaussian() : mean
        if let foreign = radio.foreign {
            let gateway = gatewayIDs[index]
            level -= foreign.crowdLoss(zone: zone, gateway: gateway, at: t)
            if linkFades?.isActive(gateway: link, at: t) == true { level -= foreign.settings.fadeBurstDB }
        }
        guard
            let rssi = radio.receive(
                mean: level, fading: fading, gateway: gatewayIDs[index], from: position, using: &rng),
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
