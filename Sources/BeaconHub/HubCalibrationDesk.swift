import BeaconModel
import BeaconStore
import Dashboard
import Foundation
import Logging
import Synchronization
import ZoneInference

/// The hub's side of the calibration page and `beacon-hub calibrate --live` (docs/dashboard.md, "The calibration
/// page"). The walk is recorded by the live core (`HubCore.calibrationWalk`, fed with the carried beacon's sightings as
/// they are ingested); what the page asks is computed here on a copy, off the core's lock. Finishing stores a new
/// version in the database and then applies it to the engine live; a rollback stores a version restoring an earlier
/// one. The newest version is in force, also after a restart (`restore(into:)`).
final class HubCalibrationDesk: CalibrationDesk {
    struct Owner {
        weak var hub: Hub?
    }

    /// The last cross-validation of a walk, recomputed when the walk has grown.
    struct CheckCache {
        var session: String
        var marks: Int
        var sightings: Int
        var computed: Double
        var check: CalibrationCheck?
        /// What the calibration made of the walk then (`Calibrator`'s warnings).
        var warnings: [String]
    }

    let venue: Venue
    let settings: InferenceSettings
    let site: SiteID
    /// hub.yaml's calibration: what version 0 means.
    let configured: Calibration?
    let configuredPath: String?
    let store: (any HistoryStore)?
    let logger: Logger
    private let owner = Mutex(Owner())
    /// The versions, when the hub keeps no database (lost at a restart).
    private let memory = Mutex<[CalibrationVersion]>([])
    private let checks = Mutex(Checks())
    /// The uncalibrated model the calibration is measured against (as `beacon-hub calibrate` does), for the
    /// placements it was made for: the gateways stand where the calibration in force placed them.
    private let models = Mutex<(placements: [String: Calibration.Placement]?, model: VenueModel)?>(nil)

    struct Checks {
        var cache: CheckCache?
        /// A check is being computed (one at a time).
        var running = false
    }
    /// One finish or rollback at a time: each stores, then applies.
    private let changing = Mutex(false)

    /// Seconds between two cross-validations of a growing walk.
    static let checkSeconds = 5.0
    static let defaultStaySeconds = 30.0

    init(
        venue: Venue, settings: InferenceSettings, site: SiteID, configured: Calibration?, configuredPath: String?,
        store: (any HistoryStore)?, logger: Logger
    ) {
        self.venue = venue
        self.settings = settings
        self.site = site
        self.configured = configured
        self.configuredPath = configuredPath
        self.store = store
        self.logger = logger
    }

    func attach(_ hub: Hub) { owner.withLock { $0.hub = hub } }

    /// The live core; an error while the hub is not active (a standby, or still starting).
    func activeSession() throws -> Hub.Session {
        guard let session = owner.withLock({ $0.hub })?.shared.withLock({ $0.session }) else {
            throw APIError(
                status: 503, CalibrationSessionError.Code.notActive.rawValue,
                "this hub is not the active one (standby or starting): calibrate on the active hub")
        }
        return session
    }

    static func now() -> Double { Date().timeIntervalSince1970 }

    // MARK: CalibrationDesk

    func overview() async throws -> CalibrationOverview {
        let versions = try await versions()
        let live = try? activeSession().core.withLock { core in
            (core.calibrationWalk, core.engine.calibration, core.engine.learned)
        }
        let walk = live.flatMap { live in live.0.map { ($0, live.1, live.2) } }
        return CalibrationOverview(
            active: versions.first, versions: versions,
            session: walk.map { view(of: $0.0, current: $0.1, learned: $0.2, at: Self.now()) },
            configured: configuredPath, stored: store != nil,
            engine: live?.1.map {
                CalibrationInForce(
                    created: $0.created, zones: $0.zones.count, gateways: $0.gatewayOffsets.count,
                    points: $0.points?.count ?? 0)
            })
    }

