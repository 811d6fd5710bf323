import BeaconMQTT
import BeaconModel
import BeaconPostgres
import BeaconStore
import BrokerTestSupport
import Foundation
import Simulator
import Testing

/// The hub on a shared PostgreSQL history (`store.backend: postgres`) against a real server and a real mosquitto,
/// with the simulated museum's nine agents: killed mid-ingest, failing over to a standby on the same database, and the
/// database restarted under it. Nothing acknowledged may be lost, no visit duplicated or split.
extension MuseumSuite {
    /// The museum hub's configuration on `database` of `server`, as hub `hub`.
    static func writePostgresMuseumHubConfig(
        in directory: URL, _ broker: MosquittoBroker, _ server: PostgresServer, database: String,
        hub: String = "hub-1", site: String = "museum", venue: String = "\(root.path)/config/venues/museum.yaml",
        live: String = ""
    ) throws -> String {
        let path = directory.appendingPathComponent("\(hub).yaml").path
        try """
        hub: \(hub)
        site: \(site)
        venue: \(venue)
        mqtt: { host: 127.0.0.1, port: \(broker.port), reconnectMinSeconds: 0.1, reconnectMaxSeconds: 0.5 }
        inference: { boundaryLossDB: 8.5 }
        live: { tickSeconds: 0.2, claimSettleSeconds: 0.2\(live.isEmpty ? "" : ", " + live) }
        store:
          backend: postgres
          postgres:
            url: postgres://\(server.user)@127.0.0.1:\(server.port)/\(database)
            passwordFile: \(server.passwordFile.path)
            tls: disable
          rawSightings: true
          commitSeconds: 0.3
        """.write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    static func history(_ server: PostgresServer, _ database: String) throws -> PostgresHistory {
        try PostgresHistory(
            endpoint: PostgresHistory.Endpoint(
                host: server.host, port: server.port, database: database, user: server.user,
                password: server.password, tls: .disable),
            site: "museum", readSites: nil)
    }

}

extension HubFaultTests {
    /// The history once the agents are done: the crash checks, every batch accounted for (committed once, or still in
    /// an outbox), some committed; then the connections closed.
    static func settle(
        _ history: PostgresHistory, acks: MessageCollector, outboxes: String, after moment: String
    ) async throws -> (committed: Int, waiting: Int, sightings: Int) {
        defer { try? history.close() }
        try await check(history, acknowledged: highest(acks.messages), after: moment)
        let counts = try await accountForEveryBatch(outboxes: outboxes, history: history)
        #expect(counts.committed > 0)
        return counts
    }

    /// The enter events before and after `split` (unix seconds), and those of them into a zone where the simulator's
    /// truth did not have the tag at any time in the 20 s before the event (nor in the 2 s after: clocks and batches);
    /// and the enters, between `split` and `until`, of tags the truth had in one zone from 20 s before `split` to
    /// `until`.
    static func enters(
        _ messages: [MQTTMessage], against truthPath: String, splitAt split: Double, until: Double
    ) throws -> (before: (all: Int, false: [String]), after: (all: Int, false: [String]), stoodStill: [String]) {
        let intervals = try String(contentsOfFile: truthPath, encoding: .utf8).split(separator: "\n").compactMap {
            try? JSONDecoder().decode(TruthInterval.self, from: Data($0.utf8))
        }
        var byTag: [TagID: [TruthInterval]] = [:]
        for interval in intervals { byTag[interval.tag, default: []].append(interval) }
        var before = (all: 0, false: [String]())
        var after = (all: 0, false: [String]())
        var stoodStill: [String] = []
        for message in messages where message.topic.hasSuffix("/enter") {
            guard let event = try? ContractCoding.decode(ZoneEvent.self, from: message.payload), let tag = event.tag,
                let zone = event.zone
            else { continue }
            let truth = byTag[tag] ?? []
            let supported = truth.contains { interval in
                interval.zone == zone && interval.enter <= event.t + 2 && interval.exit >= event.t - 20
            }
            let line =
                "\(tag) → \(zone) at \(String(format: "%+.1f", event.t - split)) s (truth: "
                + truth.filter { $0.exit >= event.t - 30 && $0.enter <= event.t + 5 }
                .map { "\($0.zone?.rawValue ?? "none") \(String(format: "%+.1f", $0.enter - split))…" }
                .joined(separator: ", ") + "; \(event.reason))"
            if event.t < split {
                before.all += 1
                if !supported { before.false.append(line) }
                continue
            }
            after.all += 1
            if !supported { after.false.append(line) }
            let still = truth.contains { $0.zone != nil && $0.enter <= split - 20 && $0.exit >= until }
            if event.t <= until && still { stoodStill.append(line) }
        }
        return (before, after, stoodStill)
    }

