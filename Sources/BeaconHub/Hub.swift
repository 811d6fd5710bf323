import BeaconConfig
import BeaconMQTT
import BeaconModel
import BeaconStore
import Dashboard
import Foundation
import Logging
import ServiceLifecycle
import Synchronization
import ZoneInference

/// The hub as a service (`beacon-hub run`): holds the site through the standby lock, and while it does, ingests every
/// gateway's sightings into the zone engine and publishes events, retained tag state, zone occupancy,
/// acknowledgements and its status (docs/hub.md).
///
/// Two MQTT connections: the lock connection (clean session, short keep-alive, last-will clearing `hub/active`)
/// always, and while active the main connection (persistent session, last-will `hub/status` offline). A standby hub
/// has only the first.
public final class Hub: Service, Sendable {
    public let configuration: HubConfiguration
    public let topics: Topics
    let lockClient: MQTTClient
    let makeMainClient: @Sendable () throws -> MQTTClient
    /// The engine as configured, before any sighting: each active period starts from a copy. Built once — the
    /// venue model of a large site takes seconds.
    let initialEngine: ZoneEngine
    let foreign: ForeignSightingDecoder?
    /// The history database, `nil` without `store:`.
    let store: (any HistoryStore)?
    let pseudonyms: TagPseudonyms
    /// What the dashboard shows: fed with everything the hub publishes, and its gateways' health.
    public let board: LiveBoard
    /// The HTTP side (`http:` in hub.yaml), nil without it.
    public let dashboard: Dashboard?
    public let metrics: HubMetrics
    let logger: Logger
    /// POSTs the events to hub.yaml's `webhooks:`; `nil` without any.
    let webhooks: WebhookDispatcher?
    let shared = Mutex(Shared())
    /// The calibration page's walks and versions; nil without a venue file.
    let calibrationDesk: HubCalibrationDesk?

    struct Shared {
        var role = HubLock.Role.undecided
        var session: Session?
        /// Messages seen on `hub/active`, to tell "no retained claim" from one.
        var claimMessages = 0
    }

    init(
        configuration: HubConfiguration, lockClient: MQTTClient,
        makeMainClient: @escaping @Sendable () throws -> MQTTClient,
        initialEngine: ZoneEngine, store: (any HistoryStore)?, pseudonyms: TagPseudonyms, token: String?, logger: Logger
    ) {
        self.store = store
        let topics = configuration.mqtt.topics(site: configuration.site)
        let board = LiveBoard(topics: topics)
        let metrics = HubMetrics()
        self.board = board
        self.metrics = metrics
        let desk = configuration.loadedVenue.map { venue in
            HubCalibrationDesk(
                venue: venue, settings: configuration.inference, site: configuration.site,
                configured: initialEngine.calibration, configuredPath: configuration.calibration, store: store,
                logger: logger)
        }
        calibrationDesk = desk
        self.dashboard = configuration.http.map { http in
            Dashboard(
                configuration: DashboardConfiguration(
                    host: http.host, port: http.port, token: token, site: configuration.site,
                    venue: configuration.loadedVenue, regions: configuration.regions.map(\.region),
                    storePath: configuration.store.flatMap { $0.backend == .sqlite ? $0.path : nil },
                    openHistory: Self.sharedHistoryOpener(configuration, logger: logger),
                    tripGapSeconds: configuration.store?.tripGapSeconds ?? 600,
                    storedTagID: { pseudonyms.key(for: $0) },
                    chartJS: http.chartJS, webRoot: http.webRoot, corsOrigins: http.corsOrigins,
                    calibration: desk),
                board: board, registry: metrics.registry, logger: logger)
        }
        self.pseudonyms = pseudonyms
        self.configuration = configuration
        self.topics = topics
        self.lockClient = lockClient
        self.makeMainClient = makeMainClient
        self.initialEngine = initialEngine
        let foreign =
            configuration.espresense != nil || configuration.openMQTTGateway != nil
            ? ForeignSightingDecoder(
                espresense: configuration.espresense, openMQTTGateway: configuration.openMQTTGateway)
            : nil
        self.foreign = foreign
        self.logger = logger
        webhooks =
            configuration.webhooks.isEmpty
            ? nil : WebhookDispatcher(configuration.webhooks, topics: topics, logger: logger)
        desk?.attach(self)
    }

