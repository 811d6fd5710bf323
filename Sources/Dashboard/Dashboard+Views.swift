import BeaconModel
import BeaconStore

/// The API's JSON bodies (docs/openapi.yaml names each). Field names are a public interface: add, never rename.
struct VenueView: Encodable {
    var site: String
    var name: String
    var zones: [ZoneView]
    var gateways: [GatewayView]
    var doors: [DoorView]
    var walls: [WallView]
    /// The floor plan's extent in metres, nil when nothing is placed.
    var bounds: BoundsView?
}

struct ZoneView: Encodable {
    var id: String
    var name: String
    /// Polygon vertices, `[x, y]` in metres.
    var shape: [Point]
}

struct GatewayView: Encodable {
    var id: String
    var zone: String?
    /// Where it stands: the venue file's place, or where it was placed from its panel since.
    var position: Point?
    /// Where the venue file puts it, for a gateway placed elsewhere since (`POST /api/gateways/{gateway}/place`);
    /// absent otherwise.
    var venueFilePosition: Point?
    /// `online`, `offline`, or `unheard` (not watched for silence: before the hub is active, or a foreign gateway not yet
    /// heard); a venue gateway counts as online from the start of the active period until silent 3 × its heartbeat.
    var health: String
    var lastContact: Double?
    var boot: String?
    /// The beacon it advertises itself, when the venue file names it.
    var beacon: String?
    /// Its receive gain from the gateways' links (`hub/status` `links`), with whether the engine takes it.
    var gain: GainView?
    /// The `gateway-moved` / `gateway-degraded` alert in force: its links shifted and have not come back.
    var linkAlert: LiveBoard.LinkAlert?

    init(
        id: String, zone: String?, position: Point?, health: LiveBoard.GatewayHealth?, beacon: String? = nil,
        links: HubStatus.Links? = nil
    ) {
        self.id = id
        self.zone = zone
        self.position = position
        self.health =
            switch health {
            case .some(let health) where health.monitored: health.online ? "online" : "offline"
            default: "unheard"
            }
        self.lastContact = health?.lastContact
        self.boot = health?.boot
        self.beacon = beacon
        self.gain = links.flatMap { links in
            links.gains[id].map {
                GainView(
                    value: $0.value, sigma: $0.sigma,
                    applied: links.gainsApplied?.contains(id) ?? false, t: links.t,
                    frontToBack: links.antennas?[id])
            }
        }
        self.linkAlert = health?.linkAlert
    }
}

struct GainView: Encodable {
    /// dB, the gateways' gains summing to 0; `sigma` its standard deviation.
    var value: Double
    var sigma: Double
    /// Whether the hub handed it to the engine (`hub/status` `links.gainsApplied`: known to within 3 dB, and
    /// `inference.linkFitSeconds` above 0); a calibration's own offset for the gateway still wins.
    var applied: Bool
    /// Scan time of the fit.
    var t: Double
    /// The antenna's front-to-back ratio the links fitted, dB, for a gateway whose venue entry says which way its
    /// antenna faces; `value` is then the gain straight ahead.
    var frontToBack: HubStatus.Links.Estimate?
}

struct DoorView: Encodable {
    /// The two zone ids it joins (`outside` for an entrance).
    var between: [String]
    var at: Point
    var width: Double
}

struct WallView: Encodable {
    var from: Point
    var to: Point
}

struct BoundsView: Encodable {
    var minX: Double
    var minY: Double
    var maxX: Double
    var maxY: Double
}

struct HubView: Encodable {
    var site: String
    /// The hub's last published status (`hub/status`), with its ingest counters.
    var status: HubStatus?
    var health: HealthView
}

struct HealthView: Encodable {
    /// Always `ok` when the hub answers: liveness.
    var status: String
    /// Active, connected, and the database writable: readiness.
    var ready: Bool
    var problems: [String]
    var role: String
    var mqttConnected: Bool
    var storeWritable: Bool?
    var uncommittedBatches: Int
    var trackedTags: Int
    var streams: Int
}

/// A tag now: its retained state (docs/mqtt.md) with the proximity to the gateway that hears it best.
struct TagView: Encodable {
    var tag: String
    var beacon: String
    var state: String
    var zone: String?
    var since: Double
    var confidence: Double
    var lastSeen: Double?
    var proximity: String
    var gateways: [TagState.GatewayReading]
    var position: TagState.Position?
    /// Where and by which gateway it was last heard (its health).
    var lastSeenZone: String?
    var lastSeenGateway: String?
    /// From its Eddystone-TLM frames; absent for iBeacon and AltBeacon tags, which send none.
    var battery: TagState.Battery?
    var telemetry: TagState.TagTelemetry?
    /// `true` while missing; absent otherwise, as in the tag state.
    var missing: Bool?
    /// Advertisements heard against sent.
    var adverts: TagState.Adverts?

    init(_ state: TagState) {
        tag = state.tag.rawValue
        beacon = state.beacon
        self.state = state.state.rawValue
        zone = state.zone?.rawValue
        since = state.since
        confidence = state.confidence
        lastSeen = state.lastSeen
        proximity = state.gateways.max { $0.rssi < $1.rssi }?.proximity.rawValue ?? "unknown"
        gateways = state.gateways
        position = state.position
        lastSeenZone = state.lastSeenZone?.rawValue
        lastSeenGateway = state.lastSeenGateway?.rawValue
        battery = state.battery
        telemetry = state.telemetry
        missing = state.missing
        adverts = state.adverts
    }
}

struct TagList: Encodable {
    var t: Double
    var tags: [TagView]
}

