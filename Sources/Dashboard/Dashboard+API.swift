import BeaconModel
import BeaconStore
import Foundation
import Hummingbird
import ZoneInference

/// The JSON endpoints (docs/openapi.yaml). Live answers come from the board; history from the database.
extension Dashboard {
    func addAPIRoutes(to router: Router<BasicRequestContext>) {
        router.get("/api/venue") { [self] _, _ in try json(venueView(placements: await placements())) }
        router.get("/api/hub") { [self] _, _ in
            let snapshot = board.snapshot
            return try json(HubView(site: configuration.site.rawValue, status: snapshot.hub, health: health()))
        }
        router.get("/api/tags") { [self] request, _ in
            let tags = try TagSelection(Query(request)).apply(to: board.snapshot.tags.values)
            return try json(TagList(t: Date().timeIntervalSince1970, tags: tags.map(TagView.init)))
        }
        // The same list for a spreadsheet. Under /api/, so the token guards it as it does the JSON (a plain link
        // carries it as access_token).
        router.get("/api/tags.csv") { [self] request, _ in
            let tags = try TagSelection(Query(request)).apply(to: board.snapshot.tags.values)
            return Response(
                status: .ok,
                headers: [
                    .contentType: "text/csv; charset=utf-8", .cacheControl: "no-store",
                    .contentDisposition: "attachment; filename=\"tags-\(configuration.site.rawValue).csv\"",
                ],
                body: .init(byteBuffer: ByteBuffer(string: TagsCSV.render(tags))))
        }
        router.get("/api/tags/:tag") { [self] _, context in
            let tag = try context.parameters.require("tag")
            guard let state = board.snapshot.tags.first(where: { $0.key.rawValue == tag })?.value else {
                throw APIError.notFound("no tag \"\(tag)\" has been seen since the hub started")
            }
            return try json(TagView(state))
        }
        router.get("/api/tags/:tag/path") { [self] request, context in
            let tag = try context.parameters.require("tag")
            let query = Query(request)
            let (since, until) = try query.window(defaultHours: 24)
            let (limit, offset) = try query.page()
            let stored = configuration.storedTagID(tag)
            let visits = try await history(query).visits(
                HubStore.VisitFilter(tag: stored, since: since, until: until), limit: limit + 1, offset: offset)
            return try json(
                PathView(
                    tag: tag, since: since, until: until,
                    visits: visits.prefix(limit).map { VisitView($0, tag: tag) },
                    nextOffset: visits.count > limit ? offset + limit : nil))
        }
        router.get("/api/occupancy") { [self] request, _ in
            let query = Query(request)
            if let at = try query.time("at") {
                let rows = try await history(query).occupancy(at: at)
                let byZone = Dictionary(rows.map { ($0.zone, $0.tags) }, uniquingKeysWith: { first, _ in first })
                let zones = Set(zoneIDs()).union(byZone.keys).sorted()
                return try json(
                    OccupancyView(
                        t: at, source: "history",
                        zones: zones.map { zone in
                            let tags = byZone[zone] ?? []
                            return .init(zone: zone, name: zoneName(zone), count: tags.count, tags: tags, unknown: [])
                        }))
            }
            let snapshot = board.snapshot
            let zones = Set(zoneIDs()).union(snapshot.occupancy.keys.map(\.rawValue)).sorted()
            return try json(
                OccupancyView(
                    t: Date().timeIntervalSince1970, source: "live",
                    zones: zones.map { zone in
                        let occupancy = snapshot.occupancy[ZoneID(rawValue: zone)!]
                        return .init(
                            zone: zone, name: zoneName(zone), count: occupancy?.count ?? 0,
                            tags: occupancy?.tags.map(\.rawValue) ?? [],
                            unknown: occupancy?.unknown?.map(\.rawValue) ?? [])
                    }))
        }
        router.get("/api/occupancy/series") { [self] request, _ in
            let query = Query(request)
            let (since, until) = try query.window(defaultHours: 24)
            let step = try query.number("step", in: 1...86_400) ?? max(60, ((until - since) / 288).rounded(.up))
            guard (until - since) / step <= 10_000 else {
                throw APIError.badRequest("more than 10000 samples per zone: give a longer step or a shorter window")
            }
            let zones = query.list("zone")
            let series = try await history(query).occupancySeries(
                zones: zones, since: since, until: until, step: step)
            return try json(SeriesView(since: since, until: until, step: step, zones: series))
        }
        router.get("/api/sites") { [self] _, _ in
            let sites = configuration.hasHistory ? try await historyStore().sites() : []
            return try json(SitesView(site: configuration.site.rawValue, sites: sites))
        }
        router.get("/api/dwell") { [self] request, _ in
            let query = Query(request)
            let grouping = try query.choice("by", HubStore.DwellGrouping.self) ?? .zone
            let (since, until) = try query.window(defaultHours: nil)
            // Every site at once: a shared server answers each on a connection of its own.
            let histories = try await histories(query)
            let zone = query.text("zone")
            let everySite = query.text("site") == "all"
            let rows = try await withThrowingTaskGroup(of: (Int, [DwellView.Row]).self) { group in
                for (index, (site, store)) in histories.enumerated() {
                    group.addTask {
                        let dwell = try await store.dwell(by: grouping, zone: zone, since: since, until: until)
                        return (index, dwell.map { DwellView.Row($0, site: everySite ? site : nil) })
                    }
                }
                var answers = [[DwellView.Row]](repeating: [], count: histories.count)
                for try await (index, answer) in group { answers[index] = answer }
                return answers.flatMap { $0 }
            }
            return try json(DwellView(by: grouping.rawValue, since: since, until: until, rows: rows))
        }
        router.get("/api/routes") { [self] request, _ in
            let query = Query(request)
            let top = try query.integer("top", in: 1...1000) ?? 10
            let length = try query.integer("length", in: 2...20) ?? 3
            let (since, until) = try query.window(defaultHours: nil)
            let store = try await history(query)
            let routes = try await store.routes(top: top, length: length, since: since, until: until)
            let transitions = try await store.transitionMatrix(since: since, until: until)
            return try json(RoutesView(length: length, routes: routes, transitions: transitions))
        }
        router.get("/api/events") { [self] request, _ in
            let query = Query(request)
            let (since, until) = try query.window(defaultHours: nil)
            let (limit, offset) = try query.page()
            let types = try query.list("type").map { type in
                guard ZoneEventType(rawValue: type) != nil else {
                    throw APIError.badRequest(
                        "unknown event type \"\(type)\": one of "
                            + ZoneEventType.allCases.map(\.rawValue).joined(separator: ", "))
                }
                return type
            }
            let tag = query.text("tag")
            let zone = query.text("zone")
            if configuration.hasHistory {
                let events = try await history(query).events(
                    HubStore.EventFilter(
                        types: types, tag: tag.map(configuration.storedTagID), zone: zone, since: since, until: until),
                    limit: limit + 1, offset: offset)
                return try json(
                    EventList(
                        source: "history", events: events.prefix(limit).map { EventView($0) },
                        nextOffset: events.count > limit ? offset + limit : nil))
            }
            // Without a database: the events kept in memory since the hub started, newest first.
            let recent = board.snapshot.events.reversed().filter { event in
                (types.isEmpty || types.contains(event.type.rawValue)) && (tag == nil || event.tag?.rawValue == tag)
                    && (zone == nil || event.zone?.rawValue == zone || event.previousZone?.rawValue == zone)
                    && (since == nil || event.t >= since!) && (until == nil || event.t < until!)
            }
            let page = recent.dropFirst(offset).prefix(limit)
            return try json(
                EventList(
                    source: "recent", events: page.map { EventView($0) },
                    nextOffset: recent.count > offset + limit ? offset + limit : nil))
        }
        router.get("/api/regions") { [self] _, _ in
            try json(RegionList(regions: configuration.regions.map { RegionView(id: $0.id, beacons: $0.prefix) }))
        }
        router.get("/api/regions/:region/state") { [self] request, context in
            let id = try context.parameters.require("region")
            guard let region = configuration.regions.first(where: { $0.id == id }) else {
                throw APIError.notFound(
                    "no region \"\(id)\" in hub.yaml; regions: "
                        + configuration.regions.map(\.id).joined(separator: ", "))
            }
            let zone = Query(request).text("zone")
            if let zone, !zoneIDs().isEmpty, !zoneIDs().contains(zone) {
                throw APIError.notFound("no zone \"\(zone)\" in the venue")
            }
            let members = board.snapshot.tags.values.filter { region.matches(beacon: $0.beacon) }
                .sorted { $0.tag.rawValue < $1.tag.rawValue }
            return try json(RegionStateView(region: region.id, zone: zone, tags: members))
        }
        router.get("/api/stream") { [self] _, _ in
            // Subscribed before the snapshot is taken: a change in between is sent twice, never lost.
            let updates = board.updates()
            let first = try streamSnapshot()
            return Response(
                status: .ok,
                headers: [
                    .contentType: "text/event-stream", .cacheControl: "no-store", .init("X-Accel-Buffering")!: "no",
                ],
                body: ResponseBody { writer in
                    try await writer.write(Self.frame(event: "snapshot", data: first))
                    for await update in updates {
                        try await writer.write(Self.frame(event: update.event, data: update.data))
                    }
                    try await writer.finish(nil)
                })
        }
    }

