import BLEScanner
import BeaconConfig
import BeaconDecoding
import BeaconMQTT
import BeaconModel
import BeaconStore
import Foundation
import Logging
import ServiceLifecycle
import Synchronization

/// The gateway agent as a service: advertising reports → decode and region filter → batches stored in the durable
/// outbox → published → deleted when the hub acknowledges them. Keeps its retained status (online, with an offline
/// last-will) and a heartbeat with uptime, adverts/s, outbox depth and drops.
public final class Agent: Service, Sendable {
    public let configuration: AgentConfiguration
    public let topics: Topics
    /// Made anew at each start; names this run's batches in the contract.
    public let boot: String
    let client: MQTTClient
    let outbox: Outbox
    let publisher: OutboxPublisher
    let intake: SightingIntake
    let source: AdvertisementSource
    /// With a capture source: stop once it is replayed and the outbox is empty (or this long after its end).
    let stopWhenDrained: Duration?
    let logger: Logger
    let started = Date().timeIntervalSince1970
    /// The BLE source's state for the heartbeat: `scanning`, `replay`, `none`, or the adapter's error code.
    let adapterState: Mutex<String>
    /// The live scanner, when the source is `.scanner`.
    let scanner: HCIScanner?
    /// The gateway's own beacon for the heartbeat, when it has one.
    let selfBeacon: Mutex<GatewayStatus.SelfBeacon?>

    init(
        configuration: AgentConfiguration, client: MQTTClient, outbox: Outbox, boot: String,
        source: AdvertisementSource, stopWhenDrained: Duration?, logger: Logger
    ) {
        self.configuration = configuration
        self.topics = configuration.mqtt.topics(site: configuration.site)
        self.client = client
        self.outbox = outbox
        self.boot = boot
        self.source = source
        self.stopWhenDrained = stopWhenDrained
        self.logger = logger
        switch source {
        case .none: adapterState = Mutex("none")
        case .scanner: adapterState = Mutex("starting")
        case .capture: adapterState = Mutex("replay")
        case .stream: adapterState = Mutex("simulated")
        }
        publisher = OutboxPublisher(
            gateway: configuration.gateway, boot: boot, topics: topics, client: client, outbox: outbox,
            settings: configuration.outbox, logger: logger)
        selfBeacon = Mutex(
            configuration.selfBeacon.map { settings in
                let state =
                    switch source {
                    case .scanner: "starting"
                    // The simulator puts the gateway's beacon on its simulated air.
                    case .stream: "simulated"
                    case .none, .capture: "off"
                    }
                return GatewayStatus.SelfBeacon(
                    beacon: settings.beacon, state: state,
                    measuredPower: settings.measuredPower, intervalMs: settings.intervalMs)
            })
        let intake = SightingIntake(regions: configuration.regions, batch: configuration.batch)
        self.intake = intake
        if case .scanner = source {
            let settings = configuration.scanner
            scanner = HCIScanner(
                settings: HCIScanner.Settings(
                    adapter: settings.adapter, active: settings.active, intervalMilliseconds: settings.intervalMs,
                    windowMilliseconds: settings.windowMs,
                    restartAfterSilence: .milliseconds(Int(settings.restartAfterSilenceSeconds * 1000)),
                    readPause: .microseconds(Int(settings.sliceMs * 1000)),
                    advertising: configuration.selfBeacon?.advertising),
                // Each slice goes into the pipeline on the reader's own thread: one wake-up per slice.
                onEvents: { events in intake.ingest(events, now: Date().timeIntervalSince1970) })
        } else {
            scanner = nil
        }
    }