    /// How the dashboard opens a history kept on a server (nil for a file, which it opens by path).
    static func sharedHistoryOpener(
        _ configuration: HubConfiguration, logger: Logger
    ) -> (@Sendable () throws -> any HistoryStore)? {
        guard let settings = configuration.store, settings.backend == .postgres else { return nil }
        let site = configuration.site.rawValue
        return { try settings.openForReading(site: site, sites: [site], logger: logger) }
    }

    public func run() async throws {
        if let store {
            // A database of another site or pseudonymisation is refused before anything is ingested.
            try await store.adopt(site: configuration.site.rawValue, keyID: pseudonyms.keyID)
            // Where the gateways stand with hub.yaml's calibration; a stored version placing them elsewhere rewrites
            // it when it is put in force (`HubCalibrationDesk.restore`).
            if let venue = configuration.loadedVenue?.placed(by: initialEngine.calibration?.placements) {
                try await store.describeVenue(
                    zones: venue.zones.map { ($0.id.rawValue, $0.name) },
                    gateways: venue.gateways.map { ($0.id.rawValue, $0.zone?.rawValue, $0.position.x, $0.position.y) })
            }
        }
        defer { try? store?.close() }
        let (signals, signal) = AsyncStream<HubID?>.makeStream()
        let stopping = Mutex(false)
        // Made before the client starts, so that the first connect is not missed.
        let lockEvents = lockClient.connectionEvents()
        lockClient.start()
        await withGracefulShutdownHandler {
            await withTaskGroup(of: Void.self) { group in
                group.addTask { [self] in await watchLock(signal, events: lockEvents) }
                if let dashboard { group.addTask { await dashboard.run() } }
                if let webhooks { group.addTask { await webhooks.run() } }
                var lock = HubLock(hub: configuration.hub)
                for await holder in signals {
                    if stopping.withLock({ $0 }) { break }
                    let action = lock.observe(holder: holder)
                    shared.withLock { $0.role = lock.role }
                    board.updateHealth { health in
                        health.role =
                            switch lock.role {
                            case .active: "active"
                            case .standby: "standby"
                            case .claiming, .undecided: "starting"
                            }
                    }
                    switch action {
                    case .none: break
                    case .claim: claim()
                    case .activate:
                        // Let a claim made at the same moment by another hub arrive first; then start if still ours.
                        let settle = configuration.live.claimSettleSeconds
                        group.addTask { [self] in
                            try? await Task.sleep(for: .seconds(settle))
                            guard !Task.isCancelled else { return }
                            startSession()
                        }
                    case .stepDown:
                        logger.warning(
                            "another hub claimed the site: standing by",
                            metadata: ["active": "\(holder?.rawValue ?? "")"])
                        await stopSession(reason: nil)
                    }
                    if case .standby(let active) = lock.role, action == .none {
                        logger.info("standing by", metadata: ["active": "\(active)"])
                    }
                }
                // No session may start from here on (a claim may be settling).
                shared.withLock { $0.role = .undecided }
                await stopSession(reason: "shutdown")
                await webhooks?.finish(within: .seconds(5))
                if lock.role == .active || lock.role == .claiming {
                    // Release the site at once, so a standby need not wait for a timeout.
                    try? await lockClient.publish([], to: topics.hubActive, retain: true, timeout: .seconds(3))
                }
                await lockClient.shutdown()
                group.cancelAll()
            }
        } onGracefulShutdown: {
            stopping.withLock { $0 = true }
            signal.yield(nil)
            signal.finish()
        }
        logger.info("hub stopped", metadata: ["hub": "\(configuration.hub)"])
    }

