import BeaconModel

#if canImport(Glibc)
    import Glibc
#endif

/// RSSI = P0 − path loss − walls − body + static shadowing + gateway offset + antenna gain + slow fading + per-packet
/// noise, as integer dBm, or nothing when below sensitivity or lost. The path loss is 10·n·log10(d), or with a
/// breakpoint two slopes. Pure: every random draw comes from a generator passed in, so a seed reproduces a run.
public struct RadioModel: Sendable {
    public let settings: RadioSettings
    let walls: [Venue.Wall]
    let gateways: [GatewayID: Venue.Gateway]
    /// Each gateway's gain offset, dB.
    public let gains: [GatewayID: Double]
    /// Each gateway's clock offset, seconds: what it adds to every scan time it stamps (0 without
    /// `clockOffsetSigmaSeconds`).
    public let clockOffsets: [GatewayID: Double]
    let shadowing: [GatewayID: ShadowingField]
    /// The foreign radio (`radio.foreign`), if the venue has one: it adds its coarse shadowing to the mean levels and
    /// hears each packet its own way (`receive`).
    let foreign: ForeignRadio?
    /// Height at which tags are carried, metres.
    public static let tagHeight = 1.2

    public init(venue: Venue, using rng: inout SeededGenerator) {
        settings = venue.radio
        walls = venue.walls
        gateways = Dictionary(uniqueKeysWithValues: venue.gateways.map { ($0.id, $0) })
        let points = venue.zones.flatMap(\.shape.vertices) + venue.gateways.map(\.position)
        let bounds = (
            min: Point(points.map(\.x).min() ?? 0, points.map(\.y).min() ?? 0),
            max: Point(points.map(\.x).max() ?? 1, points.map(\.y).max() ?? 1)
        )
        var gains: [GatewayID: Double] = [:]
        var clockOffsets: [GatewayID: Double] = [:]
        var shadowing: [GatewayID: ShadowingField] = [:]
        let clockSigma = venue.radio.clockOffsetSigmaSeconds
        for gateway in venue.gateways.sorted(by: { $0.id.rawValue < $1.id.rawValue }) {
            var stream = rng.split()
            gains[gateway.id] = gateway.gainOffset ?? venue.radio.gatewayGainSigma * stream.gaussian()
            shadowing[gateway.id] = ShadowingField(
                covering: bounds, sigma: venue.radio.shadowingSigma,
                correlation: venue.radio.shadowingCorrelationMetres, using: &stream)
            // Drawn last from the gateway's own stream: the gain and shadowing draws stay as they were.
            clockOffsets[gateway.id] =
                clockSigma > 0 ? min(max(clockSigma * stream.gaussian(), -3 * clockSigma), 3 * clockSigma) : 0
        }
        self.gains = gains
        self.clockOffsets = clockOffsets
        self.shadowing = shadowing
        // Split off last: a venue without a foreign radio draws exactly what it drew before there was one.
        if let settings = venue.radio.foreign {
            var stream = rng.split()
            foreign = ForeignRadio(settings: settings, venue: venue, bounds: bounds, using: &stream)
        } else {
            foreign = nil
        }
    }

    /// Both static shadowing fields of `id` at `point`, dB: the radio's own and the foreign radio's coarse one.
    func staticShadowing(_ id: GatewayID, at point: Point) -> Double {
        (shadowing[id]?.value(at: point) ?? 0) + (foreign?.coarse[id]?.value(at: point) ?? 0)
    }

    /// Attenuation of the walls between two points, dB.
    public func wallLoss(from a: Point, to b: Point) -> Double {
        let path = Segment(a, b)
        return walls.reduce(0) { $0 + (path.intersects($1.segment) ? $1.attenuation : 0) }
    }

    /// The propagation law's loss over `distance` metres (3-D), dB: 10·n·log10(d), and beyond the breakpoint, if
    /// any, 10·n·log10(b) + 10·n_far·log10(d / b), continuous at b.
    public func pathLoss(distance: Double) -> Double {
        if let breakpoint = settings.breakpointMetres, let far = settings.farPathLossExponent, distance > breakpoint {
            return 10 * settings.pathLossExponent * log10(breakpoint) + 10 * far * log10(distance / breakpoint)
        }
        return 10 * settings.pathLossExponent * log10(distance)
    }

