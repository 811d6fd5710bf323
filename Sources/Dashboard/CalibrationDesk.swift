import BeaconStore
import ZoneInference

/// What the calibration page and `beacon-hub calibrate --live` ask of the hub (docs/dashboard.md, "The calibration
/// page"): the hub implements it over its live core and its database. Every method throws `APIError`s that say what
/// to do.
public protocol CalibrationDesk: Sendable {
    func overview() async throws -> CalibrationOverview
    func start(_ request: CalibrationStart) async throws -> CalibrationSessionView
    func session() async throws -> CalibrationSessionView
    func mark(_ request: CalibrationMark) async throws -> CalibrationSessionView
    /// Replaces the marks with a plan file's stops and route (a script that timed the walk itself).
    func plan(_ request: CalibrationPlan) async throws -> CalibrationSessionView
    func finish(_ request: CalibrationFinish) async throws -> CalibrationFinished
    func cancel() async throws
    func rollback(_ request: CalibrationRollback) async throws -> CalibrationRolledBack
    /// Starts a gateway's links to the others afresh, accepting its new place or state (`gateway-moved`,
    /// `gateway-degraded`): docs/inference.md, "What gateway-to-gateway links tell".
    func relearnLinks(of gateway: String) async throws -> LinksRelearned
    /// Places a gateway elsewhere than the venue file says, live: a new calibration version (docs/dashboard.md, "The
    /// gateway panel"); `gateway` is one of the venue's.
    func place(_ gateway: String, _ request: GatewayPlace) async throws -> GatewayPlaced
    /// Where the gateways placed elsewhere than the venue file says stand now, by gateway id.
    var placements: [String: Calibration.Placement] { get }
}

/// `POST /api/gateways/{gateway}/place`: where it stands now, venue metres.
public struct GatewayPlace: Codable, Sendable {
    public var x: Double
    public var y: Double
    /// The zone it serves there; absent: the zone its place lies in (none outside every zone).
    public var zone: String?
    /// Who places it: the version records it.
    public var who: String
    public var note: String?

    public init(x: Double, y: Double, zone: String? = nil, who: String, note: String? = nil) {
        self.x = x
        self.y = y
        self.zone = zone
        self.who = who
        self.note = note
    }
}

/// The answer to a placement: the version recording it, now in force, and the links started afresh.
public struct GatewayPlaced: Codable, Sendable {
    public var gateway: String
    public var x: Double
    public var y: Double
    /// The zone it serves there; null for none.
    public var zone: String?
    /// How far from where it stood before (the venue file's place, or an earlier placement), metres.
    public var movedMetres: Double
    public var version: CalibrationVersion
    /// Its links' receptions and settled levels forgotten: their new levels settle over the next two fits.
    public var linksForgotten: Int
    /// The `gateway-moved` / `gateway-degraded` alert it cleared; null when none was in force.
    public var alertCleared: LiveBoard.LinkAlert?

    public init(
        gateway: String, x: Double, y: Double, zone: String?, movedMetres: Double, version: CalibrationVersion,
        linksForgotten: Int, alertCleared: LiveBoard.LinkAlert?
    ) {
        self.gateway = gateway
        self.x = x
        self.y = y
        self.zone = zone
        self.movedMetres = movedMetres
        self.version = version
        self.linksForgotten = linksForgotten
        self.alertCleared = alertCleared
    }

    enum CodingKeys: String, CodingKey {
        case gateway, x, y, zone, movedMetres, version, linksForgotten, alertCleared
    }

    // The nulls are written, not left out, as in `LinksRelearned`.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(gateway, forKey: .gateway)
        try container.encode(x, forKey: .x)
        try container.encode(y, forKey: .y)
        try container.encode(zone, forKey: .zone)
        try container.encode(movedMetres, forKey: .movedMetres)
        try container.encode(version, forKey: .version)
        try container.encode(linksForgotten, forKey: .linksForgotten)
        try container.encode(alertCleared, forKey: .alertCleared)
    }
}