    /// One Server-Sent Event.
    static func frame(event: String, data: [UInt8]) -> ByteBuffer {
        var buffer = ByteBuffer()
        buffer.writeString("event: \(event)\ndata: ")
        buffer.writeBytes(data.filter { $0 != UInt8(ascii: "\n") })
        buffer.writeString("\n\n")
        return buffer
    }

    func streamSnapshot() throws -> [UInt8] {
        let snapshot = board.snapshot
        let view = StreamSnapshot(
            tags: snapshot.tags.values.sorted { $0.tag.rawValue < $1.tag.rawValue }.map(TagView.init),
            occupancy: snapshot.occupancy.values.sorted { $0.zone.rawValue < $1.zone.rawValue },
            gateways: snapshot.gateways.values.sorted { $0.gateway.rawValue < $1.gateway.rawValue },
            health: snapshot.health, events: Array(snapshot.events.suffix(50)))
        return Array(try JSONEncoder().encode(view))
    }

    func health() -> HealthView {
        let snapshot = board.snapshot
        return HealthView(
            status: "ok", ready: snapshot.health.problems.isEmpty, problems: snapshot.health.problems,
            role: snapshot.health.role, mqttConnected: snapshot.health.mqttConnected,
            storeWritable: snapshot.health.storeWritable, uncommittedBatches: snapshot.health.uncommittedBatches,
            trackedTags: snapshot.tags.count, streams: board.streamCount)
    }

