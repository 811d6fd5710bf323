import BeaconModel

#if canImport(Glibc)
    import Glibc
#endif

/// The whole venue over time: tags advertise on their own schedules, walkers move, every gateway hears (or misses)
/// each advertisement through the radio model. Pure and seeded: the same venue, seed and start time give the same
/// sightings and truth.
public struct VenueSimulation: Sendable {
    public let venue: Venue
    public let tags: [SimulatedTag]
    public let radio: RadioModel
    let graph: ZoneGraph
    var walkers: [Walker]
    var nextAdvertisement: [Double]
    var lastAdvertisement: [Double]
    var fading: [[FadingProcess]]
    var rng: SeededGenerator
    /// Interference bursts and the gateways' clocks, drawing apart from `rng`.
    var impairments: GatewayImpairments
    /// When each gateway suffers interference (a copy taken before a run answers as the run did).
    public var interference: InterferenceBursts { impairments.bursts }
    /// Per tag: the zone it is in and since when (for the truth intervals).
    var current: [(zone: ZoneID?, since: Double)]
    public private(set) var time: Double
    /// When the run began: tags' batteries drain from here.
    let start: Double
    /// Per tag with a battery: its advertisements since its cell was put in, and whether that cell is the replacement.
    var advertisements: [(count: UInt32, replaced: Bool)]
    let gatewayIDs: [GatewayID]
    let gatewayPositions: [Point]

    public init(venue: Venue, seed: UInt64, start: Double) {
        self.venue = venue
        var rng = SeededGenerator(seed: seed)
        var radioStream = rng.split()
        let radio = RadioModel(venue: venue, using: &radioStream)
        self.radio = radio
        // Split off the radio's stream after the radio took its own: nothing else in the run draws from it.
        var schedules = radioStream.split()
        let interferenceDraws = radioStream.split()
        let clockDraws = radioStream.split()
        var tagStream = rng.split()
        tags = SimulatedTag.expand(venue, using: &tagStream)
        impairments = GatewayImpairments(
            venue: venue, radio: radio, start: start, schedules: &schedules, interferenceDraws: interferenceDraws,
            clockDraws: clockDraws, links: tags.count * venue.gateways.count,
            fadeDraws: venue.radio.foreign == nil ? nil : radioStream.split())
        graph = ZoneGraph(venue: venue)
        gatewayIDs = venue.gateways.map(\.id)
        gatewayPositions = venue.gateways.map(\.position)
        walkers = tags.map { tag in
            Walker(tag: tag.id, carrier: tag.carrier, start: tag.start, venue: venue, time: start, rng: rng.split())
        }
        nextAdvertisement = tags.map { start + Double.random(in: 0..<$0.interval, using: &rng) }
        lastAdvertisement = tags.map { _ in start }
        let settings = venue.radio
        fading = tags.map { _ in
            venue.gateways.map { _ in
                FadingProcess(sigma: settings.fadingSigma, tau: settings.fadingTauSeconds, using: &rng)
            }
        }
        current = walkers.map { ($0.zone, start) }
        time = start
        self.start = start
        advertisements = tags.map { _ in (0, false) }
        self.rng = rng
    }

    /// Runs until `end`, handing every sighting line and every closed truth interval to the callbacks, sightings in
    /// the order of the advertisements (in time order unless the gateways' clocks are offset: each stamps its own
    /// scan time). Open intervals are closed at `end`.
    public mutating func run(
        until end: Double, sighting: (SightingLine) -> Void, truth: (TruthInterval) -> Void
    ) {
        advance(until: end, sighting: sighting, truth: truth)
        finish(at: end, truth: truth)
    }