    func start(_ request: CalibrationStart) async throws -> CalibrationSessionView {
        let beacon = request.beacon.trimmingCharacters(in: .whitespaces).lowercased()
        let who = request.who.trimmingCharacters(in: .whitespaces)
        guard !beacon.isEmpty else { throw Self.bad(.badRequest, "name the beacon you carry (\"beacon\")") }
        guard !who.isEmpty else { throw Self.bad(.badRequest, "say who walks (\"who\"): the version records it") }
        let seconds = request.seconds ?? Self.defaultStaySeconds
        guard CalibrationSession.secondsRange.contains(seconds) else {
            throw Self.bad(.badRequest, "a stay lasts 5 to 600 seconds (\"seconds\"), not \(seconds)")
        }
        let session = try activeSession()
        let now = Self.now()
        let started = try session.core.withLock { core throws(APIError) in
            if let open = core.calibrationWalk {
                throw Self.bad(
                    .sessionOpen,
                    "\(open.who)'s walk with \(open.beacon) is open since \(Int(now - open.started)) s: finish or "
                        + "cancel it first")
            }
            let walk = CalibrationSession(
                id: UUID().uuidString.lowercased(), beacon: beacon, who: who, started: now, seconds: seconds)
            core.calibrationWalk = walk
            return (walk, core.engine.calibration, core.engine.learned)
        }
        logger.info("calibration walk started", metadata: ["who": "\(who)", "seconds": "\(seconds)"])
        return view(of: started.0, current: started.1, learned: started.2, at: now)
    }

    func session() async throws -> CalibrationSessionView {
        let (walk, current, learned) = try snapshot()
        return view(of: walk, current: current, learned: learned, at: Self.now())
    }

    /// Changes the open walk under the core's lock; the page's view of it after.
    func changeWalk(
        at now: Double, _ change: (inout CalibrationSession) throws(CalibrationSessionError) -> Void
    ) throws -> CalibrationSessionView {
        let session = try activeSession()
        let (walk, current, learned) = try session.core.withLock { core throws(APIError) in
            guard var walk = core.calibrationWalk else { throw Self.noSession() }
            do throws(CalibrationSessionError) {
                try change(&walk)
            } catch {
                throw Self.bad(error.code, error.message)
            }
            core.calibrationWalk = walk
            return (walk, core.engine.calibration, core.engine.learned)
        }
        return view(of: walk, current: current, learned: learned, at: now)
    }

    func mark(_ request: CalibrationMark) async throws -> CalibrationSessionView {
        let now = Self.now()
        if let t = request.t, t > now + 5 {
            throw Self.bad(.badMark, "a mark cannot be in the future (t \(t) is \(Int(t - now)) s ahead of the hub)")
        }
        let zone = try request.zone.map { name throws(APIError) in
            guard let zone = ZoneID(rawValue: name) else { throw Self.bad(.badMark, "\"\(name)\" is no zone id") }
            return zone
        }
        return try changeWalk(at: now) { walk throws(CalibrationSessionError) in
            try walk.mark(
                zone: zone, x: request.x, y: request.y, at: request.t ?? now, until: request.until, venue: venue)
        }
    }

    func plan(_ request: CalibrationPlan) async throws -> CalibrationSessionView {
        try changeWalk(at: Self.now()) { walk throws(CalibrationSessionError) in
            try walk.replacePlan(stops: request.stops ?? [], route: request.route ?? [], venue: venue)
        }
    }

    func cancel() async throws {
        let session = try activeSession()
        let cancelled = session.core.withLock { core in
            defer { core.calibrationWalk = nil }
            return core.calibrationWalk != nil
        }
        guard cancelled else { throw Self.noSession() }
        logger.info("calibration walk cancelled")
    }

