import BeaconModel

/// What an operator of many tags asks: per tag its last Eddystone-TLM (battery, temperature, advert count,
/// uptime), its battery's trend from hourly readings, when and where it was last seen, and the alerts — each raised once
/// per episode: `tag-battery-low` (again only after the battery recovered), `tag-tlm-reset` (the advert count or the
/// uptime went back: battery changed, or the tag rebooted), `tag-missing` (a tag not heard for `missingAfterSeconds`,
/// per region if set) and `tag-found` (heard again). Pure: time is passed in; the hub's core owns one.
public struct TagHealth: Sendable {
    public struct Settings: Sendable, Hashable {
        /// A battery below this is low (a CR2032 tag's regulator stops near 2.4 V; most vendors warn at 2.6 V).
        public var batteryLowMilliVolts = 2600
        /// A low battery is over once it reads this much or more (a new cell; not a warm afternoon's bounce).
        public var batteryRecoveredMilliVolts = 2800
        /// A tag not heard for this long is missing.
        public var missingAfterSeconds = 86_400.0
        /// Per region id: its own `missingAfterSeconds`.
        public var missingAfterByRegion: [String: Double] = [:]
        /// How often tags advertise, for the rate expected of tags that send no TLM frame (iBeacon, AltBeacon).
        public var advertIntervalSeconds: Double?
        /// Per region id: its own `advertIntervalSeconds`.
        public var advertIntervalByRegion: [String: Double] = [:]
        /// Advertisements heard are counted in windows this long (aligned to the clock).
        public var advertWindowSeconds = 300.0

        public init() {}

        /// The shortest time after which any tag is missing.
        public var shortestMissingAfter: Double { missingAfterByRegion.values.reduce(missingAfterSeconds, min) }

        func missingAfter(region: String?) -> Double {
            region.flatMap { missingAfterByRegion[$0] } ?? missingAfterSeconds
        }

        func advertInterval(region: String?) -> Double? {
            region.flatMap { advertIntervalByRegion[$0] } ?? advertIntervalSeconds
        }
    }

    /// One TLM reading as the hub keeps it.
    public struct Reading: Sendable, Hashable {
        public var t: Double
        public var milliVolts: Int?
        public var temperature: Double?
        public var advertisingCount: UInt32?
        public var uptime: Double?

        public init(
            t: Double, milliVolts: Int?, temperature: Double? = nil, advertisingCount: UInt32? = nil,
            uptime: Double? = nil
        ) {
            self.t = t
            self.milliVolts = milliVolts
            self.temperature = temperature
            self.advertisingCount = advertisingCount
            self.uptime = uptime
        }
    }

    /// A tag's battery as its retained state and the API show it.
    public typealias Battery = TagState.Battery

    public struct Alert: Sendable, Hashable {
        public var code: String
        public var tag: TagID
        public var t: Double
        public var reason: String
    }

    struct Record: Sendable {
        var region: String?
        var last: Reading?
        /// One battery reading per hour (the hour's last), oldest first, at most `keptHours`.
        var hourly: [(hour: Int, milliVolts: Int)] = []
        var lastSeen: Double?
        var lastZone: ZoneID?
        var lastGateway: GatewayID?
        var batteryLow = false
        var missing = false
        /// Advertisements heard per gateway in the window that began at `countingSince`; `partial` when counting began
        /// after the window's start (the hub's first sighting of the tag, or its first after a gap): such a window
        /// says nothing of the rate and is not reported.
        var countingSince = -Double.infinity
        var counts: [GatewayID: Int] = [:]
        var partial = true
        /// The last whole window counted: the best gateway's advertisements a minute, and the window's end.
        var seenPerMinute: Double?
        var seenUntil = 0.0
        /// Advertisements a minute the tag sends, from two TLM frames at least `sentRateSeconds` apart; the older one.
        var sentPerMinute: Double?
        var sentFrom: (count: UInt32, uptime: Double)?
    }

    /// Eight weeks of hourly readings: enough for a trend, small enough for thousands of tags.
    static let keptHours = 8 * 7 * 24
    /// The uptime may read a little less than before without a reboot (the tag's clock, rounding).
    static let uptimeSlackSeconds = 10.0
    /// Two TLM frames at least this far apart (by the tag's uptime) give the rate it sends at: closer, the advert
    /// count's whole steps are too coarse.
    static let sentRateSeconds = 60.0

    public var settings: Settings
    var records: [TagID: Record] = [:]
    /// Tags whose record changed since they were last handed to the store (`takeChanges`), and what was handed.
    var changed: Set<TagID> = []
    var saved: [TagID: (at: Double, low: Bool, missing: Bool)] = [:]
    /// When watching began (the hub's start): silence counts from here at the earliest. A tag named in the
    /// configuration but never heard is missing `missingAfter` after it, and so is a tag restored from the store and
    /// not heard since: what happened while no hub ran (or since the store last saved the tag) is not known.
    var watchingSince: Double?

