import Foundation

/// The hub's history, whichever database keeps it: a SQLite file (`HubStore`, one venue's hub) or a PostgreSQL
/// server shared by standby hubs and many sites (`PostgresHistory`, docs/storage.md). Both hold the same tables with
/// the same meaning and the same guarantees: a journal is committed in one transaction, and acknowledgements move
/// only over committed batches.
///
/// The requirements are what differs per database; the reports built on them (dwell groupings, routes, the
/// transition matrix, occupancy) are computed once, in the extension below.
public protocol HistoryStore: AnyObject, Sendable {
    /// Where the history is, for messages: a file path, or a server and database.
    var location: String { get }
    /// A visit that starts within this many seconds of the tag's previous exit continues the same trip.
    var tripGapSeconds: Double { get }

    /// Checks that the history belongs to `site` and was written with the same pseudonymisation (`keyID`), recording
    /// both the first time.
    func adopt(site: String, keyID: String?) async throws
    /// Records the venue's zones and gateways (names and positions, for reports and the dashboard).
    func describeVenue(zones: [HubStore.ZoneRow], gateways: [HubStore.GatewayRow]) async throws
    /// The acknowledgements, committed-but-unacknowledged batches and live tags a starting hub carries on from.
    func recover(recentBoots: Int) async throws -> HubStore.Recovered
    /// Writes `journal` in one transaction and returns the acknowledgements that moved. Throws `StoreError` with
    /// nothing written: the caller keeps the journal and tries again.
    func commit(_ journal: HubJournal, at now: Double) async throws -> HubStore.CommitResult
    /// Deletes raw sightings scanned before `cutoff` (retention). Returns how many went.
    func pruneSightings(before cutoff: Double) async throws -> Int
    /// Deletes hourly battery readings of hours before `cutoff` (retention). Returns how many went.
    func pruneBatteryReadings(before cutoff: Double) async throws -> Int
    /// Deletes every row about one tag (`HubStore.forget` says which).
    func forget(key: String, liveTag: String, beaconKey: String?) async throws -> HubStore.Forgotten
    /// A value of the `meta` table (`site`, `pseudonym_key`).
    func meta(_ key: String) async throws -> String?
    /// Ends the connection (and with it any writer lock).
    func close() throws
    /// Gives up writing for now (a hub stepping down to standby): a shared database's writer lock goes, so that the
    /// hub taking over can write. A SQLite file keeps its lock (no other hub writes it).
    func stopWriting() async

    /// The sites whose history this database holds, sorted (a SQLite file holds one).
    func sites() async throws -> [String]
    /// The same history, its queries reading `sites` (`nil`: every site). A SQLite file reads its one site whatever
    /// is asked.
    func reading(_ sites: [String]?) -> any HistoryStore

    /// Visits overlapping the filter's window, oldest first; `offset` skips that many (paging).
    func visits(_ filter: HubStore.VisitFilter, limit: Int?, offset: Int) async throws -> [HubStore.Visit]
    /// The hourly dwell statistics kept current as visits close, of hours overlapping [since, until).
    func hourlyDwell(zone: String?, since: Double?, until: Double?) async throws -> [HubStore.DwellRow]
    /// Dwell statistics of closed visits that entered in [since, until), grouped (`HistoryStore.computedDwell` says
    /// how; a database may compute the same figures itself).
    func dwell(
        by grouping: HubStore.DwellGrouping, zone: String?, since: Double?, until: Double?, timeZone: TimeZone
    ) async throws -> [HubStore.DwellRow]
    /// Closed visits that entered in [since, until), of `zone` or every zone.
    func closedVisits(zone: String?, since: Double?, until: Double?) async throws -> [HubStore.ClosedVisit]
    /// Transitions entered in [since, until).
    func transitions(since: Double?, until: Double?) async throws -> [HubStore.TransitionRow]
    /// The venue's zones as recorded (id, name), for reports that list empty zones too.
    func zones() async throws -> [(id: String, name: String?)]
    /// The venue's gateways as recorded, where the hub has them (a gateway placed from the dashboard where it was
    /// placed), sorted by id; a gateway recorded without a place is left out.
    func gateways() async throws -> [HubStore.GatewayRow]
    /// Events in [since, until), newest first, `offset` skipping that many.
    func events(_ filter: HubStore.EventFilter, limit: Int, offset: Int) async throws -> [HubStore.StoredEvent]