    /// Advertisements up to (not including) `end`; may be called again with a later `end` (live runs).
    public mutating func advance(
        until end: Double, sighting: (SightingLine) -> Void, truth: (TruthInterval) -> Void
    ) {
        var changes: [ZoneChange] = []
        let jitter = venue.radio.advertisingJitterSeconds
        while true {
            // The next tag to advertise; a linear scan is plenty for venue-sized tag counts.
            var index = -1
            var earliest = Double.infinity
            for (i, t) in nextAdvertisement.enumerated() where t < earliest {
                earliest = t
                index = i
            }
            guard index >= 0, earliest < end else { break }
            time = earliest
            let tag = tags[index]
            move(index, to: earliest, changes: &changes, truth: truth)
            let walker = walkers[index]
            let dt = earliest - lastAdvertisement[index]
            lastAdvertisement[index] = earliest
            // A flat battery silences the tag (it still moves, and its radio draws stay in step); every n-th
            // advertisement of a tag with a battery is a TLM frame.
            var kind = tag.kind
            var extras: SightingExtras?
            if let battery = tag.battery {
                let (telemetry, flat) = self.telemetry(of: index, battery: battery, at: earliest)
                if flat {
                    nextAdvertisement[index] = earliest + tag.interval + Double.random(in: 0...jitter, using: &rng)
                    continue
                }
                if let telemetry {
                    kind = .eddystoneTLM
                    extras = SightingExtras(tlm: telemetry)
                }
            }
            // Gateways in the venue's order: the sightings of one advertisement come one after another, in that
            // order (PositionOracle relies on it).
            for (g, gateway) in gatewayIDs.enumerated() {
                let faded = fading[index][g].advance(by: dt, using: &rng)
                let bodyFactor = bodyBlocking(walker, gateway: gatewayPositions[g])
                guard
                    let mean = radio.meanRSSI(
                        tagP0: tag.p0, at: walker.position, gateway: gateway, bodyFactor: bodyFactor),
                    let rssi = impairments.receive(
                        radio, gateway: g, link: index * gatewayIDs.count + g, at: earliest, mean: mean,
                        fading: faded, from: walker.position, zone: walker.zone, using: &rng)
                else { continue }
                sighting(
                    SightingLine(
                        t: impairments.stamp(gateway: g, at: earliest), gateway: gateway, beacon: tag.beacon,
                        rssi: rssi,
                        txPower: tag.advertisesPower ? tag.txPower : nil, kind: kind, extras: extras))
            }
            nextAdvertisement[index] = earliest + tag.interval + Double.random(in: 0...jitter, using: &rng)
        }
        time = max(time, end)
    }

    /// Counts tag `index`'s advertisement at `t`: the TLM frame it is, if it is one (the cell's voltage, the advert
    /// count and the seconds since the cell went in, as an Eddystone tag reports them), and whether the cell is flat.
    mutating func telemetry(of index: Int, battery: Venue.Tag.Battery, at t: Double) -> (Telemetry?, flat: Bool) {
        let elapsed = t - start
        if let replaced = battery.replacedAfterSeconds, elapsed >= replaced, !advertisements[index].replaced {
            advertisements[index] = (0, true)
        }
        let (milliVolts, sinceInserted) = battery.state(elapsed: elapsed)
        guard milliVolts >= Double(battery.deadBelowMilliVolts) else { return (nil, true) }
        advertisements[index].count &+= 1
        guard advertisements[index].count % UInt32(battery.tlmEvery) == 0 else { return (nil, false) }
        // A day's swing of two degrees around 21 °C, in the frame's 1/256 °C steps.
        let temperature = ((21 + 2 * sin(2 * Double.pi * t / 86_400)) * 256).rounded() / 256
        return (
            Telemetry(
                version: 0, batteryMilliVolts: Int(milliVolts.rounded()), temperatureCelsius: temperature,
                advertisingCount: advertisements[index].count, secondsSinceBoot: (sinceInserted * 10).rounded() / 10),
            false
        )
    }

    /// Moves every walker to `end` and closes every open truth interval there.
    public mutating func finish(at end: Double, truth: (TruthInterval) -> Void) {
        var changes: [ZoneChange] = []
        for index in walkers.indices {
            move(index, to: end, changes: &changes, truth: truth)
            truth(TruthInterval(tag: tags[index].id, zone: current[index].zone, enter: current[index].since, exit: end))
            current[index].since = end
        }
        time = end
    }

    /// Moves walker `index` to `t`, closing a truth interval at each zone change on the way.
    private mutating func move(_ index: Int, to t: Double, changes: inout [ZoneChange], truth: (TruthInterval) -> Void)
    {
        walkers[index].advance(to: t, graph: graph, venue: venue, changes: &changes)
        for change in changes {
            truth(
                TruthInterval(tag: change.tag, zone: current[index].zone, enter: current[index].since, exit: change.t))
            current[index] = (change.to, change.t)
        }
        changes.removeAll(keepingCapacity: true)
    }

    /// How much of the carrier's body lies between a chest-worn tag and the gateway: 0 facing it, 1 back to it.
    func bodyBlocking(_ walker: Walker, gateway: Point) -> Double {
        guard walker.carrier != .still else { return 0 }
        let angle = atan2(gateway.y - walker.position.y, gateway.x - walker.position.x) - walker.heading
        return max(0, -cos(angle))
    }
}