struct VisitView: Encodable {
    var tag: String
    var zone: String
    var enter: Double
    /// nil while the tag is still there.
    var exit: Double?
    var duration: Double?
    var confidence: Double
    var suspect: Bool

    init(_ visit: HubStore.Visit, tag: String) {
        self.tag = tag
        zone = visit.zone
        enter = visit.enter
        exit = visit.exit
        duration = visit.duration
        confidence = visit.confidence
        suspect = visit.suspect
    }
}

struct PathView: Encodable {
    var tag: String
    var since: Double
    var until: Double
    var visits: [VisitView]
    /// The `offset` of the next page, nil on the last.
    var nextOffset: Int?
}

struct OccupancyView: Encodable {
    struct Zone: Encodable {
        var zone: String
        var name: String?
        var count: Int
        var tags: [String]
        /// Tags last here whose gateways went silent (live only).
        var unknown: [String]
    }
    var t: Double
    /// `live` (the hub's state now) or `history` (the database, for `at`).
    var source: String
    var zones: [Zone]
}

struct SeriesView: Encodable {
    var since: Double
    var until: Double
    var step: Double
    var zones: [HubStore.OccupancySeries]
}

struct DwellView: Encodable {
    struct Row: Encodable {
        /// With `site=all` only.
        var site: String?
        var zone: String?
        var start: Double?
        var hourOfDay: Int?
        var tag: String?
        var visits: Int
        var tags: Int
        var total: Double
        var mean: Double
        var median: Double
        var p90: Double
    }
    var by: String
    var since: Double?
    var until: Double?
    var rows: [Row]

    init(by: String, since: Double?, until: Double?, rows: [Row]) {
        self.by = by
        self.since = since
        self.until = until
        self.rows = rows
    }
}

extension DwellView.Row {
    /// A row of the report; `site` set when the request spans sites (`site=all`).
    init(_ row: HubStore.DwellRow, site: String?) {
        self.init(
            site: site, zone: row.zone, start: row.start, hourOfDay: row.hourOfDay, tag: row.tag,
            visits: row.statistics.visits, tags: row.statistics.tags, total: row.statistics.total,
            mean: row.statistics.mean, median: row.statistics.median, p90: row.statistics.p90)
    }
}

/// The sites of the history (a shared PostgreSQL history holds several), and the dashboard's own.
struct SitesView: Encodable {
    var site: String
    var sites: [String]
}

struct RoutesView: Encodable {
    var length: Int
    var routes: [HubStore.Route]
    var transitions: [HubStore.Transition]
}

/// An event as the API gives it: the contract's fields (docs/mqtt.md, "Event"), with the database row's id.
struct EventView: Encodable {
    var id: Int64?
    var type: String
    var tag: String?
    var zone: String?
    var previousZone: String?
    var t: Double
    var confidence: Double
    var reason: String
    var dwellSeconds: Double?
    var region: String?
    var code: String?
    var gateway: String?
    /// A `gateway-moved` alert's, among recent events (the history keeps it in `reason`).
    var estimatedPosition: EstimatedPosition?

    init(_ event: HubStore.StoredEvent) {
        id = event.id
        type = event.type
        tag = event.tag
        zone = event.zone
        previousZone = event.previousZone
        t = event.t
        confidence = event.confidence
        reason = event.reason
        dwellSeconds = event.dwellSeconds
        region = event.region
        code = event.code
        gateway = event.gateway
    }

    init(_ event: ZoneEvent) {
        id = nil
        type = event.type.rawValue
        tag = event.tag?.rawValue
        zone = event.zone?.rawValue
        previousZone = event.previousZone?.rawValue
        t = event.t
        confidence = event.confidence
        reason = event.reason
        dwellSeconds = event.dwellSeconds
        region = event.region
        code = event.code
        gateway = event.gateway?.rawValue
        estimatedPosition = event.estimatedPosition
    }
}

struct EventList: Encodable {
    /// `history` (the database) or `recent` (kept in memory, without a database).
    var source: String
    var events: [EventView]
    var nextOffset: Int?
}

struct RegionView: Encodable {
    var id: String
    /// The canonical beacon-id prefix the region matches (docs/mqtt.md, "Beacon identity").
    var beacons: String
}

struct RegionList: Encodable {
    var regions: [RegionView]
}

/// CoreLocation's `requestState(for:)`: `inside` when a tag of the region is inside (the zone, when given),
/// `unknown` when none is but one's state is unknown, else `outside`.
struct RegionStateView: Encodable {
    struct Member: Encodable {
        var tag: String
        var state: String
        var zone: String?
    }
    var region: String
    var zone: String?
    var state: String
    var tags: [Member]

    init(region: String, zone: String?, tags: [TagState]) {
        self.region = region
        self.zone = zone
        self.tags = tags.map { tag in
            let state: TagState.State =
                switch (tag.state, zone) {
                case (.inside, let zone?) where tag.zone?.rawValue != zone: .outside
                case (.unknown, let zone?) where tag.zone != nil && tag.zone?.rawValue != zone: .outside
                default: tag.state
                }
            return Member(tag: tag.tag.rawValue, state: state.rawValue, zone: tag.zone?.rawValue)
        }
        state =
            self.tags.contains { $0.state == "inside" }
            ? "inside" : self.tags.contains { $0.state == "unknown" } ? "unknown" : "outside"
    }
}

struct StreamSnapshot: Encodable {
    var tags: [TagView]
    var occupancy: [ZoneOccupancy]
    var gateways: [LiveBoard.GatewayHealth]
    var health: LiveBoard.Health
    var events: [ZoneEvent]
}
