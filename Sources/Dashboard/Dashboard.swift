import BeaconModel
import BeaconStore
import Foundation
import Hummingbird
import Logging
import NIOCore
import Prometheus
import ServiceLifecycle
import Synchronization

/// The hub's HTTP side (docs/dashboard.md): the JSON API over the live board and the history database, the live
/// stream (Server-Sent Events), `/metrics` for Prometheus, `/health`, and the web page.
///
/// A service of its own inside the hub process: it fails alone (a port in use is logged and the hub goes on
/// ingesting without it) and reads the database through its own read-only connection, never the writer's.
public final class Dashboard: Service, Sendable {
    public let configuration: DashboardConfiguration
    public let board: LiveBoard
    public let registry: PrometheusCollectorRegistry
    let logger: Logger
    let bound = Mutex(Bound())
    /// The read-only history connection, opened at the first history request (the hub creates the file first).
    let history = Mutex<(any HistoryStore)?>(nil)
    let web: WebFiles

    struct Bound {
        var port: Int?
        var failed = false
        var waiting: [CheckedContinuation<Int?, Never>] = []
    }

    public init(
        configuration: DashboardConfiguration, board: LiveBoard, registry: PrometheusCollectorRegistry,
        logger: Logger
    ) {
        self.configuration = configuration
        self.board = board
        self.registry = registry
        self.logger = logger
        self.web = WebFiles(root: configuration.webRoot, chartJS: configuration.chartJS)
    }

    /// The port listened on, once listening; nil if the server could not start.
    public func boundPort() async -> Int? {
        await withCheckedContinuation { continuation in
            let now = bound.withLock { bound -> Int?? in
                if let port = bound.port { return .some(port) }
                if bound.failed { return .some(nil) }
                bound.waiting.append(continuation)
                return .none
            }
            if let now { continuation.resume(returning: now) }
        }
    }

    func settle(_ port: Int?) {
        let waiting = bound.withLock { bound in
            defer { bound.waiting = [] }
            if let port { bound.port = port } else { bound.failed = true }
            return bound.waiting
        }
        for continuation in waiting { continuation.resume(returning: port) }
    }

    /// Serves until cancelled or shut down gracefully (which first ends the live streams, so that the server's own
    /// shutdown does not wait for them). Never throws: a server that cannot start is logged.
    public func run() async {
        let app = Application(
            router: makeRouter(),
            configuration: ApplicationConfiguration(
                address: .hostname(configuration.host, port: configuration.port), serverName: "beacon-hub"),
            onServerRunning: { [self] channel in
                let port = channel.localAddress?.port
                settle(port)
                logger.info(
                    "dashboard listening",
                    metadata: ["url": "http://\(Self.urlHost(configuration.host)):\(port ?? configuration.port)/"])
            },
            logger: logger)
        await withGracefulShutdownHandler {
            await withTaskGroup(of: Void.self) { group in
                group.addTask { [self] in
                    do {
                        try await app.run()
                    } catch {
                        logger.error(
                            "dashboard stopped: cannot serve HTTP",
                            metadata: [
                                "address": "\(configuration.host):\(configuration.port)",
                                "error": "\(error)",
                                "fix": "is another program on that port? set http.port in hub.yaml",
                            ])
                    }
                    settle(nil)
                }
                group.addTask { [self] in await keepStreamsAlive() }
                await group.next()
                group.cancelAll()
            }
        } onGracefulShutdown: { [board] in
            board.finishStreams()
        }
        board.finishStreams()
        try? history.withLock { $0 }?.close()
    }

    /// A `ping` event every 15 s on each live stream, so that proxies and browsers keep it open.
    func keepStreamsAlive() async {
        while !Task.isCancelled {
            try? await Task.sleep(for: .seconds(15))
            board.broadcast(LiveBoard.Update(event: "ping", data: Array("{}".utf8)))
        }
    }

    static func urlHost(_ host: String) -> String {
        host.contains(":") ? "[\(host)]" : host
    }