    func finish(_ request: CalibrationFinish) async throws -> CalibrationFinished {
        try exclusively()
        defer { changing.withLock { $0 = false } }
        let (walk, current, learned) = try snapshot()
        let now = Self.now()
        guard let (calibration, _) = calibrate(walk, at: now, current: current),
            !calibration.zones.isEmpty || calibration.points?.isEmpty == false
        else {
            throw Self.bad(
                .nothingRecorded,
                walk.marks.isEmpty && walk.given == nil
                    ? "nothing to apply: tap where you are on the plan and stay there"
                    : "nothing to apply: the hub heard \(walk.beacon) during none of the stays — is it the beacon you "
                        + "carry, and is it on?")
        }
        let check = await checkNow(of: walk, current: current, learned: learned, at: now)
        let body = try Self.encode(calibration)
        let version = try await add(
            CalibrationVersion(
                created: now, who: walk.who, note: request.note.flatMap { $0.isEmpty ? nil : $0 }, kind: .walk,
                zones: calibration.zones.count, gateways: calibration.gatewayOffsets.count, before: check?.before,
                after: check?.after, body: body))
        // Stored, so applied: a restart finds what the engine runs with.
        let session = try activeSession()
        let ended = session.core.withLock { core in
            core.engine.apply(calibration: calibration)
            if core.calibrationWalk?.id == walk.id { core.calibrationWalk = nil }
            return (core.engine.calibration, core.engine.learned)
        }
        await recordPlaces(calibration.placements, was: current?.placements)
        logger.info(
            "calibration applied",
            metadata: ["version": "\(version.version)", "who": "\(walk.who)", "zones": "\(version.zones)"])
        var shown = view(of: walk, current: ended.0, learned: ended.1, at: now)
        shown.check = check.map(Self.checkView)
        return CalibrationFinished(version: Self.listed(version), session: shown)
    }

    func rollback(_ request: CalibrationRollback) async throws -> CalibrationRolledBack {
        let who = request.who.trimmingCharacters(in: .whitespaces)
        guard !who.isEmpty else { throw Self.bad(.badRequest, "say who rolls back (\"who\"): the version records it") }
        try exclusively()
        defer { changing.withLock { $0 = false } }
        let session = try activeSession()
        let versions = try await versions()
        let target: Int
        if let asked = request.version {
            guard asked == 0 || versions.contains(where: { $0.version == asked }) else {
                throw Self.bad(
                    .noVersion,
                    "there is no version \(asked): one of "
                        + (["0"] + versions.map { "\($0.version)" }).joined(separator: ", "))
            }
            target = asked
        } else {
            guard let active = versions.first else {
                throw Self.bad(
                    .noVersion, "nothing to roll back: no version is stored, hub.yaml's calibration is in force")
            }
            target = Self.previous(active, versions)
        }
        let (calibration, body) = try await self.calibration(of: target)
        let version = try await add(
            CalibrationVersion(
                created: Self.now(), who: who, note: "rollback to version \(target)", kind: .rollback,
                restores: target, zones: calibration?.zones.count ?? 0,
                gateways: calibration?.gatewayOffsets.count ?? 0, body: body))
        await applyLive(calibration, to: session)
        logger.info("calibration rolled back", metadata: ["version": "\(version.version)", "restores": "\(target)"])
        return CalibrationRolledBack(active: Self.listed(version))
    }

    /// `gateway` is one of the venue's (the route checks it against the same venue file).
    func relearnLinks(of gateway: String) async throws -> LinksRelearned {
        let id = GatewayID(unchecked: gateway)
        let session = try activeSession()
        let relearned = session.core.withLock { $0.links.relearn(id) }
        var metadata: Logger.Metadata = ["gateway": "\(gateway)", "links": "\(relearned.links)"]
        if let cleared = relearned.cleared { metadata["cleared"] = "\(cleared.code)" }
        logger.notice("gateway's links started afresh: their new levels will settle over two fits", metadata: metadata)
        return LinksRelearned(
            gateway: gateway, t: Self.now(), linksForgotten: relearned.links,
            alertCleared: relearned.cleared.map(LiveBoard.LinkAlert.init))
    }

