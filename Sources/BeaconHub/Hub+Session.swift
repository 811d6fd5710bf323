import BeaconMQTT
import BeaconModel
import BeaconStore
import Dashboard
import Foundation
import Logging
import Synchronization

extension Hub {
    /// One active period: the main connection, the core, and the tasks feeding it. Ends when the hub steps down or
    /// stops.
    final class Session: Sendable {
        unowned let hub: Hub
        let client: MQTTClient
        /// The core has one owner at a time: whoever holds this lock (message tasks and the ticker, briefly each).
        let core: Mutex<HubCore>
        let task = Mutex<Task<Void, Never>?>(nil)
        /// A journal whose commit failed, tried again (with what came since) by the next commit.
        let failedJournal = Mutex<HubJournal?>(nil)
        /// Home Assistant's discovery configs; taken while the core is locked, in `send`.
        let discovery: Mutex<HomeAssistantDiscovery>

        init(hub: Hub, client: MQTTClient, core: HubCore) {
            self.hub = hub
            self.client = client
            self.core = Mutex(core)
            discovery = Mutex(HomeAssistantDiscovery(configuration: hub.configuration))
        }

        var logger: Logger { hub.logger }
        var topics: Topics { hub.topics }

        func run() async {
            let events = client.connectionEvents()
            // Carry on from the database first (committed acknowledgements, open visits): nothing is ingested yet.
            if let store = hub.store {
                do {
                    let recovered = try await recover(store)
                    core.withLock { $0.recover(recovered, at: Date().timeIntervalSince1970) }
                    logger.info(
                        "carrying on from the database",
                        metadata: [
                            "boots": "\(recovered.acks.count)", "tagsInZones": "\(recovered.liveTags.count)",
                            "unacknowledgedBatches": "\(recovered.committedBeyondAck.count)",
                        ])
                } catch {
                    logger.error("cannot read the database back: starting without it", metadata: ["error": "\(error)"])
                }
            }
            // The calibration version in force (the calibration page's), before anything is ingested.
            await hub.calibrationDesk?.restore(into: self)
            // Registered before the connection starts: the batches the broker kept for this persistent session
            // arrive right after the CONNACK and must find their subscription (else they wait for the agents'
            // resend). They wait in the subscription's buffer until the retained state is read.
            var filters = [topics.allSightings, topics.allGatewayStatus]
            filters += hub.foreign?.subscriptionFilters ?? []
            var subscriptions: [MQTTSubscription] = []
            for filter in filters {
                do throws(MQTTError) {
                    subscriptions.append(try client.register(filter))
                } catch {
                    logger.error("cannot subscribe", metadata: ["filter": "\(filter)", "error": "\(error)"])
                    return
                }
            }
            let began = Date().timeIntervalSince1970
            client.start()
            logger.info("active: ingesting", metadata: ["hub": "\(hub.configuration.hub)"])
            await withTaskGroup(of: Void.self) { group in
                // Then from the retained state: acknowledgements (so later batches are acknowledged at once) and tag
                // states (so tags still in their zone get no second enter). Then ingest.
                await restore()
                core.withLock { core in
                    // The engine decides once every running gateway has delivered the present (or after
                    // live.catchUpSeconds).
                    core.catchUp(from: began, at: Date().timeIntervalSince1970)
                    core.startPublishing()
                }
                // Each subscription's reader decodes; one task applies, in order, beside them (InputQueue).
                let inputs = InputQueue<(HubInput, Double)>(capacity: 64)
                group.addTask { [self, subscriptions] in
                    await withTaskGroup(of: Void.self) { readers in
                        for subscription in subscriptions {
                            readers.addTask { [self] in
                                for await message in subscription { await inputs.send(decode(message)) }
                            }
                        }
                    }
                    inputs.finish()
                }
                group.addTask { [self] in
                    while let (input, now) = await inputs.next() { apply(input, at: now) }
                }
                for (filter, subscription) in zip(filters, subscriptions) {
                    // Granted (SUBACK) before "online" is said, so that "online" means ingesting.
                    do throws(MQTTError) {
                        try await client.granted(subscription)
                    } catch {
                        if error.code != .shutdown {
                            logger.error("cannot subscribe", metadata: ["filter": "\(filter)", "error": "\(error)"])
                        }
                        return
                    }
                }
                await publishStatus(.online)
                announceDiscovery()
                group.addTask { [self] in
                    var first = true
                    for await event in events {
                        guard case .connected = event else { continue }
                        // The first is the connect this period began with: "online" was said above.
                        if first {
                            first = false
                            continue
                        }
                        // A reconnect: the broker may have lost our retained messages (or we missed its acks).
                        await publishStatus(.online)
                        announceDiscovery()
                        core.withLock { $0.republishAll() }
                    }
                }
                group.addTask { [self] in await tick() }
                group.addTask { [self] in await report() }
                if hub.store != nil { group.addTask { [self] in await persist() } }
                await group.waitForAll()
            }
        }