    /// Follows `hub/active`. After each (re)subscription, no retained message within a second means no claim.
    func watchLock(_ signal: AsyncStream<HubID?>.Continuation, events: AsyncStream<MQTTConnectionEvent>) async {
        await withTaskGroup(of: Void.self) { group in
            group.addTask { [self] in
                do {
                    for await message in try await lockClient.subscribe(to: topics.hubActive) {
                        shared.withLock { $0.claimMessages += 1 }
                        if message.payload.isEmpty {
                            signal.yield(nil)
                        } else if let claim = try? ContractCoding.decode(HubClaim.self, from: message.payload) {
                            signal.yield(claim.hub)
                        } else {
                            logger.warning("unreadable claim on hub/active: treating the site as free")
                            signal.yield(nil)
                        }
                    }
                } catch {
                    if (error as? MQTTError)?.code != .shutdown {
                        logger.error("cannot follow hub/active", metadata: ["error": "\(error)"])
                    }
                }
            }
            group.addTask { [self] in
                for await event in events {
                    guard case .connected = event else { continue }
                    let before = shared.withLock { $0.claimMessages }
                    try? await Task.sleep(for: .seconds(1))
                    if shared.withLock({ $0.claimMessages }) == before { signal.yield(nil) }
                }
            }
            await group.waitForAll()
        }
    }

    func claim() {
        do {
            let claim = HubClaim(hub: configuration.hub, t: Date().timeIntervalSince1970)
            try lockClient.send(try ContractCoding.encode(claim), to: topics.hubActive, retain: true)
            logger.info("claiming the site", metadata: ["hub": "\(configuration.hub)"])
        } catch {
            logger.error("cannot publish the claim on hub/active", metadata: ["error": "\(error)"])
        }
    }

    // MARK: The active period

    func startSession() {
        let session: Session
        do {
            session = Session(
                hub: self, client: try makeMainClient(),
                core: HubCore(
                    configuration: configuration, engine: initialEngine, now: Date().timeIntervalSince1970,
                    persistence: configuration.store.map { HubCore.Persistence($0, pseudonyms: pseudonyms) }))
        } catch {
            logger.critical("cannot start ingesting", metadata: ["error": "\(error)"])
            return
        }
        let start = shared.withLock { shared -> Bool in
            // Stepped down while settling, or already running: nothing to start.
            guard shared.role == .active, shared.session == nil else { return false }
            shared.session = session
            return true
        }
        guard start else { return }
        session.task.withLock {
            $0 = Task { await session.run() }
        }
    }

    func stopSession(reason: String?) async {
        guard let session = shared.withLock({ $0.session }) else { return }
        await session.stop(reason: reason)
        // A shared database's writer lock goes with the active period: the hub taking over writes next.
        await store?.stopWriting()
        shared.withLock { $0.session = nil }
    }
}

/// Builds the hub from its configuration: the lock connection, and the main connection (persistent session, fixed
/// client id, `hub/status` last-will) it opens while active.
public func buildHub(
    configuration: HubConfiguration, configFile: String, logger: Logger = Logger(label: "beacontracker.hub")
) throws -> Hub {
    let topics = configuration.mqtt.topics(site: configuration.site)
    let statusWill = MQTTConfiguration.Will(
        topic: topics.hubStatus, payload: try ContractCoding.encode(HubStatus.lastWill(hub: configuration.hub)),
        qos: .atLeastOnce, retain: true)
    let main = try configuration.mqtt.clientConfiguration(
        defaultClientID: "hub-\(configuration.hub)", cleanSession: false, will: statusWill, configFile: configFile)
    var lock = try configuration.mqtt.clientConfiguration(
        defaultClientID: "hub-\(configuration.hub)", cleanSession: true,
        will: MQTTConfiguration.Will(topic: topics.hubActive, payload: [], qos: .atLeastOnce, retain: true),
        configFile: configFile)
    lock.clientID = main.clientID + "-lock"
    lock.keepAlive = configuration.live.lockKeepAliveSeconds
    let engine = try configuration.makeEngine()
    let pseudonyms = try TagPseudonyms.load(configuration.store)
    let store = try configuration.store.map { settings in
        try settings.openForWriting(site: configuration.site.rawValue, logger: logger)
    }
    if store == nil {
        logger.warning("no store: in hub.yaml: no history is kept, and batches are acknowledged once applied")
    }
    let token = try configuration.http?.loadToken()
    let lockClient = try MQTTClient(configuration: lock, logger: logger)
    return Hub(
        configuration: configuration, lockClient: lockClient,
        makeMainClient: { try MQTTClient(configuration: main, logger: logger) },
        initialEngine: engine, store: store, pseudonyms: pseudonyms, token: token, logger: logger)
}
