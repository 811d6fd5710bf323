import BeaconModel

/// Each gateway beacon's advertising interval, estimated from when the other gateways heard it: what `beacon-hub
/// replay` gives the links' fit, since a recording of sightings carries no gateway status (the live hub reads the
/// interval from the status). The links' fit counts the advertisements a transmitter sent from its interval, so an
/// interval taken wrongly makes every weak link look lost and bends the fitted exponent.
///
/// The gaps between one receiver's receptions of one transmitter are whole multiples of the interval (a lost
/// advertisement doubles a gap), plus jitter. Among them the single intervals are the most common as long as less than
/// half the advertisements are lost, and the shortest: the estimate is the median of the gaps within ±50 % of the
/// gaps' 10th percentile. Pure: the caller feeds it receptions in time order per link.
struct AdvertisingIntervals: Sendable {
    private struct Link: Hashable {
        var tx: GatewayID
        var rx: GatewayID
    }

    private var last: [Link: Double] = [:]
    /// Per transmitter, its latest gaps (a ring of `keptGaps`), and where the next one goes.
    private var gaps: [GatewayID: [Double]] = [:]
    private var next: [GatewayID: Int] = [:]

    /// Gaps kept per transmitter: enough for a stable median, few enough to follow an interval that changes.
    static let keptGaps = 2_048
    /// No estimate from fewer gaps.
    static let minimumGaps = 20
    /// Shorter gaps are the same advertisement heard twice (or clock jitter), not an interval: BLE allows 20 ms at
    /// the least.
    static let shortestInterval = 0.015

    /// A reception of `tx`'s beacon by `rx` at scan time `t`.
    mutating func note(tx: GatewayID, rx: GatewayID, at t: Double) {
        let link = Link(tx: tx, rx: rx)
        defer { last[link] = max(t, last[link] ?? t) }
        guard let previous = last[link] else { return }
        let gap = t - previous
        guard gap >= Self.shortestInterval else { return }
        // In place: a copy taken out of the dictionary and put back copied the whole ring on every reception.
        if gaps[tx, default: []].count < Self.keptGaps {
            gaps[tx, default: []].append(gap)
        } else {
            let index = next[tx] ?? 0
            gaps[tx, default: []][index] = gap
            next[tx] = (index + 1) % Self.keptGaps
        }
    }

    /// The estimate for each transmitter with enough gaps, seconds.
    var estimates: [GatewayID: Double] {
        var result: [GatewayID: Double] = [:]
        for (tx, kept) in gaps {
            if let estimate = Self.estimate(kept) { result[tx] = estimate }
        }
        return result
    }

    /// The interval `gaps` are multiples of, or nil from fewer than `minimumGaps`.
    static func estimate(_ gaps: [Double]) -> Double? {
        guard gaps.count >= minimumGaps else { return nil }
        let sorted = gaps.sorted()
        let low = sorted[sorted.count / 10]
        let single = sorted.filter { $0 >= 0.5 * low && $0 <= 1.5 * low }
        return single[single.count / 2]
    }
}
