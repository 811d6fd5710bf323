#if canImport(Glibc)
    import Glibc
#endif

/// Robust smoothing of one (tag, gateway) link: an exponential average whose weight comes from the real time
/// between samples (a time constant in seconds, so 10 Hz and 0.1 Hz tags smooth alike in time), with each drop
/// clipped to 2.5 running deviations so that a deep fade or a body in the way moves the level only a little (Huber).
/// 24 bytes: the engine keeps one per tracked (tag, gateway) pair.
public struct RSSIFilter: Sendable, Hashable {
    /// Index of the gateway in the engine's venue model.
    public var gateway: Int32
    /// Smoothed level, dBm.
    public var level: Float
    /// Running mean absolute deviation, dB.
    public var deviation: Float
    /// Scan time of the last sample.
    public var lastSeen: Double

    static let clip: Float = 2.5
    static let deviationRange: ClosedRange<Float> = 1.5...12

    public init(gateway: Int32, rssi: Double, at t: Double) {
        self.gateway = gateway
        level = Float(rssi)
        deviation = 4
        lastSeen = t
    }

    /// Adds one sample. `robust` off gives the plain exponential average the baseline uses. A link silent for
    /// `resetAfter` seconds starts again from the new sample.
    public mutating func add(_ rssi: Double, at t: Double, tau: Double, resetAfter: Double, robust: Bool) {
        let dt = t - lastSeen
        if dt > resetAfter {
            self = RSSIFilter(gateway: gateway, rssi: rssi, at: t)
            return
        }
        // Samples out of order within the reorder window count as simultaneous.
        let alpha = Float(max(1 - exp(-max(dt, 0) / tau), 0.05))
        let innovation = Float(rssi) - level
        if robust {
            // Fades, bodies and multipath only ever take signal away: drops are clipped, rises are not, so that a
            // tag walking up to a gateway is seen at once.
            let bound = Self.clip * deviation
            level += alpha * max(innovation, -bound)
            let change = alpha * (abs(innovation) - deviation)
            deviation = min(max(deviation + change, Self.deviationRange.lowerBound), Self.deviationRange.upperBound)
        } else {
            level += alpha * innovation
        }
        lastSeen = max(lastSeen, t)
    }
}
