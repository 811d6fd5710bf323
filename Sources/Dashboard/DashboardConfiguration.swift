import BeaconModel
import BeaconStore
import ZoneInference

/// What the dashboard serves and where: built by the hub from hub.yaml's `http:` section and the venue.
public struct DashboardConfiguration: Sendable {
    /// The address to listen on; loopback unless a token is set (docs/dashboard.md).
    public var host: String
    /// 0 takes a free port (tests); the bound one is in `Dashboard.boundPort` and the log.
    public var port: Int
    /// When set, `/api/*`, `/metrics` and the live stream need `Authorization: Bearer <token>` (or
    /// `?access_token=<token>`, for browsers' EventSource).
    public var token: String?
    public var site: SiteID
    /// The venue file as loaded: zones, gateways, doors and walls of the floor plan; nil draws the zones the hub
    /// reports, unplaced.
    public var venue: Venue?
    /// The hub's regions, for region state queries.
    public var regions: [TagRegion]
    /// The history database file (read-only here); nil serves live state only, unless `openHistory` is set.
    public var storePath: String?
    /// Opens the history for reading, where it is not a file of `storePath` (a PostgreSQL server).
    public var openHistory: (@Sendable () throws -> any HistoryStore)?
    /// Whether there is a history to read.
    public var hasHistory: Bool { storePath != nil || openHistory != nil }
    /// The store's `tripGapSeconds`: routes join visits into trips as the hub does.
    public var tripGapSeconds: Double
    /// The id a tag has in the database: its pseudonym when the store pseudonymises, else itself.
    public var storedTagID: @Sendable (String) -> String
    /// Chart.js as Debian's libjs-chart.js installs it; served at `/lib/chart.js`.
    public var chartJS: String
    /// The web page's folder; nil serves the copy built into the program.
    public var webRoot: String?
    /// Web origins (`https://intranet.example:8443`) whose pages may call the API from the browser (CORS); `*` for
    /// any. Empty: only the hub's own page.
    public var corsOrigins: [String]
    /// The hub's calibration walks and versions (the calibration page); nil where nothing calibrates
    /// (`beacon-hub serve`).
    public var calibration: (any CalibrationDesk)?

    public init(
        host: String = "127.0.0.1", port: Int = 8080, token: String? = nil, site: SiteID, venue: Venue? = nil,
        regions: [TagRegion] = [], storePath: String? = nil,
        openHistory: (@Sendable () throws -> any HistoryStore)? = nil, tripGapSeconds: Double = 600,
        storedTagID: @escaping @Sendable (String) -> String = { $0 },
        chartJS: String = DashboardConfiguration.debianChartJS, webRoot: String? = nil, corsOrigins: [String] = [],
        calibration: (any CalibrationDesk)? = nil
    ) {
        self.host = host
        self.port = port
        self.token = token
        self.site = site
        self.venue = venue
        self.regions = regions
        self.storePath = storePath
        self.openHistory = openHistory
        self.tripGapSeconds = tripGapSeconds
        self.storedTagID = storedTagID
        self.chartJS = chartJS
        self.webRoot = webRoot
        self.corsOrigins = corsOrigins
        self.calibration = calibration
    }

    /// Where Debian 12's libjs-chart.js (3.9) puts its UMD build.
    public static let debianChartJS = "/usr/share/javascript/chart.js/chart.min.js"

    /// True for addresses that only this machine reaches.
    public static func isLoopback(_ host: String) -> Bool {
        host == "localhost" || host == "::1" || host.hasPrefix("127.")
    }
}
