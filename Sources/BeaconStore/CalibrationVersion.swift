/// One stored version of the site's calibration (docs/dashboard.md, "The calibration page"): a phone walk applied, or a
/// rollback to an earlier version. The newest version is the one in force; a hub starting reads it back.
public struct CalibrationVersion: Sendable, Hashable, Codable {
    public enum Kind: String, Sendable, Hashable, Codable {
        /// A calibration walk finished and applied.
        case walk
        /// An earlier version (or hub.yaml's file, version 0) put back in force.
        case rollback
        /// The version in force with a gateway placed elsewhere (`POST /api/gateways/{gateway}/place`).
        case placement
    }

    /// 1, 2, …: assigned by the store.
    public var version: Int
    /// When it was applied, unix seconds.
    public var created: Double
    /// Who applied it (the name given on the page or to `beacon-hub calibrate --live`).
    public var who: String
    public var note: String?
    public var kind: Kind
    /// For a rollback: the version it put back (0: hub.yaml's calibration file, or none).
    public var restores: Int?
    /// Zones profiled and gateways with an offset.
    public var zones: Int
    public var gateways: Int
    /// Expected accuracy over the walk before → after (cross-validated), 0…1; absent for a rollback.
    public var before: Double?
    public var after: Double?
    /// The calibration as JSON (the calibration file's fields); nil for a rollback to version 0.
    public var body: String?

    public init(
        version: Int = 0, created: Double, who: String, note: String? = nil, kind: Kind, restores: Int? = nil,
        zones: Int, gateways: Int, before: Double? = nil, after: Double? = nil, body: String?
    ) {
        self.version = version
        self.created = created
        self.who = who
        self.note = note
        self.kind = kind
        self.restores = restores
        self.zones = zones
        self.gateways = gateways
        self.before = before
        self.after = after
        self.body = body
    }
}