    public init(settings: Settings = Settings()) {
        self.settings = settings
    }

    /// The tag was last heard at `t` (any frame): a missing tag heard after it went missing is found. The same `t` again
    /// (its state published once more) finds nothing.
    public mutating func seen(
        _ tag: TagID, region: String?, zone: ZoneID?, gateway: GatewayID?, at t: Double
    ) -> [Alert] {
        var record = records[tag] ?? Record()
        record.region = region ?? record.region
        var alerts: [Alert] = []
        if record.missing, record.lastSeen.map({ t > $0 }) ?? true {
            record.missing = false
            let away = record.lastSeen.map { " after \(Self.duration(t - $0)) unheard" } ?? ""
            alerts.append(
                Alert(
                    code: "tag-found", tag: tag, t: t,
                    reason: "\(tag) is heard again" + (gateway.map { " by \($0)" } ?? "") + away))
        }
        if (record.lastSeen ?? -.infinity) < t { changed.insert(tag) }
        if (record.lastSeen ?? -.infinity) <= t {
            record.lastSeen = t
            record.lastZone = zone ?? record.lastZone
            record.lastGateway = gateway ?? record.lastGateway
        }
        records[tag] = record
        return alerts
    }

    /// One advertisement of the tag heard by `gateway` at `t` (every sighting: cheap, in place). A sighting of the
    /// window before the one being counted (another gateway's late batch) counts in the current one; older ones (an
    /// outbox drained after an outage) are not counted, or the rate would read above what the tag sends.
    public mutating func heard(_ tag: TagID, by gateway: GatewayID, at t: Double) {
        let window = settings.advertWindowSeconds
        if records[tag] == nil { records[tag] = Record() }
        let counting = records[tag]!.countingSince
        if t >= counting + window {
            let start = (t / window).rounded(.down) * window
            let record = records[tag]!
            if let best = record.counts.values.max(), counting.isFinite, !record.partial {
                records[tag]!.seenPerMinute = Double(best) / window * 60
                records[tag]!.seenUntil = counting + window
            }
            // Whole when it follows the window just counted, or when the tag was heard from its very start.
            records[tag]!.partial = start != counting + window && t > start
            records[tag]!.countingSince = start
            records[tag]!.counts.removeAll(keepingCapacity: true)
        } else if t < counting - window {
            return
        }
        records[tag]!.counts[gateway, default: 0] += 1
    }

    /// A TLM frame of the tag.
    public mutating func observe(_ reading: Reading, of tag: TagID) -> [Alert] {
        var record = records[tag] ?? Record()
        var alerts: [Alert] = []
        if let previous = record.last, reading.t >= previous.t {
            var went: [String] = []
            if let count = reading.advertisingCount, let before = previous.advertisingCount, count < before {
                went.append("advert count \(before) → \(count)")
            }
            if let uptime = reading.uptime, let before = previous.uptime, uptime < before - Self.uptimeSlackSeconds {
                went.append("uptime \(Self.duration(before)) → \(Self.duration(uptime))")
            }
            if !went.isEmpty {
                alerts.append(
                    Alert(
                        code: "tag-tlm-reset", tag: tag, t: reading.t,
                        reason: "\(tag)'s telemetry went back (\(went.joined(separator: ", "))): its battery was "
                            + "changed or it rebooted"))
            }
        }
        if let milliVolts = reading.milliVolts, milliVolts > 0 {
            let hour = Int((reading.t / 3600).rounded(.down))
            if record.hourly.last?.hour == hour {
                record.hourly[record.hourly.count - 1].milliVolts = milliVolts
            } else if (record.hourly.last?.hour ?? .min) < hour {
                record.hourly.append((hour, milliVolts))
                if record.hourly.count > Self.keptHours {
                    record.hourly.removeFirst(record.hourly.count - Self.keptHours)
                }
            }
            if !record.batteryLow && milliVolts < settings.batteryLowMilliVolts {
                record.batteryLow = true
                var falling = ""
                if let slope = Self.trend(record.hourly), slope < 0 { falling = ", falling \(Int(-slope)) mV a week" }
                alerts.append(
                    Alert(
                        code: "tag-battery-low", tag: tag, t: reading.t,
                        reason: "\(tag)'s battery reads \(milliVolts) mV, below \(settings.batteryLowMilliVolts) mV"
                            + falling + ": replace it"))
            } else if record.batteryLow && milliVolts >= settings.batteryRecoveredMilliVolts {
                record.batteryLow = false
            }
        }
        // The rate it sends at, from the newest frames only (a late batch's older frame would span a reset).
        if let count = reading.advertisingCount, let uptime = reading.uptime,
            (record.last?.t ?? -.infinity) <= reading.t
        {
            if let from = record.sentFrom, count >= from.count, uptime >= from.uptime - Self.uptimeSlackSeconds {
                if uptime - from.uptime >= Self.sentRateSeconds {
                    record.sentPerMinute = Double(count - from.count) / (uptime - from.uptime) * 60
                    record.sentFrom = (count, uptime)
                }
            } else {
                // The first frame, or a new cell or reboot: the rate starts again from here.
                record.sentFrom = (count, uptime)
            }
        }
        if (record.last?.t ?? -.infinity) <= reading.t { record.last = reading }
        records[tag] = record
        changed.insert(tag)
        return alerts
    }