/// `POST /api/gateways/{gateway}/relearn`.
public struct LinksRelearned: Codable, Sendable, Hashable {
    public var gateway: String
    /// When, by the hub's clock.
    public var t: Double
    /// Links to or from the gateway whose receptions and settled levels were forgotten.
    public var linksForgotten: Int
    /// The `gateway-moved` / `gateway-degraded` alert it cleared; null when none was in force.
    public var alertCleared: LiveBoard.LinkAlert?

    public init(gateway: String, t: Double, linksForgotten: Int, alertCleared: LiveBoard.LinkAlert?) {
        self.gateway = gateway
        self.t = t
        self.linksForgotten = linksForgotten
        self.alertCleared = alertCleared
    }

    enum CodingKeys: String, CodingKey {
        case gateway, t, linksForgotten, alertCleared
    }

    // The null is written, not left out: a script tells "none was in force" from an older hub.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(gateway, forKey: .gateway)
        try container.encode(t, forKey: .t)
        try container.encode(linksForgotten, forKey: .linksForgotten)
        try container.encode(alertCleared, forKey: .alertCleared)
    }
}

/// `GET /api/calibration`. The JSON bodies below are public interfaces (docs/openapi.yaml): add, never rename.
public struct CalibrationOverview: Codable, Sendable {
    /// The version in force; nil: none stored, the hub runs with hub.yaml's calibration (version 0).
    public var active: CalibrationVersion?
    /// Newest first, without bodies.
    public var versions: [CalibrationVersion]
    public var session: CalibrationSessionView?
    /// hub.yaml's `calibration:` file, what version 0 means; nil when none.
    public var configured: String?
    /// False when versions are kept in memory only (the hub has no `store:`): they do not outlive a restart.
    public var stored: Bool
    /// What the engine runs with now; nil: no calibration at all (absent on a hub that is not active).
    public var engine: CalibrationInForce?

    public init(
        active: CalibrationVersion?, versions: [CalibrationVersion], session: CalibrationSessionView?,
        configured: String?, stored: Bool, engine: CalibrationInForce? = nil
    ) {
        self.active = active
        self.versions = versions
        self.session = session
        self.configured = configured
        self.stored = stored
        self.engine = engine
    }
}

/// The calibration the engine runs with: when it was computed and what it holds.
public struct CalibrationInForce: Codable, Sendable, Hashable {
    public var created: Double
    public var zones: Int
    public var gateways: Int
    /// Points along a route (the `position` maps' fit); 0 without a route.
    public var points: Int

    public init(created: Double, zones: Int, gateways: Int, points: Int) {
        self.created = created
        self.zones = zones
        self.gateways = gateways
        self.points = points
    }
}

/// `POST /api/calibration/session`.
public struct CalibrationStart: Codable, Sendable {
    public var beacon: String
    public var who: String
    /// Seconds a stay lasts (5…600); 30 when absent.
    public var seconds: Double?

    public init(beacon: String, who: String, seconds: Double? = nil) {
        self.beacon = beacon
        self.who = who
        self.seconds = seconds
    }
}

/// `POST /api/calibration/session/marks`: a zone, or a point in venue metres. `t` and `until` (unix seconds) are for
/// scripts replaying a plan; the page leaves them to the hub's clock and the session's stay length.
public struct CalibrationMark: Codable, Sendable {
    public var zone: String?
    public var x: Double?
    public var y: Double?
    public var t: Double?
    public var until: Double?

    public init(zone: String? = nil, x: Double? = nil, y: Double? = nil, t: Double? = nil, until: Double? = nil) {
        self.zone = zone
        self.x = x
        self.y = y
        self.t = t
        self.until = until
    }
}

/// `PUT /api/calibration/session/plan`: the plan file's `stops` and `route` (docs/inference.md, "Calibration"), in
/// place of marks; the walk's beacon is the session's.
public struct CalibrationPlan: Codable, Sendable {
    public var stops: [Calibrator.Stop]?
    public var route: [Calibrator.RoutePoint]?

    public init(stops: [Calibrator.Stop]?, route: [Calibrator.RoutePoint]?) {
        self.stops = stops
        self.route = route
    }
}

/// `POST /api/calibration/session/finish`.
public struct CalibrationFinish: Codable, Sendable {
    public var note: String?

    public init(note: String? = nil) { self.note = note }
}