    /// Places `gateway` where the request says: a new version (kind `placement`) of the calibration in force with the
    /// gateway there and what was measured of it at its old place left out (`Calibration.placing`), stored, then
    /// applied live; its links start afresh, as accepting a move does. Refused while a walk is open: the walk
    /// measures the gateways where they stand. `gateway` is one of the venue's (the route checks it).
    func place(_ gateway: String, _ request: GatewayPlace) async throws -> GatewayPlaced {
        let who = request.who.trimmingCharacters(in: .whitespaces)
        guard !who.isEmpty else { throw Self.bad(.badRequest, "say who places it (\"who\"): the version records it") }
        guard request.x.isFinite, request.y.isFinite, CalibrationSession.onPlan(request.x, request.y, venue: venue)
        else {
            throw Self.bad(
                .badRequest,
                "(\(request.x), \(request.y)) is not on the venue's floor plan: give x and y in venue metres")
        }
        let zone: ZoneID?
        if let named = request.zone?.trimmingCharacters(in: .whitespaces), !named.isEmpty {
            guard let known = venue.zones.first(where: { $0.id.rawValue == named }) else {
                throw Self.bad(
                    .badRequest,
                    "zone \(named) is not in the venue: one of \(venue.zones.map(\.id.rawValue).joined(separator: ", ")), "
                        + "or leave \"zone\" out for the zone its place lies in")
            }
            zone = known.id
        } else {
            zone = venue.zone(at: Point(request.x, request.y))?.id
        }
        try exclusively()
        defer { changing.withLock { $0 = false } }
        let session = try activeSession()
        let id = GatewayID(unchecked: gateway)
        let (open, current, before) = session.core.withLock { core in
            (
                core.calibrationWalk, core.engine.calibration,
                core.engine.venue.gateways.first { $0.id == id }?.position
            )
        }
        if let open {
            throw Self.bad(
                .sessionOpen,
                "\(open.who)'s calibration walk is open: finish or cancel it first (the walk measures the gateways where "
                    + "they stand)")
        }
        let now = Self.now()
        let placement = Calibration.Placement(x: request.x, y: request.y, zone: zone)
        let base =
            current
            ?? Calibration(
                site: site, created: now.rounded(), referencePower: settings.referencePower, gatewayOffsets: [:],
                zones: [:])
        let calibration = base.placing(id, at: placement)
        let note = request.note.flatMap { $0.isEmpty ? nil : $0 }
        let version = try await add(
            CalibrationVersion(
                created: now, who: who,
                note: note ?? String(format: "%@ placed at (%.1f, %.1f)", gateway, request.x, request.y),
                kind: .placement, zones: calibration.zones.count, gateways: calibration.gatewayOffsets.count,
                body: try Self.encode(calibration)))
        await applyLive(calibration, to: session)
        let relearned = session.core.withLock { $0.links.relearn(id) }
        let moved = before.map { $0.distance(to: Point(request.x, request.y)) } ?? 0
        logger.notice(
            "gateway placed: the engine's map, its links and the plan take its new place",
            metadata: [
                "gateway": "\(gateway)", "x": "\(request.x)", "y": "\(request.y)",
                "zone": "\(zone?.rawValue ?? "none")",
                "movedMetres": "\(String(format: "%.1f", moved))", "version": "\(version.version)", "who": "\(who)",
            ])
        return GatewayPlaced(
            gateway: gateway, x: request.x, y: request.y, zone: zone?.rawValue, movedMetres: moved,
            version: Self.listed(version), linksForgotten: relearned.links,
            alertCleared: relearned.cleared.map(LiveBoard.LinkAlert.init))
    }