    /// Stores a new calibration version, numbered one past the newest, and returns it as stored.
    func addCalibration(_ version: CalibrationVersion) async throws -> CalibrationVersion
    /// The site's calibration versions, newest first, without their bodies.
    func calibrationVersions() async throws -> [CalibrationVersion]
    /// One version with its body; nil when there is none of that number.
    func calibration(version: Int) async throws -> CalibrationVersion?
}

extension HubStore {
    /// A closed visit, as dwell reports group them.
    public struct ClosedVisit: Sendable, Hashable {
        public var tag: String
        public var zone: String
        public var enter: Double
        public var duration: Double

        public init(tag: String, zone: String, enter: Double, duration: Double) {
            self.tag = tag
            self.zone = zone
            self.enter = enter
            self.duration = duration
        }
    }

    /// A zone-to-zone transition, as the transition matrix counts them.
    public struct TransitionRow: Sendable, Hashable {
        public var from: String
        public var to: String
        public var transit: Double

        public init(from: String, to: String, transit: Double) {
            self.from = from
            self.to = to
            self.transit = transit
        }
    }
}

extension HubStore {
    /// What a dwell report groups by: the zone, and the hour or day start, the hour of day, or the tag.
    struct DwellGroup: Hashable {
        var zone: String?
        var start: Double?
        var tag: String?
        var hourOfDay: Int?
    }
}

extension HistoryStore {
    public func recover() async throws -> HubStore.Recovered { try await recover(recentBoots: 4) }

    public func stopWriting() async {}

    public func visits(_ filter: HubStore.VisitFilter) async throws -> [HubStore.Visit] {
        try await visits(filter, limit: nil, offset: 0)
    }

    public func visits(_ filter: HubStore.VisitFilter, limit: Int?) async throws -> [HubStore.Visit] {
        try await visits(filter, limit: limit, offset: 0)
    }

    /// `dwell(by:zone:since:until:timeZone:)` with every filter optional.
    public func dwell(
        by grouping: HubStore.DwellGrouping, zone: String? = nil, since: Double? = nil, until: Double? = nil
    ) async throws -> [HubStore.DwellRow] {
        try await dwell(by: grouping, zone: zone, since: since, until: until, timeZone: .current)
    }

    public func dwell(
        by grouping: HubStore.DwellGrouping, zone: String?, since: Double?, until: Double?, timeZone: TimeZone
    ) async throws -> [HubStore.DwellRow] {
        try await computedDwell(by: grouping, zone: zone, since: since, until: until, timeZone: timeZone)
    }

    /// Dwell statistics of closed visits that entered in [since, until), grouped. `hour` reads the table kept current
    /// as visits close; the other groupings compute from the visits (days start at midnight in `timeZone`).
    public func computedDwell(
        by grouping: HubStore.DwellGrouping, zone: String?, since: Double?, until: Double?, timeZone: TimeZone
    ) async throws -> [HubStore.DwellRow] {
        if grouping == .hour { return try await hourlyDwell(zone: zone, since: since, until: until) }
        let closed = try await closedVisits(zone: zone, since: since, until: until)
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = timeZone
        typealias Group = HubStore.DwellGroup
        var groups: [Group: [(tag: String, duration: Double)]] = [:]
        for visit in closed {
            let group =
                switch grouping {
                case .day:
                    Group(
                        zone: visit.zone,
                        start: calendar.startOfDay(for: Date(timeIntervalSince1970: visit.enter)).timeIntervalSince1970)
                case .hourOfDay:
                    Group(
                        zone: visit.zone,
                        hourOfDay: calendar.component(.hour, from: Date(timeIntervalSince1970: visit.enter)))
                case .zone: Group(zone: visit.zone)
                case .tag: Group(zone: zone, tag: visit.tag)
                case .hour: Group()
                }
            groups[group, default: []].append((visit.tag, visit.duration))
        }
        return groups.map { group, visits in
            HubStore.DwellRow(
                zone: group.zone, start: group.start, tag: group.tag, hourOfDay: group.hourOfDay,
                statistics: DwellStatistics(visits)!)
        }.sorted { a, b in
            (a.start ?? 0, a.zone ?? "", a.hourOfDay ?? 0, a.tag ?? "")
                < (b.start ?? 0, b.zone ?? "", b.hourOfDay ?? 0, b.tag ?? "")
        }
    }