        /// The database's acknowledgements and live tags. A shared database may still be locked by the hub this one
        /// takes over from (its connection not yet seen gone), or be unreachable for a moment: without what it
        /// says, the open visits would be split, so it is asked again for up to `live.recoverSeconds`.
        func recover(_ store: any HistoryStore) async throws -> HubStore.Recovered {
            let deadline = ContinuousClock.now.advanced(by: .seconds(hub.configuration.live.recoverSeconds))
            while true {
                do {
                    return try await store.recover()
                } catch let error as StoreError where error.code == .locked || error.code == .io {
                    guard ContinuousClock.now < deadline, !Task.isCancelled else { throw error }
                    logger.warning("cannot read the database back yet: retrying", metadata: ["error": "\(error)"])
                    try await Task.sleep(for: .seconds(1))
                }
            }
        }

        /// Reads the retained acknowledgements and tag states for a moment, then leaves those topics.
        func restore() async {
            await withTaskGroup(of: Void.self) { group in
                for filter in [
                    "\(topics.root)/\(topics.site.rawValue)/gateways/+/ack",
                    "\(topics.root)/\(topics.site.rawValue)/tags/+/state",
                ] {
                    group.addTask { [self] in
                        guard let subscription = try? await client.subscribe(to: filter) else { return }
                        let reader = Task {
                            for await message in subscription { receive(message) }
                        }
                        // The broker sends retained messages right after the SUBACK.
                        try? await Task.sleep(for: .seconds(1))
                        reader.cancel()
                    }
                }
            }
        }

        func receive(_ message: MQTTMessage) {
            let (input, now) = decode(message)
            apply(input, at: now)
        }

        /// Decodes a message, off the core's lock, with its time of arrival.
        func decode(_ message: MQTTMessage) -> (HubInput, Double) {
            let now = Date().timeIntervalSince1970
            let input = HubInput.decode(message, topics: topics, foreign: hub.foreign, receivedAt: now)
            if case .rejected(let code, let why, let gateway) = input {
                logger.debug(
                    "rejected message",
                    metadata: [
                        "topic": "\(message.topic)", "code": "\(code)", "error": "\(why)",
                        "gateway": "\(gateway?.rawValue ?? "")",
                    ])
            }
            return (input, now)
        }

        func apply(_ input: HubInput, at now: Double) {
            let started = ContinuousClock.now
            core.withLock { core in
                core.apply(input, at: now)
                send(core.takeOutgoing())
            }
            if case .batch(let batch) = input {
                let elapsed = (ContinuousClock.now - started).components
                hub.metrics.received(
                    gateway: batch.gateway, sightings: batch.sightings.count,
                    appliedIn: elapsed.seconds * 1_000_000_000 + elapsed.attoseconds / 1_000_000_000)
            }
        }

        func tick() async {
            let interval = hub.configuration.live.tickSeconds
            var lastStatus = Date().timeIntervalSince1970
            while !Task.isCancelled {
                try? await Task.sleep(for: .seconds(interval))
                let connected = client.isConnected
                let now = Date().timeIntervalSince1970
                let (counters, gateways, linkAlerts, tracked) = core.withLock { core in
                    core.tick(at: now, connected: connected)
                    send(core.takeOutgoing())
                    return (core.counters, core.gateways, core.links.alertsInForce, core.published.count)
                }
                show(
                    counters: counters, gateways: gateways, linkAlerts: linkAlerts, trackedTags: tracked,
                    connected: connected)
                if connected && now - lastStatus >= hub.configuration.live.statusSeconds {
                    lastStatus = now
                    let status = status(.online, at: now)
                    if let payload = try? ContractCoding.encode(status) {
                        send([
                            HubCore.Outgoing(
                                topic: topics.hubStatus, payload: payload, retain: true, value: .hubStatus(status))
                        ])
                    }
                }
            }
        }

