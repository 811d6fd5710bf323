import BeaconConfig
import BeaconModel
import BeaconStore
import BrokerTestSupport
import Dashboard
import Foundation
import Logging
import Prometheus
import ZoneInference

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// A dashboard on a free loopback port over the shipped museum venue, a history database with a known itinerary
/// written by the hub's own store code, and a live board fed with contract payloads — what the hub would publish.
final class DashboardFixture: Sendable {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()
    let directory: URL
    let dashboard: Dashboard
    let board: LiveBoard
    let registry = PrometheusCollectorRegistry()
    let task: Task<Void, Never>
    let port: Int
    let token: String?
    let topics = Topics(site: "museum")
    /// 2027-01-15 08:00 UTC: the itinerary's first enter.
    static let start = 1_800_000_000.0

    /// The itinerary's first enter (`start`, or `historyStart` for a page that shows the last 24 hours).
    let historyStart: Double

    init(
        token: String? = nil, history: Bool = true, historyStart: Double = DashboardFixture.start,
        corsOrigins: [String] = [], calibration: (any CalibrationDesk)? = nil
    ) async throws {
        self.historyStart = historyStart
        let venue = try VenueLoader.load(from: Self.root.appendingPathComponent("config/venues/museum.yaml").path)
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("dashboard-\(UUID().uuidString)")
        self.directory = directory
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let database = directory.appendingPathComponent("hub.db").path
        do {
            if history { try await Self.writeHistory(to: database, start: historyStart) }
        } catch {
            try? FileManager.default.removeItem(at: directory)
            throw error
        }
        board = LiveBoard(topics: topics)
        self.token = token
        let regions = [
            TagRegion(id: "visitors", prefix: "ibeacon:e2c56db5-dffb-48d2-b060-d0f5a71096e0:1"),
            TagRegion(id: "staff", prefix: "ibeacon:e2c56db5-dffb-48d2-b060-d0f5a71096e0:2"),
        ]
        dashboard = Dashboard(
            configuration: DashboardConfiguration(
                port: 0, token: token, site: "museum", venue: venue, regions: regions,
                storePath: history ? database : nil, corsOrigins: corsOrigins, calibration: calibration),
            board: board, registry: registry, logger: Logger(label: "test.dashboard"))
        let task = Task { [dashboard] in await dashboard.run() }
        self.task = task
        guard let port = await dashboard.boundPort() else {
            task.cancel()
            await task.value
            try? FileManager.default.removeItem(at: directory)
            throw FixtureError("the dashboard did not start")
        }
        self.port = port
    }

    /// Stops the dashboard, then deletes the fixture's folder. Tests call it as a `TestTeardown` step.
    func stop() async {
        task.cancel()
        await task.value
        try? FileManager.default.removeItem(at: directory)
    }

    /// visitor-1: entrance 0–120 s, egypt 180–480 s, greece 540–600 s, then still in rome from 660 s.
    /// visitor-2: entrance 60–120 s, egypt 180–240 s (the same route, shorter). Events for each enter and exit.
    static func writeHistory(to path: String, start: Double) async throws {
        let store = try HubStore(path: path)
        defer { try? store.close() }
        try await store.adopt(site: "museum", keyID: nil)
        let steps: [(tag: String, from: String?, to: String?, t: Double)] = [
            ("visitor-1", nil, "entrance", 0), ("visitor-2", nil, "entrance", 60), ("visitor-1", "entrance", nil, 120),
            ("visitor-2", "entrance", nil, 120), ("visitor-1", nil, "egypt", 180), ("visitor-2", nil, "egypt", 180),
            ("visitor-2", "egypt", nil, 240), ("visitor-1", "egypt", nil, 480), ("visitor-1", nil, "greece", 540),
            ("visitor-1", "greece", nil, 600), ("visitor-1", nil, "rome", 660),
        ]
        var journal = HubJournal()
        for step in steps {
            let beacon = "ibeacon:e2c56db5-dffb-48d2-b060-d0f5a71096e0:1:\(step.tag.suffix(1))"
            journal.moves.append(
                HubJournal.Move(
                    key: step.tag, beaconKey: beacon, liveTag: step.tag, beacon: beacon, region: "visitors",
                    from: step.from, to: step.to, t: start + step.t, confidence: 0.9))
            journal.events.append(
                HubJournal.Event(
                    t: start + step.t, type: step.to == nil ? "exit" : "enter", key: step.tag, liveTag: step.tag,
                    zone: step.to ?? step.from, previousZone: nil, confidence: 0.9, dwell: nil, region: "visitors",
                    code: nil, gateway: nil, reason: "test itinerary"))
        }
        _ = try await store.commit(journal, at: start + 700)
    }

    // MARK: Feeding the board as the hub does

    func publish(_ value: some Encodable, to topic: String) throws {
        board.observe(topic: topic, payload: try ContractCoding.encode(value))
    }