    /// The `top` most common sequences of `length` zones walked within one trip (visits joined while the gap between
    /// them is at most `tripGapSeconds`; repeated visits to the same zone count once), most common first.
    public func routes(top: Int, length: Int, since: Double? = nil, until: Double? = nil) async throws -> [HubStore
        .Route]
    {
        let visits = try await visits(HubStore.VisitFilter(since: since, until: until), limit: nil, offset: 0)
        var byTag: [String: [HubStore.Visit]] = [:]
        for visit in visits { byTag[visit.tag, default: []].append(visit) }
        var counts: [[String]: Int] = [:]
        for (_, list) in byTag {
            var trip: [String] = []
            var lastExit: Double?
            func finish() {
                guard trip.count >= length else { return }
                for start in 0...(trip.count - length) {
                    counts[Array(trip[start..<(start + length)]), default: 0] += 1
                }
            }
            for visit in list {
                if let lastExit, visit.enter - lastExit > tripGapSeconds {
                    finish()
                    trip = []
                }
                if trip.last != visit.zone { trip.append(visit.zone) }
                lastExit = visit.exit ?? visit.enter
            }
            finish()
        }
        return counts.map { HubStore.Route(zones: $0.key, count: $0.value) }
            .sorted { $0.count != $1.count ? $0.count > $1.count : $0.zones.lexicographicallyPrecedes($1.zones) }
            .prefix(top).map { $0 }
    }

    /// Zone-to-zone transitions entered in [since, until): counts and median transit times, busiest first.
    public func transitionMatrix(since: Double? = nil, until: Double? = nil) async throws -> [HubStore.Transition] {
        var cells: [[String]: [Double]] = [:]
        for row in try await transitions(since: since, until: until) {
            cells[[row.from, row.to], default: []].append(row.transit)
        }
        return cells.map { key, transits in
            HubStore.Transition(
                from: key[0], to: key[1], count: transits.count,
                medianTransit: DwellStatistics.percentile(0.5, ofSorted: transits.sorted()))
        }.sorted {
            $0.count != $1.count ? $0.count > $1.count : [$0.from, $0.to].lexicographicallyPrecedes([$1.from, $1.to])
        }
    }

    /// Who was in which zone at `t`: tags with a visit covering it (an open visit covers every time after its
    /// enter), by zone.
    public func occupancy(at t: Double) async throws -> [(zone: String, tags: [String])] {
        // Overlapping [t, t⁺): entered at or before t, not left by t.
        let visits = try await visits(HubStore.VisitFilter(since: t, until: t.nextUp), limit: nil, offset: 0)
        var byZone: [String: [String]] = [:]
        for visit in visits { byZone[visit.zone, default: []].append(visit.tag) }
        return byZone.keys.sorted().map { ($0, byZone[$0]!.sorted()) }
    }

    /// The occupancy of `zones` (every recorded zone when empty) sampled every `step` seconds in [since, until).
    /// At most 10,000 samples per zone: a longer window needs a longer step.
    public func occupancySeries(
        zones: [String] = [], since: Double, until: Double, step: Double
    ) async throws -> [HubStore.OccupancySeries] {
        guard step > 0, until > since else { return [] }
        let samples = min(10_000, Int(((until - since) / step).rounded(.up)))
        let times = (0..<samples).map { since + Double($0) * step }
        let wanted = Set(zones)
        var visits: [String: [(enter: Double, exit: Double?)]] = [:]
        for visit in try await self.visits(HubStore.VisitFilter(since: since, until: until), limit: nil, offset: 0)
        where wanted.isEmpty || wanted.contains(visit.zone) {
            visits[visit.zone, default: []].append((visit.enter, visit.exit))
        }
        let names = zones.isEmpty ? try await self.zones().map(\.id) : zones
        return Set(names).union(visits.keys).sorted().map { zone in
            // Each visit adds one to the samples in [enter, exit): a difference array, then a running sum.
            var delta = [Int](repeating: 0, count: samples + 1)
            for visit in visits[zone] ?? [] {
                let first = max(0, Int(((visit.enter - since) / step).rounded(.up)))
                let end = visit.exit.map { min(samples, Int(((($0 - since) / step)).rounded(.up))) } ?? samples
                guard first < end else { continue }
                delta[first] += 1
                delta[end] -= 1
            }
            var running = 0
            let counts = (0..<samples).map { index in
                running += delta[index]
                return running
            }
            return HubStore.OccupancySeries(zone: zone, t: times, count: counts)
        }
    }
}