    @Test func killingTheHubMidIngestWithPostgreSQLLosesNoAcknowledgedSightingAndDuplicatesNoVisit() async throws {
        let server = try await SharedPostgres.server()
        let database = try await server.createDatabase()
        let broker = try MosquittoBroker()
        try await broker.start()
        let config = try Self.writePostgresMuseumHubConfig(in: directory, broker, server, database: database)
        let (_, acks) = try await watch(broker, "beacontracker/museum/gateways/+/ack")
        let (_, statuses) = try await watch(broker, "beacontracker/museum/hub/status")
        let outboxes = directory.appendingPathComponent("outboxes").path
        let kills = max(3, Self.kills / 2)
        let simulatedSeconds = 30 + kills * 4
        let sim = try Self.runMuseum(broker, seconds: simulatedSeconds, outboxes: outboxes)
        let history = try Self.history(server, database)
        var generator = SystemRandomNumberGenerator()
        for kill in 1...kills {
            let onlineBefore = statuses.messages.count
            let hub = try Programs.Running("beacon-hub", ["run", "--config", config])
            let online = await statuses.first(within: .seconds(30)) { _ in statuses.messages.count > onlineBefore }
            #expect(online != nil, "hub never came online: \(hub.text)")
            let acksBefore = acks.messages.count
            _ = await acks.first(within: .seconds(15)) { _ in acks.messages.count > acksBefore }
            try await Task.sleep(for: .milliseconds(Int.random(in: 300...2500, using: &generator)))
            hub.signal(SIGKILL)
            #expect(await hub.waitForExit(timeout: .seconds(10)) != nil)
            try await Self.check(history, acknowledged: Self.highest(acks.messages), after: "kill \(kill)")
        }
        let onlineBefore = statuses.messages.count
        let hub = try Programs.Running("beacon-hub", ["run", "--config", config])
        // Online before it may be stopped: a SIGTERM while it is still building the venue's model ends it unhandled.
        #expect(
            await statuses.first(within: .seconds(60)) { _ in statuses.messages.count > onlineBefore } != nil,
            "the last hub never came online: \(hub.text)")
        #expect(await sim.waitForExit(timeout: .seconds(Double(simulatedSeconds) * 3 + 60)) == 0, "sim: \(sim.text)")
        try await Task.sleep(for: .seconds(2))
        hub.signal(SIGTERM)
        #expect(await hub.waitForExit(timeout: .seconds(60)) == 0, "hub did not stop cleanly: \(hub.text)")
        let (committed, waiting, sightings) = try await Self.settle(
            history, acks: acks, outboxes: outboxes, after: "the end")
        print(
            "PostgreSQL crash safety: \(kills) SIGKILLs mid-ingest; \(committed) batches (\(sightings) sightings) "
                + "committed exactly once, \(waiting) still in outboxes")
    }