    /// Tags not heard for their region's `missingAfterSeconds` (and `named` tags never heard since watching began):
    /// `tag-missing`, once until they are heard again.
    public mutating func check(at now: Double, named: [(tag: TagID, region: String?)] = []) -> [Alert] {
        if watchingSince == nil { watchingSince = now }
        for (tag, region) in named where records[tag] == nil { records[tag] = Record(region: region) }
        var alerts: [Alert] = []
        for (tag, record) in records where !record.missing {
            // Only silence this hub saw counts: a restored tag's last sighting may be older than it was at the stop
            // (saves are minutes apart) or a crash, and nobody listened while no hub ran.
            let since = max(record.lastSeen ?? -.infinity, watchingSince!)
            let limit = settings.missingAfter(region: record.region)
            guard now - since >= limit else { continue }
            records[tag]!.missing = true
            changed.insert(tag)
            var reason = "\(tag) has not been heard for \(Self.duration(now - since))"
            if let lastSeen = record.lastSeen {
                if lastSeen < since { reason += " since the hub started" }
                reason +=
                    "; last in " + (record.lastZone.map { "\($0)" } ?? "no zone")
                    + (record.lastGateway.map { ", by \($0)" } ?? "")
            } else {
                reason += ", since the hub started"
            }
            alerts.append(Alert(code: "tag-missing", tag: tag, t: now, reason: reason))
        }
        return alerts.sorted { $0.tag.rawValue < $1.tag.rawValue }
    }

    /// The tag's last battery reading, its level and trend; nil when it has sent none.
    public func battery(of tag: TagID) -> Battery? {
        guard let record = records[tag], let last = record.last, let milliVolts = last.milliVolts, milliVolts > 0
        else { return nil }
        return Battery(
            milliVolts: milliVolts, level: record.batteryLow || milliVolts < settings.batteryLowMilliVolts ? .low : .ok,
            t: last.t, trendPerWeek: Self.trend(record.hourly))
    }

    /// The tag's last TLM reading.
    public func telemetry(of tag: TagID) -> Reading? { records[tag]?.last }

    /// When, where and by which gateway the tag was last heard.
    public func lastSeen(of tag: TagID) -> (t: Double, zone: ZoneID?, gateway: GatewayID?)? {
        guard let record = records[tag], let t = record.lastSeen else { return nil }
        return (t, record.lastZone, record.lastGateway)
    }

    public func isMissing(_ tag: TagID) -> Bool { records[tag]?.missing ?? false }

    /// Its advertisements heard against sent, once a whole window was counted.
    public func adverts(of tag: TagID) -> TagState.Adverts? {
        guard let record = records[tag], let seen = record.seenPerMinute else { return nil }
        let expected = record.sentPerMinute ?? settings.advertInterval(region: record.region).map { 60 / $0 }
        return TagState.Adverts(
            seenPerMinute: (seen * 100).rounded() / 100, expectedPerMinute: expected.map { ($0 * 100).rounded() / 100 },
            t: record.seenUntil)
    }

    /// Adds what is known of the tag's health to its retained state: where it was last heard, its battery and last TLM
    /// frame, and `missing` while it is.
    public func decorate(_ state: inout TagState) {
        guard let record = records[state.tag] else { return }
        state.lastSeenZone = record.lastSeen == nil ? nil : record.lastZone
        state.lastSeenGateway = record.lastSeen == nil ? nil : record.lastGateway
        state.battery = battery(of: state.tag)
        state.telemetry = record.last.map {
            TagState.TagTelemetry(
                t: $0.t, temperatureCelsius: $0.temperature, advertisingCount: $0.advertisingCount,
                secondsSinceBoot: $0.uptime)
        }
        state.missing = record.missing ? true : nil
        state.adverts = adverts(of: state.tag)
    }

    // MARK: Kept in the store