    func zoneIDs() -> [String] { configuration.venue?.zones.map(\.id.rawValue) ?? [] }

    func zoneName(_ zone: String) -> String? {
        configuration.venue?.zones.first { $0.id.rawValue == zone }?.name
    }

    /// Where the gateways placed elsewhere than the venue file says stand: the calibration in force on a hub; on
    /// `beacon-hub serve`, which runs no engine, where the history's `gateways` table has them (the hub writes it as
    /// it places them). A history that cannot be read leaves the venue file's places, logged: the plan still draws.
    func placements() async -> [String: Calibration.Placement] {
        if let desk = configuration.calibration { return desk.placements }
        guard let venue = configuration.venue, configuration.hasHistory else { return [:] }
        do {
            let recorded = try await historyStore().gateways()
            var placements: [String: Calibration.Placement] = [:]
            for gateway in venue.gateways {
                // Only a gateway standing elsewhere counts: a zone alone that differs is a venue file edited since.
                guard let row = recorded.first(where: { $0.id == gateway.id.rawValue }),
                    hypot(row.x - gateway.position.x, row.y - gateway.position.y) >= 0.01
                else { continue }
                placements[row.id] = Calibration.Placement(
                    x: row.x, y: row.y, zone: row.zone.map { ZoneID(unchecked: $0) })
            }
            return placements
        } catch {
            logger.warning(
                "cannot read where the gateways stand from the history: the plan shows the venue file's places",
                metadata: ["error": "\(error)", "fix": "check the database that store: in hub.yaml names"])
            return [:]
        }
    }