    @Test func aStandbyOnTheSameDatabaseTakesOverAndCarriesOnTheOpenVisits() async throws {
        let server = try await SharedPostgres.server()
        let database = try await server.createDatabase()
        let broker = try MosquittoBroker()
        try await broker.start()
        let first = try Self.writePostgresMuseumHubConfig(in: directory, broker, server, database: database)
        let second = try Self.writePostgresMuseumHubConfig(
            in: directory, broker, server, database: database, hub: "hub-2")
        let (_, acks) = try await watch(broker, "beacontracker/museum/gateways/+/ack")
        let (_, statuses) = try await watch(broker, "beacontracker/museum/hub/status")
        let (_, events) = try await watch(broker, "beacontracker/museum/events/#")
        let outboxes = directory.appendingPathComponent("outboxes").path
        let active = try Programs.Running("beacon-hub", ["run", "--config", first])
        #expect(
            await statuses.first(within: .seconds(60)) { $0.text.contains("hub-1") && $0.text.contains("\"online\"") }
                != nil, "hub-1: \(active.text)")
        let standby = try Programs.Running("beacon-hub", ["run", "--config", second])
        // Standing by before the agents start: a hub under load takes a while to build the venue's model.
        let standing = ContinuousClock.now.advanced(by: .seconds(120))
        while !standby.text.contains("standing by"), ContinuousClock.now < standing {
            try await Task.sleep(for: .milliseconds(200))
        }
        #expect(standby.text.contains("standing by"), "hub-2: \(standby.text)")
        let truth = directory.appendingPathComponent("truth.jsonl").path
        let sim = try Self.runMuseum(broker, seconds: 120, outboxes: outboxes, extra: ["--truth", truth])
        let history = try Self.history(server, database)
        // Let the visitors spread through the rooms (they all start at the entrance) and their visits commit.
        try await Task.sleep(for: .seconds(50))
        let deadline = ContinuousClock.now.advanced(by: .seconds(30))
        while try await history.integer("SELECT count(*) FROM open_visits WHERE zone <> 'entrance'") ?? 0 < 12,
            ContinuousClock.now < deadline
        {
            try await Task.sleep(for: .milliseconds(200))
        }