    public func run() async throws {
        try await outbox.startBoot(boot, at: Date().timeIntervalSince1970)
        let events = client.connectionEvents()
        client.start()
        let (stop, stopNow) = AsyncStream<Void>.makeStream()
        // Not in the group: cancelling the group at shutdown must not cut a store short. It ends after `finish()`,
        // once every closed batch is in the outbox.
        let storing = Task { [self] in await storeClosedBatches() }
        // Also outside, so that shutdown can wait for it to stop delivering before the intake is finished.
        let reading = Task { [self] in await runSource() }
        await withTaskGroup(of: Void.self) { group in
            group.addTask { [self] in
                for await event in events where event.isConnected {
                    await publisher.connectionRestored()
                    await publishStatus(.online)
                }
            }
            group.addTask { [self] in
                do {
                    for await message in try await client.subscribe(to: topics.acknowledgement(configuration.gateway)) {
                        await publisher.receive(message)
                    }
                } catch {
                    if (error as? MQTTError)?.code != .shutdown {
                        logger.error("cannot subscribe to acknowledgements", metadata: ["error": "\(error)"])
                    }
                }
            }
            group.addTask { [self] in
                // A cancelled sleep ends the loop: one more pass would publish "online" after the final "offline".
                while (try? await Task.sleep(for: .seconds(configuration.heartbeatSeconds))) != nil {
                    if client.isConnected { await publishStatus(.online) }
                }
            }
            group.addTask { [self] in
                while (try? await Task.sleep(for: .seconds(1))) != nil {
                    await publisher.resendPass(interval: 1)
                }
            }
            group.addTask { [self] in
                // Closes a batch that falls due while no advertisement arrives to close it (each slice closes a due
                // batch itself): sleeps until the open batch's deadline, or until a batch opens. Nothing wakes the
                // agent while no batch is open.
                while !Task.isCancelled {
                    guard let deadline = intake.deadline else {
                        await intake.batchOpened.wait()
                        continue
                    }
                    let wait = max(0.001, deadline - Date().timeIntervalSince1970)
                    guard (try? await Task.sleep(for: .microseconds(Int(wait * 1_000_000)))) != nil else { break }
                    intake.tick(now: Date().timeIntervalSince1970)
                }
            }
            group.addTask { [self] in
                await reading.value
                if let stopWhenDrained {
                    await waitUntilDrained(timeout: stopWhenDrained)
                    stopNow.yield()
                }
            }
            await withGracefulShutdownHandler {
                for await _ in stop { break }
            } onGracefulShutdown: {
                stopNow.yield()
            }
            // Stop scanning (the controller is told to stop), keep what was scanned, say goodbye, disconnect.
            await scanner?.stop()
            reading.cancel()
            await reading.value
            group.cancelAll()
            intake.finish()
            await storing.value
            if client.isConnected {
                await publisher.resendPass(interval: 1)
                // The hub does not take a batch that arrives after the goodbye for a sign of life, but the goodbye
                // going last keeps the gateway's history in order.
                await publisher.settle(timeout: .seconds(2))
                await publishStatus(.offline, reason: GatewayStatus.shutdownReason)
            }
            await client.shutdown()
        }
        try? outbox.close()
        logger.info("agent stopped", metadata: ["gateway": "\(configuration.gateway)"])
    }

    /// Stores the batches the intake closes, in order, until the intake is finished and nothing waits.
    private func storeClosedBatches() async {
        while true {
            let (batches, finished) = intake.takeWaiting()
            for batch in batches {
                await publisher.store(batch, clockSynced: SystemClock.isSynchronized())
                intake.stored(1)
            }
            if batches.isEmpty {
                if finished { return }
                await intake.batchReady.wait()
            }
        }
    }

    private func runSource() async {
        if case .scanner = source {
            await runScanner()
            return
        }
        if case .stream(let reports) = source {
            for await timed in reports {
                intake.ingest([timed], now: Date().timeIntervalSince1970)
            }
            return
        }
        guard case .capture(let path, let speed, let keepTimes) = source else { return }
        do {
            let capture = try AdvertisementSource.openCapture(path)
            let slice = Duration.microseconds(Int(configuration.scanner.sliceMs * 1000))
            let intake = self.intake
            try await AdvertisementSource.replay(capture, speed: speed, keepTimes: keepTimes, slice: slice) { slice in
                intake.ingest(slice, now: Date().timeIntervalSince1970)
            }
        } catch {
            intake.flush()
            logger.error("cannot replay capture", metadata: ["error": "\(error)"])
            return
        }
        intake.flush()
        let malformed = intake.malformedEvents
        logger.info("capture replayed", metadata: ["path": "\(path)", "malformedEvents": "\(malformed)"])
    }

    /// Live scanning until cancelled; adapter problems are logged once per change and reported in the heartbeat.
    private func runScanner() async {
        guard let scanner else { return }
        let settings = configuration.scanner
        scanner.start()
        // Ends when `stop()` (at shutdown) finishes the scanner's events.
        for await event in scanner.events {
            switch event {
            case .events(let events):
                // Only without `onEvents`, which the agent always sets.
                intake.ingest(events, now: Date().timeIntervalSince1970)
            case .scanning:
                adapterState.withLock { $0 = "scanning" }
                logger.info("scanning", metadata: ["adapter": "\(settings.adapter)"])
            case .restarted:
                logger.notice(
                    "scanning switched on again after silence", metadata: ["adapter": "\(settings.adapter)"])
            case .advertising(let state):
                noteAdvertising(state)
            case .unavailable(let error):
                let changed = adapterState.withLock { state in
                    defer { state = error.code.rawValue }
                    return state != error.code.rawValue
                }
                if changed { logger.error("BLE adapter unavailable; retrying", metadata: ["error": "\(error)"]) }
            }
        }
    }