    /// What was in force before `active`: the version before it, or what that one restored (0: hub.yaml's).
    static func previous(_ active: CalibrationVersion, _ versions: [CalibrationVersion]) -> Int {
        guard let index = versions.firstIndex(where: { $0.version == active.version }), index + 1 < versions.count
        else { return 0 }
        let before = versions[index + 1]
        return before.kind == .rollback ? (before.restores ?? 0) : before.version
    }

    // MARK: Starting

    /// Puts the newest stored version in force in a new active period's core (before anything is ingested).
    func restore(into session: Hub.Session) async {
        guard let store else { return }
        do {
            guard let newest = try await store.calibrationVersions().first else { return }
            let (calibration, _) = try await self.calibration(of: newest.version)
            await applyLive(calibration, to: session)
            var metadata: Logger.Metadata = [
                "version": "\(newest.version)", "who": "\(newest.who)", "kind": "\(newest.kind.rawValue)",
            ]
            if let configuredPath, calibration != configured {
                // hub.yaml's file is not what runs: say so, once, where an operator who edited it will look.
                metadata["configured"] = "\(configuredPath)"
                metadata["fix"] =
                    "to run with hub.yaml's calibration file, roll back to version 0 on the calibration page"
            }
            logger.info("calibration version in force", metadata: metadata)
        } catch {
            logger.error(
                "cannot read the stored calibration: running with hub.yaml's",
                metadata: ["error": "\(error)", "fix": "check the database; roll back on the calibration page"])
        }
    }

    // MARK: Helpers

    func exclusively() throws {
        let busy = changing.withLock { busy in
            defer { busy = true }
            return busy
        }
        if busy { throw APIError(status: 409, "busy", "another finish or rollback is being applied: try again") }
    }

    func snapshot() throws -> (CalibrationSession, Calibration?, LearnedRadio) {
        let session = try activeSession()
        return try session.core.withLock { core throws(APIError) in
            guard let walk = core.calibrationWalk else { throw Self.noSession() }
            return (walk, core.engine.calibration, core.engine.learned)
        }
    }

    func versions() async throws -> [CalibrationVersion] {
        guard let store else { return memory.withLock { $0.reversed().map(Self.listed) } }
        do {
            return try await store.calibrationVersions()
        } catch {
            throw APIError(status: 503, "store-error", "cannot read the calibration's versions: \(error)")
        }
    }

    func add(_ version: CalibrationVersion) async throws -> CalibrationVersion {
        guard let store else {
            return memory.withLock { versions in
                var stored = version
                stored.version = versions.count + 1
                versions.append(stored)
                return stored
            }
        }
        do {
            return try await store.addCalibration(version)
        } catch {
            throw APIError(
                status: 503, "store-error",
                "the database did not take the new version, so nothing was applied: \(error) — try again once it "
                    + "takes writes")
        }
    }

    /// Version `number`'s calibration and body (0: hub.yaml's).
    func calibration(of number: Int) async throws -> (Calibration?, String?) {
        guard number > 0 else { return (configured, nil) }
        let stored: CalibrationVersion?
        if let store {
            do {
                stored = try await store.calibration(version: number)
            } catch {
                throw APIError(status: 503, "store-error", "cannot read version \(number): \(error)")
            }
        } else {
            stored = memory.withLock { $0.first { $0.version == number } }
        }
        guard let stored else { throw Self.bad(.noVersion, "there is no version \(number)") }
        // A rollback's body is the version it restored; a rollback to 0 has none: hub.yaml's.
        guard let body = stored.body else { return (configured, nil) }
        do {
            return (try JSONDecoder().decode(Calibration.self, from: Data(body.utf8)), body)
        } catch {
            throw APIError(
                status: 500, "bad-version",
                "version \(number) in the database is not a calibration (\(error)): roll back to another")
        }
    }