    func venueView(placements: [String: Calibration.Placement]) -> VenueView {
        let snapshot = board.snapshot
        let venue = configuration.venue
        let health = snapshot.gateways
        // A gateway placed from its panel stands where the placement says; the venue file's place goes along.
        var gateways =
            venue.map { file in
                zip(file.placed(by: placements).gateways, file.gateways).map { gateway, filed -> GatewayView in
                    var view = GatewayView(
                        id: gateway.id.rawValue, zone: gateway.zone?.rawValue, position: gateway.position,
                        health: health[gateway.id], beacon: gateway.beacon, links: snapshot.hub?.links)
                    if placements[gateway.id.rawValue] != nil { view.venueFilePosition = filed.position }
                    return view
                }
            } ?? []
        // Gateways the hub hears that the venue does not place (foreign gateways, a venue not yet updated).
        for (id, state) in health where !gateways.contains(where: { $0.id == id.rawValue }) {
            gateways.append(
                GatewayView(id: id.rawValue, zone: nil, position: nil, health: state, links: snapshot.hub?.links))
        }
        let zones =
            venue?.zones.map { ZoneView(id: $0.id.rawValue, name: $0.name, shape: $0.shape.vertices) }
            ?? snapshot.occupancy.keys.map { ZoneView(id: $0.rawValue, name: $0.rawValue, shape: []) }
        let points = zones.flatMap(\.shape) + gateways.compactMap(\.position)
        return VenueView(
            site: configuration.site.rawValue, name: venue?.name ?? configuration.site.rawValue,
            zones: zones.sorted { $0.id < $1.id }, gateways: gateways.sorted { $0.id < $1.id },
            doors: venue?.doors.map { DoorView(between: $0.between, at: $0.at, width: $0.width) } ?? [],
            walls: venue?.walls.map { WallView(from: $0.from, to: $0.to) } ?? [],
            bounds: points.isEmpty
                ? nil
                : BoundsView(
                    minX: points.map(\.x).min()!, minY: points.map(\.y).min()!, maxX: points.map(\.x).max()!,
                    maxY: points.map(\.y).max()!))
    }
}

/// A request's query, read with messages that name the parameter and what it should be.
struct Query {
    let parameters: [String: [String]]

    init(_ request: Request) {
        var parameters: [String: [String]] = [:]
        for (key, value) in request.uri.queryParameters {
            parameters[String(key), default: []].append(String(value))
        }
        self.parameters = parameters
    }

    func text(_ name: String) -> String? {
        parameters[name]?.last.flatMap { $0.isEmpty ? nil : $0 }
    }

    /// Repeated or comma-separated: `type=enter&type=exit` or `type=enter,exit`.
    func list(_ name: String) -> [String] {
        (parameters[name] ?? []).flatMap { $0.split(separator: ",").map(String.init) }
    }

    func time(_ name: String) throws -> Double? {
        guard let text = text(name) else { return nil }
        do {
            return try TimeText.parse(text)
        } catch {
            throw APIError.badRequest("\(name): \(error.description)")
        }
    }

    func number(_ name: String, in range: ClosedRange<Double>) throws -> Double? {
        guard let text = text(name) else { return nil }
        guard let value = Double(text), range.contains(value) else {
            throw APIError.badRequest("\(name) must be a number from \(range.lowerBound) to \(range.upperBound)")
        }
        return value
    }

    func integer(_ name: String, in range: ClosedRange<Int>) throws -> Int? {
        guard let text = text(name) else { return nil }
        guard let value = Int(text), range.contains(value) else {
            throw APIError.badRequest("\(name) must be a whole number from \(range.lowerBound) to \(range.upperBound)")
        }
        return value
    }

    func choice<T: RawRepresentable & CaseIterable>(_ name: String, _ type: T.Type) throws -> T?
    where T.RawValue == String {
        guard let text = text(name) else { return nil }
        guard let value = T(rawValue: text) else {
            throw APIError.badRequest(
                "\(name) must be one of " + T.allCases.map(\.rawValue).joined(separator: ", ") + ", not \"\(text)\"")
        }
        return value
    }

    /// `since` and `until` (ISO-8601 or unix seconds); `since` defaults to `defaultHours` before `until` (or now).
    func window(defaultHours: Double?) throws -> (since: Double?, until: Double?) {
        let until = try time("until")
        var since = try time("since")
        if since == nil, let defaultHours {
            since = (until ?? Date().timeIntervalSince1970) - defaultHours * 3600
        }
        if let since, since >= until ?? Date().timeIntervalSince1970 {
            throw APIError.badRequest(until == nil ? "since must be in the past" : "since must be before until")
        }
        return (since, until)
    }

    /// `limit` (1–1000, default 100) and `offset` (default 0).
    func page() throws -> (limit: Int, offset: Int) {
        (try integer("limit", in: 1...1000) ?? 100, try integer("offset", in: 0...Int(Int32.max)) ?? 0)
    }
}

extension Query {
    /// A window with both ends (the default `until` is now).
    func window(defaultHours: Double) throws -> (since: Double, until: Double) {
        let (since, until) = try window(defaultHours: Optional(defaultHours))
        return (since!, until ?? Date().timeIntervalSince1970)
    }
}