    /// The gain of `gateway`'s antenna towards a tag at `offset` (tag minus gateway: x, y, and z up) `distance`
    /// metres away, dB: −frontToBack·(1 − cos θ)/2, 0 without an antenna pattern.
    func antennaGain(_ gateway: Venue.Gateway, offset: (dx: Double, dy: Double), distance: Double) -> Double {
        guard let antenna = gateway.antenna, antenna.frontToBackDB > 0 else { return 0 }
        let cosine = antenna.cosine(towardsX: offset.dx, y: offset.dy, distance: distance)
        return -antenna.frontToBackDB * (1 - cosine) / 2
    }

    /// The slowly varying part of the RSSI at `gateway` from a tag at `position` whose P0 is `tagP0`:
    /// everything but fading and per-packet noise. `bodyFactor` (0…1) is how much of the carrier's body is in the way.
    /// Without `shadowed`, the static shadowing is left out (what `PositionOracle.Knowledge.unshadowed` knows).
    public func meanRSSI(
        tagP0: Double, at position: Point, gateway id: GatewayID, bodyFactor: Double, shadowed: Bool = true
    ) -> Double? {
        guard let gateway = gateways[id] else { return nil }
        let dx = position.x - gateway.position.x
        let dy = position.y - gateway.position.y
        let dz = gateway.height - Self.tagHeight
        let distance = max(0.1, (dx * dx + dy * dy + dz * dz).squareRoot())
        return tagP0 - pathLoss(distance: distance) - wallLoss(from: position, to: gateway.position)
            - settings.bodyLossDB * min(max(bodyFactor, 0), 1)
            + (shadowed ? staticShadowing(id, at: position) : 0)
            + (gains[id] ?? 0) + antennaGain(gateway, offset: (dx, dy), distance: distance)
    }

    /// The slowly varying part of the RSSI at gateway `rx` of gateway `tx`'s own beacon, whose power at
    /// 1 m is `txP0`: the same law as for tags, between the two mounting heights, with both antennas' patterns, and
    /// no body in the way. Nil for an unknown gateway or a gateway hearing itself.
    public func meanLinkRSSI(txP0: Double, from tx: GatewayID, to rx: GatewayID) -> Double? {
        guard tx != rx, let sender = gateways[tx], let receiver = gateways[rx] else { return nil }
        let dx = sender.position.x - receiver.position.x
        let dy = sender.position.y - receiver.position.y
        let dz = sender.height - receiver.height
        let distance = max(0.1, (dx * dx + dy * dy + dz * dz).squareRoot())
        return txP0 - pathLoss(distance: distance) - wallLoss(from: sender.position, to: receiver.position)
            + staticShadowing(rx, at: sender.position) + (gains[rx] ?? 0)
            + antennaGain(receiver, offset: (dx, dy), distance: distance)
            + antennaGain(sender, offset: (-dx, -dy), distance: distance)
    }

    /// One advertisement at one gateway: noise (with occasional deep fades), packet loss and sensitivity applied to
    /// `mean + fading`. Nil when the gateway does not hear it. With a foreign radio, the packet is heard its way
    /// instead (`ForeignRadio.receive`: it needs the gateway, and the position the packet was sent from).
    public func receive(
        mean: Double, fading: Double, gateway: GatewayID? = nil, from position: Point? = nil,
        using rng: inout some RandomNumberGenerator
    ) -> Int? {
        if Double.random(in: 0..<1, using: &rng) < settings.packetLoss { return nil }
        if let foreign, let gateway, let position {
            return foreign.receive(level: mean + fading, gateway: gateway, position: position, using: &rng)
        }
        var rssi = mean + fading + settings.noiseSigma * rng.gaussian()
        if Double.random(in: 0..<1, using: &rng) < settings.deepFadeShare { rssi -= settings.deepFadeDB }
        guard rssi >= settings.sensitivity else { return nil }
        return Int(rssi.rounded())
    }
}

/// Slow fading of one (tag, gateway) link: AR(1) with standard deviation σ and time constant τ, advanced by the real
/// time between advertisements, so tags advertising at different rates fade alike in seconds.
public struct FadingProcess: Sendable {
    public private(set) var value: Double
    let sigma: Double
    let tau: Double

    /// Starts from the stationary distribution.
    public init(sigma: Double, tau: Double, using rng: inout some RandomNumberGenerator) {
        self.sigma = sigma
        self.tau = tau
        value = sigma * rng.gaussian()
    }

    /// The value `dt` seconds later.
    public mutating func advance(by dt: Double, using rng: inout some RandomNumberGenerator) -> Double {
        let a = exp(-max(dt, 0) / tau)
        value = a * value + sigma * (1 - a * a).squareRoot() * rng.gaussian()
        return value
    }
}