    static func encode(_ calibration: Calibration) throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        return String(decoding: try encoder.encode(calibration), as: UTF8.self)
    }

    /// As lists show it: without the body.
    static func listed(_ version: CalibrationVersion) -> CalibrationVersion {
        var listed = version
        listed.body = nil
        return listed
    }

    static func bad(_ code: CalibrationSessionError.Code, _ message: String) -> APIError {
        let status =
            switch code {
            case .noSession, .noVersion: 404
            case .sessionOpen, .nothingRecorded: 409
            case .notActive: 503
            case .badMark, .badRequest: 400
            }
        return APIError(status: status, code.rawValue, message)
    }

    static func noSession() -> APIError {
        bad(.noSession, "no calibration walk is open: start one (POST /api/calibration/session)")
    }

    // MARK: The page's view

    func view(
        of walk: CalibrationSession, current: Calibration?, learned: LearnedRadio, at now: Double
    ) -> CalibrationSessionView {
        let progress = walk.progress(venue: venue, at: now)
        let (check, found) = latestCheck(of: walk, current: current, learned: learned, at: now)
        var warnings = found
        if walk.dropped > 0 {
            warnings.append(
                "the walk is long: \(walk.dropped) sightings beyond the first \(CalibrationSession.maxSightings) were not kept"
            )
        }
        let names = Dictionary(uniqueKeysWithValues: venue.zones.map { ($0.id, $0.name) })
        let scored = Dictionary(uniqueKeysWithValues: (check?.zones ?? []).map { ($0.zone, $0) })
        let current = walk.current(at: now)
        return CalibrationSessionView(
            id: walk.id, beacon: walk.beacon, who: walk.who, started: walk.started, now: now, seconds: walk.seconds,
            sightings: walk.sightings.count, lastHeard: walk.sightings.last?.t,
            marks: walk.marks.map {
                .init(n: $0.n, t: $0.t, until: $0.until, zone: $0.zone?.rawValue, x: $0.x, y: $0.y)
            },
            current: current.map {
                .init(n: $0.n, zone: $0.zone?.rawValue, x: $0.x, y: $0.y, remaining: max(0, $0.until - now))
            },
            zones: progress.map { row in
                .init(
                    zone: row.zone.rawValue, name: names[row.zone] ?? row.zone.rawValue, seconds: row.seconds,
                    gateways: row.gateways, quality: row.quality.rawValue, before: scored[row.zone]?.before,
                    after: scored[row.zone]?.after)
            },
            check: check.map(Self.checkView), warnings: warnings)
    }

    static func checkView(_ check: CalibrationCheck) -> CalibrationSessionView.Check {
        .init(before: check.before, after: check.after, seconds: check.seconds, folds: check.folds)
    }

    /// The walk's latest cross-validation and warnings, for the page: never waits for them. When the walk has grown
    /// since (a new mark at once; more sightings after `checkSeconds`) they are made again on a thread of its own —
    /// the check replays the engine six times, seconds on a large venue, and must not hold the cooperative pool the
    /// hub's tasks share.
    func latestCheck(
        of walk: CalibrationSession, current: Calibration?, learned: LearnedRadio, at now: Double
    ) -> (CalibrationCheck?, [String]) {
        let marks = walk.given == nil ? walk.marks.count : -1
        let (cached, start) = checks.withLock { state -> (CheckCache?, Bool) in
            let mine = state.cache.flatMap { $0.session == walk.id ? $0 : nil }
            let stale =
                mine == nil || mine!.marks != marks
                || (mine!.sightings != walk.sightings.count && now - mine!.computed >= Self.checkSeconds)
            guard stale, !state.running else { return (mine, false) }
            state.running = true
            return (mine, true)
        }
        if start {
            Thread { [self] in
                let check = computeCheck(of: walk, current: current, learned: learned, at: now)
                let warnings = calibrate(walk, at: now, current: current)?.warnings ?? []
                checks.withLock {
                    $0.running = false
                    $0.cache = CheckCache(
                        session: walk.id, marks: marks, sightings: walk.sightings.count, computed: now, check: check,
                        warnings: warnings)
                }
            }.start()
        }
        return (cached?.check, cached?.warnings ?? [])
    }

    /// The walk's cross-validation now (finishing), on a thread of its own.
    func checkNow(
        of walk: CalibrationSession, current: Calibration?, learned: LearnedRadio, at now: Double
    ) async -> CalibrationCheck? {
        await withCheckedContinuation { continuation in
            Thread { [self] in
                continuation.resume(returning: computeCheck(of: walk, current: current, learned: learned, at: now))
            }.start()
        }
    }

    func computeCheck(
        of walk: CalibrationSession, current: Calibration?, learned: LearnedRadio, at now: Double
    ) -> CalibrationCheck? {
        let (stops, route) = walk.plan(at: now)
        guard !stops.isEmpty || !route.isEmpty else { return nil }
        return CalibrationCheck.run(
            venue: venue, settings: settings, beacon: walk.beacon, stops: stops, route: route,
            sightings: walk.sightings, site: site, current: current, learned: learned)
    }

    /// The calibration the walk makes so far, as `beacon-hub calibrate` makes it from a plan, and its warnings; nil
    /// when no sighting fell in a stay or on the route.
    func calibrate(
        _ walk: CalibrationSession, at now: Double, current: Calibration?
    ) -> (calibration: Calibration, warnings: [String])? {
        let (stops, route) = walk.plan(at: now)
        guard !stops.isEmpty || !route.isEmpty else { return nil }
        let placements = current?.placements
        var calibrator = Calibrator(model: model(placed: placements), beacon: walk.beacon, stops: stops, route: route)
        for sighting in walk.sightings { calibrator.add(sighting) }
        guard calibrator.used > 0 else { return nil }
        var result = calibrator.result(site: site, created: now.rounded())
        // A walk measures the gateways where they stand: the placements in force stay in force.
        result.calibration.placements = placements
        return result
    }

    /// The uncalibrated model with the gateways where `placements` put them (the last one made is kept).
    func model(placed placements: [String: Calibration.Placement]?) -> VenueModel {
        if let kept = models.withLock({ $0 }), kept.placements == placements { return kept.model }
        let model = VenueModel(venue: venue.placed(by: placements), settings: settings)
        models.withLock { $0 = (placements, model) }
        return model
    }

    /// Puts `calibration` in force in the live engine (and so its placements on the plan).
    func applyLive(_ calibration: Calibration?, to session: Hub.Session) async {
        let was = session.core.withLock { core in
            let was = core.engine.calibration?.placements
            core.engine.apply(calibration: calibration)
            return was
        }
        await recordPlaces(calibration?.placements, was: was)
    }

    /// When the placements changed, writes the database's `gateways` table (where the gateways stand, for queries of
    /// the history) with them. A database that cannot take it is logged: the engine runs with the new places anyway.
    func recordPlaces(_ places: [String: Calibration.Placement]?, was: [String: Calibration.Placement]?) async {
        guard let store, (places ?? [:]) != (was ?? [:]) else { return }
        let placed = venue.placed(by: places)
        do {
            try await store.describeVenue(
                zones: placed.zones.map { ($0.id.rawValue, $0.name) },
                gateways: placed.gateways.map { ($0.id.rawValue, $0.zone?.rawValue, $0.position.x, $0.position.y) })
        } catch {
            logger.error(
                "cannot write where the gateways stand to the database: its gateways table keeps their old places",
                metadata: ["error": "\(error)", "fix": "check the database; the next placement or restart writes them"])
        }
    }

    /// Where the gateways placed elsewhere than the venue file says stand now: the live engine's calibration's, or
    /// hub.yaml's while this hub is not the active one.
    var placements: [String: Calibration.Placement] {
        guard let session = try? activeSession() else { return configured?.placements ?? [:] }
        return session.core.withLock { $0.engine.calibration?.placements } ?? [:]
    }
}