        let openBefore = try await history.integer("SELECT count(*) FROM open_visits") ?? 0
        active.signal(SIGKILL)
        let killedAt = ContinuousClock.now
        let killedAtTime = Date().timeIntervalSince1970
        #expect(await active.waitForExit(timeout: .seconds(10)) != nil)
        let openAtKill = try await history.visits(HubStore.VisitFilter()).filter { $0.exit == nil }
        #expect(
            !openAtKill.isEmpty,
            "open visits before the kill: \(openBefore); hub-1: \(active.text.suffix(3000))")
        let online = await statuses.first(within: .seconds(30)) {
            $0.text.contains("hub-2") && $0.text.contains("\"online\"")
        }
        let takeover = ContinuousClock.now - killedAt
        #expect(online != nil, "hub-2 never came online: \(standby.text)")
        #expect(takeover < .seconds(15), "the broker lock's timeout is 1.5 × 5 s")
        let eventsAtTakeover = events.messages.count
        // hub-2 acknowledges on, through the same ledger.
        let acksBefore = acks.messages.count
        #expect(await acks.first(within: .seconds(20)) { _ in acks.messages.count > acksBefore } != nil)
        #expect(await sim.waitForExit(timeout: .seconds(200)) == 0, "sim: \(sim.text)")
        try await Task.sleep(for: .seconds(2))
        standby.signal(SIGTERM)
        #expect(await standby.waitForExit(timeout: .seconds(60)) == 0, "hub-2 did not stop cleanly: \(standby.text)")

        // The visits open at the kill carried on: each still there under its id, none closed and reopened in the
        // same zone (which a takeover that forgot the tags would do), and hub-2 announced no second enter of them.
        let after = try await history.visits(HubStore.VisitFilter())
        for visit in openAtKill {
            #expect(after.contains { $0.id == visit.id && $0.enter == visit.enter }, "visit \(visit.id) lost")
        }
        let split = try await history.integer(
            "SELECT count(*) FROM transitions WHERE from_zone = to_zone AND transit < 1")
        #expect(split == 0, "a visit was split into two of the same zone")
        // A second enter is one without an exit of the tag before it (a visitor may leave and come back).
        var left: Set<String> = []
        var reentered: [String] = []
        for message in events.messages.dropFirst(eventsAtTakeover) {
            guard let event = try? ContractCoding.decode(ZoneEvent.self, from: message.payload),
                let tag = event.tag?.rawValue
            else { continue }
            if message.topic.hasSuffix("/exit") { left.insert(tag) }
            if message.topic.hasSuffix("/enter"), !left.contains(tag),
                openAtKill.contains(where: { $0.tag == tag && $0.zone == event.zone?.rawValue })
            {
                reentered.append(message.text)
            }
        }
        #expect(reentered.isEmpty, "hub-2 re-entered tags already inside: \(reentered)")
        // No tag that stood still moved: a tag the simulator had in one zone from 20 s before the kill until 8 s after
        // hub-2 went online gets no enter in that time (the standby deciding on partial input moved such tags into
        // the next room within 2–6 s of the kill here, 3–12 s in the runs that found it). Every enter into a zone the truth did not have the tag in,
        // then or shortly before, is printed: after that window the engine errs as it does without a takeover (the
        // same run without the kill moves visitor-013 from the cafe, where it stands, to the nature room 57 s after
        // the kill time; after a takeover that comes at 12–15 s: a belief started from the previous hub's estimate is
        // not the one that followed the tag in).
        let onlineAfter = Double(takeover.components.seconds) + Double(takeover.components.attoseconds) / 1e18
        let judgedUntil = killedAtTime + onlineAfter + 8
        let (entersBefore, entersAfter, stoodStill) = try Self.enters(
            events.messages, against: truth, splitAt: killedAtTime, until: judgedUntil)
        #expect(stoodStill.isEmpty, "hub-2 moved tags that stood still: \(stoodStill)")
        print(
            "PostgreSQL failover: enters where the tag was not, before the kill \(entersBefore.false.count) of "
                + "\(entersBefore.all) (\(entersBefore.false)), after it \(entersAfter.false.count) of "
                + "\(entersAfter.all) (\(entersAfter.false))")
        let (committed, waiting, _) = try await Self.settle(
            history, acks: acks, outboxes: outboxes, after: "the takeover")
        print(
            "PostgreSQL failover: hub-2 online \(takeover) after SIGKILL of hub-1; \(openAtKill.count) visits open at "
                + "the kill carried on; \(committed) batches committed exactly once, \(waiting) waiting")
    }

    @Test func aPostgreSQLRestartMidIngestStopsAcknowledgementsRaisesStoreErrorAndLosesNothing() async throws {
        let server = try await PostgresServer()
        try await server.start()
        let database = try await server.createDatabase()
        let broker = try MosquittoBroker()
        try await broker.start()
        let config = try Self.writePostgresMuseumHubConfig(in: directory, broker, server, database: database)
        let (_, acks) = try await watch(broker, "beacontracker/museum/gateways/+/ack")
        let (_, statuses) = try await watch(broker, "beacontracker/museum/hub/status")
        let (_, alerts) = try await watch(broker, "beacontracker/museum/events/alert")
        let outboxes = directory.appendingPathComponent("outboxes").path
        let sim = try Self.runMuseum(broker, seconds: 40, outboxes: outboxes)
        let hub = try Programs.Running("beacon-hub", ["run", "--config", config])
        #expect(
            await statuses.first(within: .seconds(30)) { $0.text.contains("\"online\"") } != nil, "\(hub.text)")
        let acksBefore = acks.messages.count
        #expect(await acks.first(within: .seconds(20)) { _ in acks.messages.count > acksBefore } != nil)

        await server.kill()
        let storeError = await alerts.first(within: .seconds(30)) { $0.text.contains("store-error") }
        #expect(storeError != nil, "no store-error: \(hub.text)")
        // While the database is down no acknowledgement moves (a commit in flight at the kill may still land;
        // resent batches already acknowledged are acknowledged again, at the same sequence).
        @Sendable func acknowledged() -> Int {
            Self.highest(acks.messages).values.flatMap(\.values).reduce(0) { $0 + Int($1) }
        }
        try await Task.sleep(for: .seconds(1))
        let whileDown = acknowledged()
        try await Task.sleep(for: .seconds(3))
        #expect(acknowledged() == whileDown, "acknowledged while the database was down")

        try await server.start()
        let recovered = await alerts.first(within: .seconds(60)) { $0.text.contains("store-recovered") }
        #expect(recovered != nil, "no store-recovered: \(hub.text)")
        #expect(await acks.first(within: .seconds(20)) { _ in acknowledged() > whileDown } != nil)
        #expect(await sim.waitForExit(timeout: .seconds(200)) == 0, "sim: \(sim.text)")
        try await Task.sleep(for: .seconds(3))
        hub.signal(SIGTERM)
        #expect(await hub.waitForExit(timeout: .seconds(60)) == 0, "hub did not stop cleanly: \(hub.text)")
        let (committed, waiting, _) = try await Self.settle(
            try Self.history(server, database), acks: acks, outboxes: outboxes, after: "the restart")
        print("PostgreSQL restart mid-ingest: \(committed) batches committed exactly once, \(waiting) waiting")
        await server.stop()
    }
}
