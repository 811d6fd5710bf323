/// How long sightings take to reach the hub's engine: the smallest (arrival − newest scan time) of the batches of a
/// 5 s window, i.e. the delay every gateway's batches share (a busy hub's own backlog, a slow link, long agent batches).
/// The smallest, so that one gateway resending an old backlog does not count as lag.
///
/// The engine's clock is held back by it: a hub whose input arrives 5 s late otherwise judges every reading stale
/// (older than `inference.staleSeconds`) at each tick and decides no zone at all. Late decisions, not none.
public struct DeliveryLag: Sendable, Hashable {
    /// Length of the window whose smallest lag is the estimate.
    public static let windowSeconds = 5.0

    /// The lag of the last full window (0 when it had no batch).
    public private(set) var seconds = 0.0
    var windowStart: Double?
    var least: Double?

    public init() {}

    /// Notes a batch whose newest sighting is `lag` seconds old on arrival at `now`.
    public mutating func note(_ lag: Double, at now: Double) {
        roll(at: now)
        least = min(least ?? lag, lag)
    }

    /// Ends the window when it is over.
    public mutating func roll(at now: Double) {
        guard let start = windowStart else {
            windowStart = now
            return
        }
        guard now - start >= Self.windowSeconds else { return }
        seconds = max(0, least ?? 0)
        least = nil
        windowStart = now
    }
}