    func makeRouter() -> Router<BasicRequestContext> {
        let router = Router(context: BasicRequestContext.self, options: .autoGenerateHeadEndpoints)
        // Outermost: a preflight is answered before the token is asked for, and error answers carry the headers too.
        if !configuration.corsOrigins.isEmpty { router.add(middleware: AllowedOrigins(configuration.corsOrigins)) }
        router.add(middleware: JSONErrors())
        router.add(middleware: BearerToken(token: configuration.token))
        addAPIRoutes(to: router)
        addCalibrationRoutes(to: router)
        router.get("/health") { [self] _, _ in try json(health(), status: .ok) }
        router.get("/health/live") { [self] _, _ in try json(health(), status: .ok) }
        router.get("/health/ready") { [self] _, _ in
            let health = health()
            return try json(health, status: health.ready ? .ok : .serviceUnavailable)
        }
        router.get("/metrics") { [self] _, _ in
            Response(
                status: .ok, headers: [.contentType: "text/plain; version=0.0.4; charset=utf-8"],
                body: .init(byteBuffer: ByteBuffer(bytes: registry.emitToBuffer())))
        }
        for (path, file) in [
            ("/", "index.html"), ("/app.js", "app.js"), ("/app.css", "app.css"), ("/calibrate", "calibrate.html"),
            ("/calibrate.js", "calibrate.js"), ("/calibrate.css", "calibrate.css"), ("/floorplan.js", "floorplan.js"),
        ] {
            router.get(RouterPath(path)) { [web] _, _ in try web.response(for: file) }
        }
        router.get("/lib/chart.js") { [web] _, _ in try web.chartResponse() }
        return router
    }

    func json(_ value: some Encodable, status: HTTPResponse.Status = .ok) throws -> Response {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        let data = try encoder.encode(value)
        return Response(
            status: status, headers: [.contentType: "application/json; charset=utf-8", .cacheControl: "no-store"],
            body: .init(byteBuffer: ByteBuffer(bytes: data)))
    }

    /// The history database, read-only; an API error when the hub keeps none or it cannot be opened.
    func historyStore() throws -> any HistoryStore {
        let open: @Sendable () throws -> any HistoryStore
        let location: String
        if let openHistory = configuration.openHistory {
            open = openHistory
            location = "the history database"
        } else if let path = configuration.storePath {
            let tripGap = configuration.tripGapSeconds
            open = { try HubStore(readingFrom: path, tripGapSeconds: tripGap) }
            location = "the history database \(path)"
        } else {
            throw APIError(
                .notFound, "no-history",
                "this hub keeps no history: add a store: section to hub.yaml (docs/storage.md)")
        }
        return try history.withLock { cached in
            if let cached { return cached }
            do {
                let store = try open()
                cached = store
                return store
            } catch {
                throw APIError(.serviceUnavailable, "store-error", "cannot open \(location): \(error)")
            }
        }
    }
}

extension Dashboard {
    /// The history of the site a request names (`site=NAME`), or of the dashboard's own site.
    func history(_ query: Query) async throws -> any HistoryStore {
        let histories = try await histories(query, allowingAll: false)
        return histories[0].store
    }

    /// The history of each site a request names: one site (`site=NAME`, or the dashboard's own), or every site of the
    /// database (`site=all`, where the endpoint allows it), as (site, store) in site order.
    func histories(
        _ query: Query, allowingAll: Bool = true
    ) async throws -> [(site: String, store: any HistoryStore)] {
        let store = try historyStore()
        let own = configuration.site.rawValue
        guard let asked = query.text("site"), asked != own else { return [(own, store)] }
        let sites = try await store.sites()
        if asked == "all" {
            guard allowingAll else {
                throw APIError.badRequest("site=all is for /api/dwell: give one site (GET /api/sites lists them)")
            }
            return sites.map { ($0, store.reading([$0])) }
        }
        guard sites.contains(asked) else {
            throw APIError.notFound(
                "no history of site \"\(asked)\" here: one of \(sites.joined(separator: ", ")) (or all)")
        }
        return [(asked, store.reading([asked]))]
    }
}