        /// Commits the journal every `store.commitSeconds`, and prunes raw sightings and battery readings past their
        /// retention.
        func persist() async {
            guard let settings = hub.configuration.store else { return }
            var lastPrune = -Double.infinity
            var lastBatteryPrune = -Double.infinity
            while !Task.isCancelled {
                try? await Task.sleep(for: .seconds(settings.commitSeconds))
                await commitOnce()
                let now = Date().timeIntervalSince1970
                if now - lastBatteryPrune >= 3600, let store = hub.store {
                    lastBatteryPrune = now
                    let cutoff = now - settings.batteryRetentionDays * 86_400
                    let pruned = await Task { try await store.pruneBatteryReadings(before: cutoff) }.result
                    if case .success(let count) = pruned, count > 0 {
                        logger.debug("battery readings past retention deleted", metadata: ["rows": "\(count)"])
                    }
                }
                if settings.rawSightings, now - lastPrune >= 60, let store = hub.store {
                    lastPrune = now
                    let cutoff = now - settings.rawRetentionHours * 3600
                    // Not a child task: a cancelled session must not abandon a write half-way through GRDB's queue.
                    let pruned = await Task { try await store.pruneSightings(before: cutoff) }.result
                    if case .success(let count) = pruned, count > 0 {
                        logger.debug("raw sightings past retention deleted", metadata: ["rows": "\(count)"])
                    }
                }
            }
        }

        /// One commit of everything journalled (and of a failed commit's journal before it). Acknowledgements for
        /// the batches it holds are published only after it succeeds. Serial: called by `persist` and, once that has
        /// ended, by `stop`.
        func commitOnce() async {
            guard let store = hub.store else { return }
            var journal = failedJournal.withLock { $0.take() } ?? HubJournal()
            journal.append(core.withLock { $0.takeJournal() })
            guard !journal.isEmpty else { return }
            let now = Date().timeIntervalSince1970
            // An unstructured task: the write runs to its end even when the session is being cancelled.
            let started = ContinuousClock.now
            let outcome = await Task { [journal] in try await store.commit(journal, at: now) }.result
            let elapsed = (ContinuousClock.now - started).components
            hub.metrics.committed(inNanoseconds: elapsed.seconds * 1_000_000_000 + elapsed.attoseconds / 1_000_000_000)
            switch outcome {
            case .success(let result):
                if result.duplicateBatches > 0 {
                    logger.warning("batches committed twice", metadata: ["batches": "\(result.duplicateBatches)"])
                }
                let connected = client.isConnected
                core.withLock { core in
                    core.committed(result, batches: journal.batches.count, at: Date().timeIntervalSince1970)
                    if connected { core.publishAcknowledgements(at: Date().timeIntervalSince1970) }
                    send(core.takeOutgoing())
                }
            case .failure(let error):
                failedJournal.withLock { $0 = journal }
                let storeError = error as? StoreError ?? StoreError(.io, "\(error)")
                logger.error("cannot commit", metadata: ["error": "\(storeError)", "rows": "\(journal.rowCount)"])
                core.withLock { core in
                    core.commitFailed(storeError, at: Date().timeIntervalSince1970)
                    send(core.takeOutgoing())
                }
            }
        }

        func status(_ state: HubStatus.State, at now: Double, reason: String? = nil) -> HubStatus {
            var status = HubStatus(
                hub: hub.configuration.hub, state: state, t: now, hubVersion: BeaconTrackerVersion.current,
                reason: reason)
            core.withLock { core in
                status.ingest = core.counters
                status.links = core.links.statusSummary(applied: core.engine.settings.linkFitSeconds > 0)
            }
            return status
        }

        /// A line of counters every minute, for the journal.
        func report() async {
            while !Task.isCancelled {
                try? await Task.sleep(for: .seconds(60))
                guard !Task.isCancelled else { return }
                let counters = core.withLock { $0.counters }
                logger.info(
                    "ingest",
                    metadata: [
                        "batches": "\(counters.batches)", "sightings": "\(counters.sightings)",
                        "duplicates": "\(counters.duplicates)", "rejected": "\(counters.rejected)",
                        "events": "\(counters.events)", "dropped": "\(client.droppedMessages)",
                        "commits": "\(counters.store?.commits ?? 0)",
                        "commitFailures": "\(counters.store?.failures ?? 0)",
                        "uncommittedBatches": "\(counters.store?.backlogBatches ?? 0)",
                    ])
            }
        }

