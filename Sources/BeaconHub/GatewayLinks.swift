import BeaconModel
import Dashboard
import ZoneInference

/// What each gateway hears of the other gateways' own beacons: per directed link, the receptions' count
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
    /// Per link, the level it settled at (mean RSSI, dB), how many fit periods taught it and its receptions a period;
    /// per gateway, how many fits in a row found its links shifted, and the alert raised for it (`gateway-moved` /
    /// `gateway-degraded`).
    private var settled: [Key: (mean: Double, periods: Int, receptions: Double)] = [:]
    private var shifted: [GatewayID: (code: String, fits: Int)] = [:]
    private var raised: [GatewayID: LinkAlert] = [:]
    private var pendingAlerts: [LinkAlert] = []
    /// Gateways with links settled as of the last watch: a link between two of them that is loud and new has
    /// appeared (`watch`). A gateway learned afresh (`relearn`) is left out until its links settle again.
    private var established = Set<GatewayID>()

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

    /// The latest fit as the hub's status carries it (rounded to 0.1 dB, 0.01 for the exponent).
    public func statusSummary(applied: Bool) -> HubStatus.Links? {
        guard let fit, let fittedAt else { return nil }
        func rounded(_ estimate: LinkCalibration.Estimate, _ scale: Double = 10) -> HubStatus.Links.Estimate {
            .init(value: (estimate.value * scale).rounded() / scale, sigma: (estimate.sigma * scale).rounded() / scale)
        }
        let antennas = Dictionary(
            uniqueKeysWithValues: fit.antennaFrontToBack.map { ($0.key.rawValue, rounded($0.value)) })
        return HubStatus.Links(
            t: fittedAt, linksUsed: fit.linksUsed, residualDB: (fit.residualSigma * 10).rounded() / 10,
            gains: Dictionary(uniqueKeysWithValues: fit.receiveGains.map { ($0.key.rawValue, rounded($0.value)) }),
            pathLossExponent: rounded(fit.pathLossExponent, 100), applied: applied,
            gainsApplied: applied ? LearnedRadio(fit).gains.keys.sorted() : nil,
            antennas: antennas.isEmpty ? nil : antennas)
    }

    /// Forgets receptions scanned before `t`.
    public mutating func forget(before t: Double) {
        let first = Int((t / Self.bucketSeconds).rounded(.down))
        for key in Array(buckets.keys) {
            buckets[key] = buckets[key]!.filter { $0.key >= first }
            if buckets[key]!.isEmpty { buckets[key] = nil }
        }
    }

    /// A gateway whose links shifted lastingly: `gateway-moved` when they shifted each its own way (louder to some
    /// gateways, quieter to others: it is somewhere else), `gateway-degraded` when they all fell together (antenna
    /// blocked, adapter failing); the reason gives the evidence, link by link.
    public struct LinkAlert: Sendable, Hashable {
        public var code: String
        public var gateway: GatewayID
        public var reason: String
        /// Scan time of the fit that raised it.
        public var t: Double
        /// For `gateway-moved`: where its links say it is now (`LinkCalibration.locate`), when they say.
        public var fix: LinkCalibration.Fix? = nil

        /// The alert as the event contract's `alert` (the live hub publishes it, a replay writes it).
        public var event: ZoneEvent {
            ZoneEvent(
                type: .alert, tag: nil, zone: nil, t: t, confidence: 1, reason: reason, code: code, gateway: gateway,
                estimatedPosition: estimatedPosition)
        }

        /// `fix` as the alert's event and the dashboard carry it (to 0.1 m).
        public var estimatedPosition: EstimatedPosition? {
            fix.map { fix in
                func rounded(_ metres: Double) -> Double { (metres * 10).rounded() / 10 }
                return EstimatedPosition(
                    x: rounded(fix.position.x), y: rounded(fix.position.y), withinMetres: rounded(fix.withinMetres),
                    movedMetres: rounded(fix.movedMetres))
            }
        }
    }

    /// The alert in force for each gateway whose links have not come back since it was raised (the dashboard marks
    /// the gateway on the plan).
    public var alertsInForce: [GatewayID: LinkAlert] { raised }

    /// A link's level settles over this many fit periods before it is watched; a gateway is alerted after this many
    /// fits in a row found its links shifted.
    static let settlePeriods = 2
    static let lastingFits = 2
    /// All of a gateway's links down by at least this (dB), within `degradedSpreadDB` of each other: degraded.
    static let degradedShiftDB = 6.0
    static let degradedSpreadDB = 4.0
    /// Its links shifted each their own way by this much (RMS about their mean shift, dB): moved. Or less, when its
    /// links place it (`LinkCalibration.locate`) at least `movedMetres` from its place in the venue file, farther than
    /// the fix's radius, and explain it there better by `movedEvidence` (Δχ²): links that all grew louder together (a
    /// gateway brought in from outside), or weak links lost and others gained. Not the 13.8 of p = 0.001 for two
    /// coordinates: each link's shadowing is the same packet after packet, so a gateway where it stands scores up to
    /// 14 (`theLinksPlaceAGatewayThatStayedWhereItIs`); the five moves of training seeds 1–60 named this way scored
    /// 23 to 107 (`scripts/gateway-moves.sh`).
    static let movedSpreadDB = 5.0
    static let movedMetres = 3.0
    static let movedEvidence = 20.0
    static let watchedLinks = 3
    /// A link counts as shifted by this much (dB); most of a gateway's links must be.
    static let linkShiftDB = 3.0
    /// A link heard this many times a period that is heard fewer than 10 times the next (`lost`), or the reverse
    /// between two gateways whose links had settled (`appeared`), counts as shifted to the receiver's sensitivity
    /// from where it was: a fall or rise in the share heard of five times or more. Its mean could not say so: what
    /// a receiver hears of a link near its sensitivity is the link's loud packets, about the same level however weak
    /// the link is.
    static let clearReceptions = 50.0
    /// Links whose level was and is within this of the receiver's sensitivity are left out of the judgement, for the
    /// same reason (unless lost or appeared).
    static let censoredMarginDB = 6.0

    /// A link as `watch` compares it: where it settled and its level over the last period (`lost`: heard no more,
    /// taken at the receiver's sensitivity).
    struct WatchedLink {
        var key: Key
        var before: Double
        var after: Double
        var lost: Bool
        /// Heard now, never before: taken as at the receiver's sensitivity before.
        var appeared: Bool
    }

    /// What a gateway's links say of it, when they say it is moved or degraded.
    struct Judgement {
        var code: String
        var links: [WatchedLink]
        var mean: Double
        var spread: Double
        var shiftedShare: Double
    }

    /// `gateway-moved` or `gateway-degraded` for a gateway whose `links` (at least `watchedLinks`) mostly shifted by
    /// `linkShiftDB` or more, or nil. Moved wants links shifted both ways round (its beacon heard differently and it
    /// hearing differently): a beacon that stopped, with its receiver as before, is not a move. It wants them shifted
    /// with two other gateways at least: when only its links with one other changed, either of the two may have moved,
    /// and the other's own links tell which. Links shifted each their own way by `movedSpreadDB` are a move; fewer
    /// are when `locating` (where its links place it now) places it clearly elsewhere.
    static func judge(
        _ links: [WatchedLink], of gateway: GatewayID, locating: () -> LinkCalibration.Fix? = { nil }
    ) -> Judgement? {
        guard links.count >= Self.watchedLinks else { return nil }
        let shifts = links.map { $0.after - $0.before }
        let mean = shifts.reduce(0, +) / Double(shifts.count)
        let spread = (shifts.map { ($0 - mean) * ($0 - mean) }.reduce(0, +) / Double(shifts.count)).squareRoot()
        // Most of its own links shifted: a neighbour of a moved gateway sees one link change, not most of its.
        let shifted = links.filter { abs($0.after - $0.before) >= Self.linkShiftDB }
        guard 2 * shifted.count >= links.count else { return nil }
        let share = Double(shifted.count) / Double(links.count)
        var judgement = Judgement(code: "gateway-moved", links: links, mean: mean, spread: spread, shiftedShare: share)
        if mean <= -Self.degradedShiftDB && spread <= Self.degradedSpreadDB {
            judgement.code = "gateway-degraded"
            return judgement
        }
        let others = Set(shifted.map { $0.key.tx == gateway ? $0.key.rx : $0.key.tx })
        guard others.count >= 2, shifted.contains(where: { $0.key.tx == gateway }),
            shifted.contains(where: { $0.key.rx == gateway })
        else { return nil }
        if spread >= Self.movedSpreadDB { return judgement }
        guard let fix = locating(), fix.evidence >= Self.movedEvidence,
            fix.movedMetres >= max(Self.movedMetres, fix.withinMetres)
        else { return nil }
        return judgement
    }

    /// What `relearn` forgot.
    public struct Relearned: Sendable, Hashable {
        /// Links to or from the gateway whose receptions and settled levels were dropped.
        public var links: Int
        /// The alert in force for it, now cleared; nil when none was.
        public var cleared: LinkAlert?
    }

    /// Starts `gateway`'s links afresh, for a gateway whose new place or state is meant to stay (moved on purpose,
    /// an enclosure added): forgets their receptions, so the next fits learn its gain from what it hears now rather
    /// than from a window that straddles the change, and where they had settled, so they settle again at the new
    /// levels (two fit periods, during which the gateway is not watched), and clears its alert. The alert is not
    /// raised again for the change it accepted; a later lasting shift raises one as before.
    public mutating func relearn(_ gateway: GatewayID) -> Relearned {
        let keys = Set(buckets.keys).union(settled.keys).filter { $0.tx == gateway || $0.rx == gateway }
        for key in keys {
            buckets[key] = nil
            settled[key] = nil
        }
        established.remove(gateway)
        let cleared = raised.removeValue(forKey: gateway)
        shifted[gateway] = nil
        pendingAlerts.removeAll { $0.gateway == gateway }
        return Relearned(links: keys.count, cleared: cleared)
    }

    /// The alerts raised since the last call.
    public mutating func takeAlerts() -> [LinkAlert] {
        defer { pendingAlerts.removeAll() }
        return pendingAlerts
    }

    /// Compares each link's level over the last `period` seconds with where it settled, gateway by gateway. Links
    /// of a gateway under suspicion do not settle further, so a slow drift cannot teach the baseline its own fault.
    mutating func watch(at t: Double, period: Double, venue: Venue, sensitivity: Double) {
        let first = Int(((t - period) / Self.bucketSeconds).rounded(.down))
        var recentTallies: [Key: Tally] = [:]
        for (key, minutes) in buckets {
            var total = Tally()
            for (minute, tally) in minutes where minute >= first { total.merge(tally) }
            if total.count >= 10 { recentTallies[key] = total }
        }
        let recent = recentTallies.mapValues(\.meanRSSI)
        // A gateway is alive when it still hears another or is heard: one that is neither is offline (its own alert),
        // not moved.
        let alive = Set(recentTallies.keys.flatMap { [$0.tx, $0.rx] })
        var involved: [GatewayID: [WatchedLink]] = [:]
        for (key, base) in settled where base.periods >= Self.settlePeriods {
            var link = WatchedLink(
                key: key, before: base.mean, after: recent[key] ?? sensitivity, lost: false, appeared: false)
            if recent[key] == nil {
                // Heard clearly before and hardly now, both ends alive: it went quieter than the receiver hears.
                // Without this, a gateway taken far away kept only its links that changed least, and looked steady.
                guard base.receptions >= Self.clearReceptions, alive.contains(key.tx), alive.contains(key.rx)
                else { continue }
                link.lost = true
            } else if max(link.before, link.after) < sensitivity + Self.censoredMarginDB {
                continue
            }
            involved[key.tx, default: []].append(link)
            involved[key.rx, default: []].append(link)
        }
        // Heard clearly now and not before, between two gateways watched since before this period: it was quieter
        // than the receiver hears. Without this, a gateway moved next to others it had not heard settled its new
        // links at once, and kept too few of its old ones to be judged.
        for (key, tally) in recentTallies where settled[key] == nil && Double(tally.count) >= Self.clearReceptions {
            guard established.contains(key.tx), established.contains(key.rx) else { continue }
            let level = tally.meanRSSI
            let link = WatchedLink(key: key, before: sensitivity, after: level, lost: false, appeared: true)
            involved[key.tx, default: []].append(link)
            involved[key.rx, default: []].append(link)
        }
        established = Set(
            settled.filter { $0.value.periods >= Self.settlePeriods }.keys.flatMap { [$0.tx, $0.rx] })
        // The gateway that explains most is named first, and its links are then left out of the others' judgement:
        // the neighbours of a moved gateway see their links to it change, and one with few links of its own would
        // otherwise be named too.
        var suspects: [GatewayID: Judgement] = [:]
        // Where each gateway's links place it, found once per watch (a grid search), for its judgement and its alert.
        var fixes: [GatewayID: LinkCalibration.Fix?] = [:]
        func fix(of gateway: GatewayID) -> LinkCalibration.Fix? {
            if let known = fixes[gateway] { return known }
            let fix = locate(gateway, recent: recentTallies, venue: venue, sensitivity: sensitivity)
            fixes[gateway] = .some(fix)
            return fix
        }
        while true {
            var best: (gateway: GatewayID, judgement: Judgement)?
            for (gateway, links) in involved where suspects[gateway] == nil {
                let own = links.filter { link in
                    let other = link.key.tx == gateway ? link.key.rx : link.key.tx
                    return suspects[other] == nil
                }
                guard let judgement = Self.judge(own, of: gateway, locating: { fix(of: gateway) }) else { continue }
                if let current = best,
                    (current.judgement.shiftedShare, current.judgement.links.count, gateway.rawValue)
                        >= (judgement.shiftedShare, judgement.links.count, current.gateway.rawValue)
                {
                    continue
                }
                best = (gateway, judgement)
            }
            guard let best else { break }
            suspects[best.gateway] = best.judgement
        }
        for gateway in involved.keys where suspects[gateway] == nil && involved[gateway]!.count >= Self.watchedLinks {
            shifted[gateway] = nil
            raised[gateway] = nil
        }
        for (gateway, judgement) in suspects.sorted(by: { $0.key.rawValue < $1.key.rawValue }) {
            let code = judgement.code
            let links = judgement.links
            let fits = shifted[gateway]?.code == code ? shifted[gateway]!.fits + 1 : 1
            shifted[gateway] = (code, fits)
            guard fits >= Self.lastingFits, raised[gateway]?.code != code else { continue }
            let evidence = links.sorted { abs($0.after - $0.before) > abs($1.after - $1.before) }.prefix(6).map {
                "\($0.key.tx)→\($0.key.rx) " + ($0.appeared ? "unheard" : "\(Int($0.before.rounded()))") + "→"
                    + ($0.lost ? "unheard" : "\(Int($0.after.rounded())) dBm")
            }
            let what =
                code == "gateway-degraded"
                ? "all fell together (antenna blocked, adapter failing?)"
                : judgement.spread >= Self.movedSpreadDB
                    ? "shifted each its own way (moved?)" : "shifted, and place it elsewhere (moved?)"
            let found = code == "gateway-moved" ? fix(of: gateway) : nil
            let place = found.map { fix in
                String(
                    format:
                        "; heard now as if at (%.1f, %.1f), within %.0f m: %.0f m from where the hub has it, "
                        + "which explains its links worse by Δχ² %.0f",
                    fix.position.x, fix.position.y, fix.withinMetres.rounded(.up), fix.movedMetres, fix.evidence)
            }
            let lost = links.filter(\.lost).count
            let appeared = links.filter(\.appeared).count
            let news = [lost > 0 ? "\(lost) no longer heard" : nil, appeared > 0 ? "\(appeared) heard anew" : nil]
                .compactMap { $0 }
            let alert = LinkAlert(
                code: code, gateway: gateway,
                reason: "\(gateway)'s \(links.count) links to other gateways \(what) for \(fits) fits in a row"
                    + (news.isEmpty ? "" : " (\(news.joined(separator: ", ")))") + ": "
                    + "mean shift \(String(format: "%+.1f", judgement.mean)) dB, spread "
                    + "\(String(format: "%.1f", judgement.spread)) dB; " + evidence.joined(separator: ", ")
                    + (place ?? ""),
                t: t, fix: found)
            raised[gateway] = alert
            pendingAlerts.append(alert)
        }
        // Settle the links of gateways not in question.
        for (key, after) in recent where suspects[key.tx] == nil && suspects[key.rx] == nil {
            let receptions = Double(recentTallies[key]!.count)
            let base = settled[key] ?? (after, 0, receptions)
            let periods = base.periods + 1
            let weight = 1 / Double(min(periods, 6))
            settled[key] = (
                base.mean + weight * (after - base.mean), periods,
                base.receptions + weight * (receptions - base.receptions)
            )
        }
    }

    /// Where `gateway`'s links say it is now: each link to or from it heard in the last period (`recent`), and each
    /// that had settled and is no longer heard, against the latest fit (`LinkCalibration.locate`).
    func locate(
        _ gateway: GatewayID, recent: [Key: Tally], venue: Venue, sensitivity: Double
    ) -> LinkCalibration.Fix? {
        guard let fit else { return nil }
        var heard: [LinkCalibration.Heard] = []
        for key in Set(recent.keys).union(settled.keys) where key.tx == gateway || key.rx == gateway {
            let tally = recent[key]
            let power = tally?.measuredPower ?? buckets[key]?.values.compactMap(\.measuredPower).first
            heard.append(
                LinkCalibration.Heard(
                    other: key.tx == gateway ? key.rx : key.tx, outgoing: key.tx == gateway,
                    meanRSSI: tally?.meanRSSI, measuredPower: power.map(Double.init) ?? -59))
        }
        heard.sort { ($0.other.rawValue, $0.outgoing ? 0 : 1) < ($1.other.rawValue, $1.outgoing ? 0 : 1) }
        return LinkCalibration.locate(gateway, heard: heard, venue: venue, fit: fit, sensitivity: sensitivity)
    }

    /// Whether `fitIfDue` would fit at scan time `t`: links were heard and the period is over. Cheap, for callers that
    /// would otherwise gather its arguments on every tick or sighting.
    public func isFitDue(at t: Double) -> Bool { t >= nextFit && !buckets.isEmpty }

    /// When `settings.linkFitSeconds` have passed since the last fit (scan time `t`): fits the links of the last
    /// `linkWindowSeconds` (`LinkCalibration`) and returns what the engine should take from it (nil when nothing is
    /// due, no link counts, or `linkFitSeconds` is 0, which only reports). `intervals`: each transmitter's
    /// advertising interval, seconds, from its status.
    public mutating func fitIfDue(
        at t: Double, venue: Venue, settings: InferenceSettings, intervals: [GatewayID: Double]
    ) -> LearnedRadio? {
        guard isFitDue(at: t) else { return nil }
        let period = settings.linkFitSeconds > 0 ? settings.linkFitSeconds : 300
        nextFit = t + period
        forget(before: t - settings.linkWindowSeconds)
        watch(at: t, period: period, venue: venue, sensitivity: settings.sensitivity)
        guard
            let result = LinkCalibration.solve(
                venue: venue, links: calibrationLinks(intervals: intervals),
                nominalExponent: settings.pathLossExponent)
        else { return nil }
        fit = result
        fittedAt = t
        return settings.linkFitSeconds > 0
            ? LearnedRadio(result, walls: settings.linkWallLosses, antennas: settings.linkAntennas) : nil
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

extension LiveBoard.LinkAlert {
    /// The alert as the dashboard shows it.
    init(_ alert: GatewayLinks.LinkAlert) {
        self.init(code: alert.code, reason: alert.reason, t: alert.t, estimatedPosition: alert.estimatedPosition)
    }
}