/// Every error leaves as JSON: the router's own (no such route, wrong method) become `not-found` / `bad-request`,
/// unexpected ones `internal` (logged, the message not leaked).
struct JSONErrors<Context: RequestContext>: RouterMiddleware {
    func handle(
        _ request: Request, context: Context, next: (Request, Context) async throws -> Response
    ) async throws -> Response {
        do {
            return try await next(request, context)
        } catch let error as APIError {
            throw error
        } catch let error as HTTPError {
            let code = error.status == .notFound ? "not-found" : error.status == .badRequest ? "bad-request" : "http"
            throw APIError(
                error.status, code,
                error.status == .notFound
                    ? "no such endpoint: \(request.uri.path) (the API is described in docs/openapi.yaml)"
                    : error.body ?? error.status.reasonPhrase)
        } catch let error as StoreError {
            throw APIError(.serviceUnavailable, "store-error", "the history database failed: \(error)")
        } catch {
            context.logger.error("request failed", metadata: ["path": "\(request.uri.path)", "error": "\(error)"])
            throw APIError(.internalServerError, "internal", "the request failed inside the hub (see its log)")
        }
    }
}

/// CORS for the configured origins (`http.corsOrigins`): other web pages may read the API with the token they hold.
/// Requests from other origins are served as before; the browser keeps their answers from the page.
struct AllowedOrigins<Context: RequestContext>: RouterMiddleware {
    let origins: Set<String>
    let any: Bool

    init(_ origins: [String]) {
        self.origins = Set(origins)
        any = origins.contains("*")
    }

    func handle(
        _ request: Request, context: Context, next: (Request, Context) async throws -> Response
    ) async throws -> Response {
        guard let origin = request.headers[.origin], any || origins.contains(origin) else {
            return try await next(request, context)
        }
        let allowed = any ? "*" : origin
        if request.method == .options && request.headers[.accessControlRequestMethod] != nil {
            return Response(
                status: .noContent,
                headers: [
                    .accessControlAllowOrigin: allowed,
                    .accessControlAllowMethods: "GET, HEAD, POST, PUT, DELETE, OPTIONS",
                    .accessControlAllowHeaders: "Authorization, Accept, Content-Type, Last-Event-ID",
                    .accessControlMaxAge: "600", .vary: "Origin",
                ])
        }
        var response: Response
        do {
            response = try await next(request, context)
        } catch let error as any HTTPResponseError {
            // Refusals (a missing token) reach the page with the header, so that it can say why.
            response = try error.response(from: request, context: context)
        }
        response.headers[.accessControlAllowOrigin] = allowed
        response.headers[values: .vary].append("Origin")
        return response
    }
}

/// With a token configured, `/api/*` and `/metrics` need it: `Authorization: Bearer <token>`, or `access_token=` in
/// the query (browsers cannot set headers on an EventSource). The page itself and `/health` are open: they hold no
/// data.
struct BearerToken<Context: RequestContext>: RouterMiddleware {
    let token: [UInt8]?

    init(token: String?) {
        self.token = token.map { Array($0.utf8) }
    }

    func handle(
        _ request: Request, context: Context, next: (Request, Context) async throws -> Response
    ) async throws -> Response {
        guard let token else { return try await next(request, context) }
        let path = request.uri.path
        guard path.hasPrefix("/api/") || path == "/metrics" else { return try await next(request, context) }
        var given: String?
        if let header = request.headers[.authorization], header.lowercased().hasPrefix("bearer ") {
            given = String(header.dropFirst("bearer ".count)).trimmingCharacters(in: .whitespaces)
        } else {
            given = request.uri.queryParameters.get("access_token")
        }
        guard let given, Self.equal(Array(given.utf8), token) else {
            throw APIError(
                .unauthorized, "unauthorized",
                given == nil
                    ? "this hub needs its API token: send Authorization: Bearer <token> (http.tokenFile in hub.yaml)"
                    : "wrong token")
        }
        return try await next(request, context)
    }

    /// Compares in time that depends on the length only, not on where the first difference is.
    static func equal(_ a: [UInt8], _ b: [UInt8]) -> Bool {
        guard a.count == b.count else { return false }
        var difference: UInt8 = 0
        for index in a.indices { difference |= a[index] ^ b[index] }
        return difference == 0
    }
}
