import BeaconModel
import ZoneInference

/// What each gateway hears of the other gateways' own beacons (issue 22): per directed link, the receptions' count
/// and RSSI sums, the raw material of `LinkCalibration`. The hub learns which beacon is which gateway from the
/// gateways' statuses (`selfBeacon`); their sightings go here instead of to the zone engine, so a gateway never shows
/// up as a tag.
public struct GatewayLinks: Sendable {
    public struct Key: Sendable, Hashable {
        /// The gateway whose beacon was heard, and the one that heard it.
        public var tx: GatewayID
        public var rx: GatewayID

        public init(tx: GatewayID, rx: GatewayID) {
            self.tx = tx
            self.rx = rx
        }
    }

    /// One link's receptions.
    public struct Tally: Sendable, Hashable {
        public var count = 0
        public var sum = 0.0
        public var squares = 0.0
        /// Scan times of the first and the latest reception.
        public var first = Double.infinity
        public var last = -Double.infinity
        /// The power at 1 m in the transmitter's frame, as the last sighting carried it.
        public var measuredPower: Int?

        public var meanRSSI: Double { count > 0 ? sum / Double(count) : .nan }

        mutating func merge(_ other: Tally) {
            count += other.count
            sum += other.sum
            squares += other.squares
            first = min(first, other.first)
            last = max(last, other.last)
            measuredPower = other.measuredPower ?? measuredPower
        }
        mutating func note(_ value: Double, at t: Double, power: Int?) {
            count += 1
            sum += value
            squares += value * value
            first = min(first, t)
            last = max(last, t)
            if let power { measuredPower = power }
        }

        public var rssiSigma: Double {
            guard count > 1 else { return 0 }
            return max(0, squares / Double(count) - meanRSSI * meanRSSI).squareRoot()
        }
    }

    /// Per link, its receptions by minute (scan time / `bucketSeconds`): the fit takes a sliding window of them.
    private var buckets: [Key: [Int: Tally]] = [:]
    static let bucketSeconds = 60.0
    /// Beacon id → the gateway advertising it.
    public private(set) var beacons: [String: GatewayID] = [:]
    /// The latest fit, when it was made (scan time), and whether what it taught went to the engine.
    public private(set) var fit: LinkCalibration.Result?
    public private(set) var fittedAt: Double?
    private var nextFit = -Double.infinity

    public init() {}

    /// Every link's receptions within the window kept.
    public var tallies: [Key: Tally] {
        buckets.mapValues { minutes in
            var total = Tally()
            for (_, tally) in minutes.sorted(by: { $0.key < $1.key }) { total.merge(tally) }
            return total
        }
    }

    /// Records that `gateway` advertises `beacon` (from its status); a gateway that changed its beacon loses the old
    /// one, and a beacon another gateway had announced moves to this one.
    public mutating func announce(_ announced: String, by gateway: GatewayID) {
        // Beacon ids are lowercase as decoders write them; an operator may have typed the UUID in capitals.
        let beacon = announced.lowercased()
        guard beacons[beacon] != gateway else { return }
        for (old, owner) in beacons where owner == gateway { beacons[old] = nil }
        beacons[beacon] = gateway
    }

    /// The gateway whose own beacon `beacon` is, if any. Asked for every sighting: without gateway beacons it costs
    /// no hashing.
    public func gateway(advertising beacon: String) -> GatewayID? { beacons.isEmpty ? nil : beacons[beacon] }

    /// One reception of `tx`'s beacon by `rx`.
    public mutating func note(tx: GatewayID, rx: GatewayID, rssi: Int, t: Double, measuredPower: Int?) {
        let value = Double(rssi)
        let minute = Int((t / Self.bucketSeconds).rounded(.down))
        buckets[Key(tx: tx, rx: rx), default: [:]][minute, default: Tally()].note(value, at: t, power: measuredPower)
    }

    /// Forgets receptions scanned before `t`.
    public mutating func forget(before t: Double) {
        let first = Int((t / Self.bucketSeconds).rounded(.down))
        for key in Array(buckets.keys) {
            buckets[key] = buckets[key]!.filter { $0.key >= first }
            if buckets[key]!.isEmpty { buckets[key] = nil }
        }
    }

    /// When `settings.linkFitSeconds` have passed since the last fit (scan time `t`): fits the links of the last
    /// `linkWindowSeconds` (`LinkCalibration`) and returns what the engine should take from it (nil when nothing is
    /// due, no link counts, or `linkFitSeconds` is 0, which only reports). `intervals`: each transmitter's
    /// advertising interval, seconds, from its status.
    public mutating func fitIfDue(
        at t: Double, venue: Venue, settings: InferenceSettings, intervals: [GatewayID: Double]
    ) -> LearnedRadio? {
        guard !buckets.isEmpty, t >= nextFit else { return nil }
        nextFit = t + (settings.linkFitSeconds > 0 ? settings.linkFitSeconds : 300)
        forget(before: t - settings.linkWindowSeconds)
        guard
            let result = LinkCalibration.solve(
                venue: venue, links: calibrationLinks(intervals: intervals),
                nominalExponent: settings.pathLossExponent)
        else { return nil }
        fit = result
        fittedAt = t
        return settings.linkFitSeconds > 0 ? LearnedRadio(result) : nil
    }

    /// The links for `LinkCalibration`. How many advertisements each transmitter sent is its interval (from its
    /// status; `defaultInterval` otherwise) over the span in which any gateway heard it; a frame without a measured
    /// power counts as `defaultPower`.
    public func calibrationLinks(
        intervals: [GatewayID: Double], defaultInterval: Double = 0.2, defaultPower: Double = -59
    ) -> [LinkCalibration.Link] {
        let tallies = self.tallies
        var spans: [GatewayID: (first: Double, last: Double)] = [:]
        for (key, tally) in tallies {
            let span = spans[key.tx] ?? (tally.first, tally.last)
            spans[key.tx] = (min(span.first, tally.first), max(span.last, tally.last))
        }
        return tallies.sorted { ($0.key.tx.rawValue, $0.key.rx.rawValue) < ($1.key.tx.rawValue, $1.key.rx.rawValue) }
            .map { key, tally in
                let span = spans[key.tx].map { $0.last - $0.first } ?? 0
                let interval = intervals[key.tx] ?? defaultInterval
                let sent = max(tally.count, Int((span / interval).rounded()) + 1)
                return LinkCalibration.Link(
                    tx: key.tx, rx: key.rx, meanRSSI: tally.meanRSSI, received: tally.count, sent: sent,
                    measuredPower: tally.measuredPower.map(Double.init) ?? defaultPower, rssiSigma: tally.rssiSigma)
            }
    }
}