    /// A tag inside `zone` (or its state without a zone), heard by `gateway`; with its health as the hub adds it:
    /// when it was last heard (`lastSeen`, default `t`; none when `neverHeard`) and where, its battery and
    /// TLM frame, and `missing`.
    func place(
        _ tag: String, in zone: String?, state: TagState.State = .inside, minor: Int = 1, major: Int = 1,
        gateway: String = "gw-entrance", at t: Double = Date().timeIntervalSince1970,
        position: TagState.Position? = nil, beacon: String? = nil, lastSeen: Double? = nil, neverHeard: Bool = false,
        lastSeenZone: String? = nil, lastSeenGateway: String? = nil, battery: TagState.Battery? = nil,
        telemetry: TagState.TagTelemetry? = nil, missing: Bool = false, adverts: TagState.Adverts? = nil
    ) throws {
        let heard = neverHeard ? nil : lastSeen ?? t
        let reading = TagState.GatewayReading(
            gateway: GatewayID(rawValue: gateway)!, rssi: -60, distance: 1.5, proximity: .near, lastSeen: heard ?? t)
        var published = TagState(
            tag: TagID(rawValue: tag)!,
            beacon: beacon ?? "ibeacon:e2c56db5-dffb-48d2-b060-d0f5a71096e0:\(major):\(minor)", state: state,
            zone: zone.flatMap { ZoneID(rawValue: $0) }, since: t, confidence: 0.9, lastSeen: heard,
            gateways: [reading], position: position)
        published.lastSeenZone = lastSeenZone.map { ZoneID(rawValue: $0)! }
        published.lastSeenGateway = lastSeenGateway.map { GatewayID(rawValue: $0)! }
        published.battery = battery
        published.telemetry = telemetry
        published.missing = missing ? true : nil
        published.adverts = adverts
        try publish(published, to: topics.tagState(TagID(rawValue: tag)!))
    }

    func occupy(_ zone: String, with tags: [String], unknown: [String] = []) throws {
        try publish(
            ZoneOccupancy(
                zone: ZoneID(rawValue: zone)!, tags: tags.map { TagID(rawValue: $0)! },
                t: Date().timeIntervalSince1970, unknown: unknown.isEmpty ? nil : unknown.map { TagID(rawValue: $0)! }),
            to: topics.zoneOccupancy(ZoneID(rawValue: zone)!))
    }

    // MARK: HTTP

    struct Reply: Sendable {
        var status: Int
        var body: Data
        var contentType: String?
        var headers: [String: String] = [:]
        var json: [String: Any] { (try? JSONSerialization.jsonObject(with: body)) as? [String: Any] ?? [:] }
        var text: String { String(decoding: body, as: UTF8.self) }
    }

    func get(
        _ path: String, token: String? = nil, header: Bool = true, method: String = "GET",
        headers extra: [String: String] = [:]
    ) async throws -> Reply {
        var request = URLRequest(url: URL(string: "http://127.0.0.1:\(port)\(path)")!)
        request.httpMethod = method
        if let token = token ?? self.token, header {
            request.setValue("Bearer \(token)", forHTTPHeaderField: "Authorization")
        }
        for (name, value) in extra { request.setValue(value, forHTTPHeaderField: name) }
        let (data, response) = try await URLSession.shared.data(for: request)
        let http = response as! HTTPURLResponse
        var headers: [String: String] = [:]
        for (name, value) in http.allHeaderFields {
            if let name = name as? String, let value = value as? String { headers[name.lowercased()] = value }
        }
        return Reply(
            status: http.statusCode, body: data, contentType: http.value(forHTTPHeaderField: "Content-Type"),
            headers: headers)
    }
}

struct FixtureError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// Reads a Server-Sent Events stream over a plain socket (URLSession on Linux cannot stream a body).
final class EventStreamReader: @unchecked Sendable {
    // One reader per test, used from one task at a time.
    let fd: Int32
    var buffer = ""

    init(port: Int, path: String) throws {
        fd = try connectLoopback(port: port, receiveTimeout: timeval(tv_sec: 0, tv_usec: 0))
        let request = "GET \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: text/event-stream\r\n\r\n"
        _ = request.withCString { send(fd, $0, strlen($0), 0) }
    }

    deinit { close(fd) }

    /// The next event named `name` (skipping others), with its data, or nil after `timeout`.
    func next(_ name: String, within timeout: Duration = .seconds(30)) async -> String? {
        let deadline = ContinuousClock.now.advanced(by: timeout)
        while true {
            while let end = buffer.range(of: "\n\n") {
                let frame = String(buffer[..<end.lowerBound])
                buffer.removeSubrange(..<end.upperBound)
                let lines = frame.split(separator: "\n")
                if lines.contains(where: { $0.hasSuffix("event: \(name)") }),
                    let data = lines.first(where: { $0.hasPrefix("data: ") })
                {
                    return String(data.dropFirst(6))
                }
            }
            if ContinuousClock.now >= deadline { return nil }
            var bytes = [UInt8](repeating: 0, count: 65_536)
            // Never blocking: a read that waits holds one of the few threads every test's tasks share, and a wait
            // of seconds starved the other suites' timers and streams until they timed out (seen on a CI run).
            let count = recv(fd, &bytes, bytes.count, Int32(MSG_DONTWAIT))
            if count > 0 {
                buffer += String(decoding: bytes[..<count], as: UTF8.self)
            } else {
                try? await Task.sleep(for: .milliseconds(20))
            }
        }
    }
}