        /// The dashboard's health and gateways, and the metrics' counters, after each tick.
        func show(
            counters: HubStatus.Ingest, gateways: [GatewayID: HubCore.GatewayHealth],
            linkAlerts: [GatewayID: GatewayLinks.LinkAlert], trackedTags: Int, connected: Bool
        ) {
            hub.metrics.sync(
                counters, trackedTags: trackedTags, connected: connected, droppedMessages: client.droppedMessages)
            if let webhooks = hub.webhooks { hub.metrics.sync(webhooks: webhooks.counts) }
            hub.board.setGateways(
                gateways.map { id, health in
                    LiveBoard.GatewayHealth(
                        gateway: id, online: health.online, monitored: health.monitored,
                        lastContact: health.lastContact > 0 ? health.lastContact : nil, boot: health.boot,
                        linkAlert: linkAlerts[id].map(LiveBoard.LinkAlert.init)
                    )
                })
            hub.board.updateHealth { health in
                health.mqttConnected = connected
                // A journal waiting for its retry: the last commit failed.
                health.storeWritable = hub.store == nil ? nil : failedJournal.withLock { $0 == nil }
                health.uncommittedBatches = counters.store?.backlogBatches ?? 0
            }
        }

        /// Hands messages to libmosquitto in order; called with the core locked, so order across tasks holds. The
        /// dashboard's board sees each, in the same order.
        func send(_ messages: [HubCore.Outgoing]) {
            // Discovery configs of tags first seen here go out before their state; events are queued for webhooks.
            let configs = discovery.withLock { $0.configs(for: messages) }
            let messages = configs.isEmpty ? messages : configs + messages
            hub.webhooks?.enqueue(messages)
            for message in messages {
                if let value = message.value {
                    hub.board.observe(value, payload: message.payload)
                } else {
                    hub.board.observe(topic: message.topic, payload: message.payload)
                }
                if case .event(let alert) = message.value, alert.type == .alert {
                    logger.info(
                        "alert",
                        metadata: [
                            "code": "\(alert.code ?? "")", "gateway": "\(alert.gateway?.rawValue ?? "")",
                            "reason": "\(alert.reason)",
                        ])
                }
                do {
                    try client.send(message.payload, to: message.topic, retain: message.retain)
                } catch {
                    logger.warning("cannot publish", metadata: ["topic": "\(message.topic)", "error": "\(error)"])
                }
            }
        }

        func publishStatus(_ state: HubStatus.State, reason: String? = nil) async {
            let status = status(state, at: Date().timeIntervalSince1970, reason: reason)
            // The dashboard sees every status the hub says, not only the periodic ones that go through `send`.
            guard let payload = try? ContractCoding.encode(status) else { return }
            hub.board.observe(.hubStatus(status), payload: payload)
            do {
                // Bounded: the final status must not hold up shutdown when the broker is already gone.
                try await client.publish(payload, to: topics.hubStatus, retain: true, timeout: .seconds(5))
            } catch {
                logger.warning("cannot publish hub status", metadata: ["error": "\(error)"])
            }
        }

        /// Ends the period: the subscriptions are dropped (so the persistent session stops queueing for a hub that
        /// no longer ingests), the last acknowledgements and state go out, then the connection closes cleanly.
        func stop(reason: String?) async {
            let running = task.withLock { $0 }
            running?.cancel()
            await running?.value
            // The last decisions and their commit (with every tag's health as it is now), then the acknowledgements
            // it allows.
            core.withLock { core in
                let now = Date().timeIntervalSince1970
                core.tick(at: now, connected: client.isConnected)
                core.journalAllHealth(at: now)
                send(core.takeOutgoing())
            }
            await commitOnce()
            if client.isConnected {
                core.withLock { core in
                    core.tick(at: Date().timeIntervalSince1970, connected: true)
                    send(core.takeOutgoing())
                }
                if let reason { await publishStatus(.offline, reason: reason) }
            }
            await client.shutdown()
            logger.info("ingest stopped", metadata: ["hub": "\(hub.configuration.hub)"])
        }
    }
}