/// The answer to a finish: the version stored and applied, and the walk as it ended.
public struct CalibrationFinished: Codable, Sendable {
    public var version: CalibrationVersion
    public var session: CalibrationSessionView

    public init(version: CalibrationVersion, session: CalibrationSessionView) {
        self.version = version
        self.session = session
    }
}

/// `POST /api/calibration/rollback`: `version` absent rolls back the version in force (to the one before it).
public struct CalibrationRollback: Codable, Sendable {
    public var who: String
    public var version: Int?

    public init(who: String, version: Int? = nil) {
        self.who = who
        self.version = version
    }
}

/// The answer to a rollback: the new version recording it, now in force.
public struct CalibrationRolledBack: Codable, Sendable {
    public var active: CalibrationVersion

    public init(active: CalibrationVersion) { self.active = active }
}

/// A walk in progress, as the page shows it.
public struct CalibrationSessionView: Codable, Sendable {
    public struct Mark: Codable, Sendable, Hashable {
        public var n: Int
        public var t: Double
        public var until: Double
        public var zone: String?
        public var x: Double?
        public var y: Double?

        public init(n: Int, t: Double, until: Double, zone: String?, x: Double?, y: Double?) {
            self.n = n
            self.t = t
            self.until = until
            self.zone = zone
            self.x = x
            self.y = y
        }

        // Nulls are written, not left out: the page tells "no zone" from a missing field.
        public func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(n, forKey: .n)
            try container.encode(t, forKey: .t)
            try container.encode(until, forKey: .until)
            try container.encode(zone, forKey: .zone)
            try container.encode(x, forKey: .x)
            try container.encode(y, forKey: .y)
        }
    }

    public struct Current: Codable, Sendable, Hashable {
        public var n: Int
        public var zone: String?
        public var x: Double?
        public var y: Double?
        /// Seconds left of the stay.
        public var remaining: Double

        public init(n: Int, zone: String?, x: Double?, y: Double?, remaining: Double) {
            self.n = n
            self.zone = zone
            self.x = x
            self.y = y
            self.remaining = remaining
        }
    }

    public struct Zone: Codable, Sendable, Hashable {
        public var zone: String
        public var name: String
        public var seconds: Int
        public var gateways: Int
        /// `none`, `poor`, `fair`, `good` (docs/dashboard.md).
        public var quality: String
        /// Expected accuracy 0…1 before → after (cross-validated); nil until the zone has scored seconds.
        public var before: Double?
        public var after: Double?

        public init(
            zone: String, name: String, seconds: Int, gateways: Int, quality: String, before: Double?, after: Double?
        ) {
            self.zone = zone
            self.name = name
            self.seconds = seconds
            self.gateways = gateways
            self.quality = quality
            self.before = before
            self.after = after
        }

        public func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(zone, forKey: .zone)
            try container.encode(name, forKey: .name)
            try container.encode(seconds, forKey: .seconds)
            try container.encode(gateways, forKey: .gateways)
            try container.encode(quality, forKey: .quality)
            try container.encode(before, forKey: .before)
            try container.encode(after, forKey: .after)
        }
    }

    public struct Check: Codable, Sendable, Hashable {
        public var before: Double
        public var after: Double
        public var seconds: Int
        public var folds: Int

        public init(before: Double, after: Double, seconds: Int, folds: Int) {
            self.before = before
            self.after = after
            self.seconds = seconds
            self.folds = folds
        }
    }

    public var id: String
    public var beacon: String
    public var who: String
    public var started: Double
    public var now: Double
    public var seconds: Double
    public var sightings: Int
    public var lastHeard: Double?
    public var marks: [Mark]
    public var current: Current?
    public var zones: [Zone]
    public var check: Check?
    public var warnings: [String]

    public init(
        id: String, beacon: String, who: String, started: Double, now: Double, seconds: Double, sightings: Int,
        lastHeard: Double?, marks: [Mark], current: Current?, zones: [Zone], check: Check?, warnings: [String]
    ) {
        self.id = id
        self.beacon = beacon
        self.who = who
        self.started = started
        self.now = now
        self.seconds = seconds
        self.sightings = sightings
        self.lastHeard = lastHeard
        self.marks = marks
        self.current = current
        self.zones = zones
        self.check = check
        self.warnings = warnings
    }
}