    /// A tag's health as the store keeps it: the record, and its battery's latest hourly reading.
    public struct Saved: Sendable, Hashable {
        public var tag: TagID
        public var region: String?
        public var lastSeen: Double?
        public var lastZone: ZoneID?
        public var lastGateway: GatewayID?
        public var batteryLow: Bool
        public var missing: Bool
        public var last: Reading?
        /// The hour (unix seconds / 3600) and millivolts of the newest hourly reading.
        public var hourly: (hour: Int, milliVolts: Int)?
        /// The hour's before it: its last reading may have come after it was last saved (saves are minutes apart).
        public var previousHour: (hour: Int, milliVolts: Int)? = nil

        public static func == (a: Saved, b: Saved) -> Bool {
            a.tag == b.tag && a.region == b.region && a.lastSeen == b.lastSeen && a.lastZone == b.lastZone
                && a.lastGateway == b.lastGateway && a.batteryLow == b.batteryLow && a.missing == b.missing
                && a.last == b.last && a.hourly?.hour == b.hourly?.hour && a.hourly?.milliVolts == b.hourly?.milliVolts
                && a.previousHour?.hour == b.previousHour?.hour
                && a.previousHour?.milliVolts == b.previousHour?.milliVolts
        }

        public func hash(into hasher: inout Hasher) { hasher.combine(tag) }
    }

    /// How often a tag heard without news (no alert, no change of its flags) is written again: its last seen and its
    /// battery's hour.
    public static let saveSeconds = 300.0

    /// The tags whose health changed since they were last taken, as the store keeps them: at once when a flag (low,
    /// missing) changed, otherwise at most every `saveSeconds` per tag; every change at once with `all` (a hub that
    /// stops saves what it knows, so that the next one carries on from there).
    public mutating func takeChanges(at now: Double, all: Bool = false) -> [Saved] {
        var taken: [Saved] = []
        for tag in changed {
            guard let record = records[tag] else {
                changed.remove(tag)
                continue
            }
            let before = saved[tag]
            let flagsMoved = before.map { $0.low != record.batteryLow || $0.missing != record.missing } ?? true
            guard all || flagsMoved || now - (before?.at ?? -.infinity) >= Self.saveSeconds else { continue }
            changed.remove(tag)
            saved[tag] = (now, record.batteryLow, record.missing)
            taken.append(
                Saved(
                    tag: tag, region: record.region, lastSeen: record.lastSeen, lastZone: record.lastZone,
                    lastGateway: record.lastGateway, batteryLow: record.batteryLow, missing: record.missing,
                    last: record.last, hourly: record.hourly.last, previousHour: record.hourly.dropLast().last))
        }
        return taken.sorted { $0.tag.rawValue < $1.tag.rawValue }
    }

    /// Carries on from the store: each tag's record, and its hourly readings (oldest first). An alert already raised
    /// (low, missing) is not raised again.
    public mutating func restore(_ saved: [Saved], hourly: [TagID: [(hour: Int, milliVolts: Int)]], at now: Double) {
        for entry in saved {
            var record = Record()
            record.region = entry.region
            record.last = entry.last
            record.hourly = Array((hourly[entry.tag] ?? []).suffix(Self.keptHours))
            record.lastSeen = entry.lastSeen
            record.lastZone = entry.lastZone
            record.lastGateway = entry.lastGateway
            record.batteryLow = entry.batteryLow
            record.missing = entry.missing
            records[entry.tag] = record
            self.saved[entry.tag] = (now, entry.batteryLow, entry.missing)
        }
    }

    /// mV per week: the least-squares slope of the hourly readings since the battery last rose by more than 100 mV (a
    /// new cell starts a new line); nil with less than a day of them.
    static func trend(_ hourly: [(hour: Int, milliVolts: Int)]) -> Double? {
        var start = 0
        for index in hourly.indices.dropFirst() where hourly[index].milliVolts - hourly[index - 1].milliVolts > 100 {
            start = index
        }
        let points = hourly[start...]
        guard let first = points.first, let last = points.last, last.hour - first.hour >= 24, points.count >= 6 else {
            return nil
        }
        let n = Double(points.count)
        let meanX = points.map { Double($0.hour) }.reduce(0, +) / n
        let meanY = points.map { Double($0.milliVolts) }.reduce(0, +) / n
        var sxy = 0.0
        var sxx = 0.0
        for point in points {
            sxy += (Double(point.hour) - meanX) * (Double(point.milliVolts) - meanY)
            sxx += (Double(point.hour) - meanX) * (Double(point.hour) - meanX)
        }
        guard sxx > 0 else { return nil }
        return sxy / sxx * 24 * 7
    }

    static func duration(_ seconds: Double) -> String {
        let seconds = max(0, seconds)
        if seconds >= 2 * 86_400 { return "\(Int(seconds / 86_400)) days" }
        if seconds >= 2 * 3600 { return "\(Int(seconds / 3600)) h" }
        if seconds >= 120 { return "\(Int(seconds / 60)) min" }
        return "\(Int(seconds)) s"
    }
}