    /// Records the own beacon's state for the heartbeat; logs it when it changes.
    private func noteAdvertising(_ state: HCIScanner.AdvertisingState) {
        let (changed, beacon) = selfBeacon.withLock { beacon -> (Bool, String) in
            guard var updated = beacon else { return (false, "") }
            switch state {
            case .on(let mode, let txPower):
                updated.state = "advertising"
                updated.mode = mode.rawValue
                updated.txPower = txPower
                updated.error = nil
            case .failed(let reason):
                updated.state = "failed"
                updated.mode = nil
                updated.txPower = nil
                updated.error = reason
            }
            let changed = updated != beacon
            beacon = updated
            return (changed, updated.beacon)
        }
        guard changed else { return }
        switch state {
        case .on(let mode, let txPower):
            logger.info(
                "advertising the gateway's beacon",
                metadata: [
                    "beacon": "\(beacon)", "mode": "\(mode.rawValue)", "txPower": "\(txPower.map(String.init) ?? "-")",
                ])
        case .failed(let reason):
            logger.error(
                "the controller will not advertise the gateway's beacon; scanning goes on",
                metadata: ["beacon": "\(beacon)", "error": "\(reason)"])
        }
    }

    private func waitUntilDrained(timeout: Duration) async {
        let deadline = ContinuousClock.now.advanced(by: timeout)
        while ContinuousClock.now < deadline && !Task.isCancelled {
            if intake.unstoredBatches == 0, let depth = try? await outbox.depth(), depth.batches == 0 { return }
            try? await Task.sleep(for: .milliseconds(100))
        }
        logger.warning("outbox not drained before the replay's drain timeout")
    }

    func publishStatus(_ state: GatewayStatus.State, reason: String? = nil) async {
        let now = Date().timeIntervalSince1970
        let depth = try? await outbox.depth()
        let resendFrom = try? await outbox.resendFrom(current: boot)
        let dropped = (try? await outbox.droppedTotal()) ?? 0
        let (reports, seconds, counters, droppedBacklog) = intake.takeStatistics(now: now)
        let malformedEvents = intake.malformedEvents
        var status = GatewayStatus(
            gateway: configuration.gateway, state: state, boot: boot, t: now,
            agentVersion: BeaconTrackerVersion.current, clockSynced: SystemClock.isSynchronized(),
            outbox: depth.map {
                var held = GatewayStatus.Outbox(pendingBatches: $0.batches, pendingBytes: $0.bytes, oldest: $0.oldest)
                held.resendFrom = resendFrom
                return held
            },
            heartbeatSeconds: configuration.heartbeatSeconds, reason: reason)
        status.uptimeSeconds = (now - started).rounded()
        status.advertsPerSecond = (Double(reports) / max(seconds, 0.001) * 10).rounded() / 10
        status.dropped = [
            "outbox-overflow": dropped, "malformed": counters.malformed + malformedEvents,
            "outside-regions": counters.outsideRegions, "store-backlog": droppedBacklog,
        ]
        status.adapter = adapterState.withLock { $0 }
        status.selfBeacon = selfBeacon.withLock { $0 }
        do {
            let payload = try ContractCoding.encode(status)
            // Bounded: a status is stale by the next heartbeat, and the final one must not hold up shutdown.
            try await client.publish(
                payload, to: topics.gatewayStatus(configuration.gateway), retain: true, timeout: .seconds(5))
        } catch let error as MQTTError where error.code == .cancelled {
            _ = error
            // Shutting down: the final status is published separately.
        } catch {
            logger.warning("cannot publish gateway status", metadata: ["error": "\(error)"])
        }
    }
}

extension MQTTConnectionEvent {
    var isConnected: Bool {
        if case .connected = self { return true }
        return false
    }
}

/// Builds the agent from its configuration: the outbox, the MQTT client with the gateway's last-will, the service.
public func buildAgent(
    configuration: AgentConfiguration, configFile: String, source: AdvertisementSource = .none,
    stopWhenDrained: Duration? = nil, logger: Logger = Logger(label: "beacontracker.agent")
) throws -> Agent {
    let boot = UUID().uuidString.lowercased()
    let topics = configuration.mqtt.topics(site: configuration.site)
    let will = MQTTConfiguration.Will(
        topic: topics.gatewayStatus(configuration.gateway),
        payload: try ContractCoding.encode(GatewayStatus.lastWill(gateway: configuration.gateway, boot: boot)),
        qos: .atLeastOnce, retain: true)
    let mqtt = try configuration.mqtt.clientConfiguration(
        defaultClientID: "agent-\(configuration.gateway)", cleanSession: true, will: will, configFile: configFile)
    let outbox: Outbox
    do {
        outbox = try Outbox(path: configuration.outbox.path)
    } catch {
        throw ConfigError(.invalidValue, file: configFile, key: "outbox.path", error.message)
    }
    let client = try MQTTClient(configuration: mqtt, logger: logger)
    return Agent(
        configuration: configuration, client: client, outbox: outbox, boot: boot, source: source,
        stopWhenDrained: stopWhenDrained, logger: logger)
}
