import BeaconMQTT
import BeaconModel
import BeaconPostgres
import BeaconStore
import BrokerTestSupport
import Foundation
import Testing

/// Crash safety of the hub's database: the simulated museum's nine real agents publish through a real mosquitto
/// while the hub is killed with SIGKILL again and again mid-ingest. After every kill the database must be sound, hold
/// every batch an acknowledgement covered (with its sightings), and no visit twice; at the end, every batch the agents
/// made is either committed exactly once or still in their outboxes.
extension HubFaultTests {
    /// `BEACONTRACKER_CRASH_KILLS` raises it for a longer round (the fault tests).
    static let kills = ProcessInfo.processInfo.environment["BEACONTRACKER_CRASH_KILLS"].flatMap(Int.init) ?? 8

    @Test func killingTheHubMidIngestLosesNoAcknowledgedSightingAndDuplicatesNoVisit() async throws {
        let broker = try MosquittoBroker()
        try await broker.start()
        let database = directory.appendingPathComponent("hub.db").path
        let config = try Self.writeMuseumHubConfig(in: directory, broker, store: "hub.db")
        let (_, acks) = try await watch(broker, "beacontracker/museum/gateways/+/ack")
        let (_, statuses) = try await watch(broker, "beacontracker/museum/hub/status")
        let outboxes = directory.appendingPathComponent("outboxes").path
        let simulatedSeconds = 30 + Self.kills * 4
        let sim = try Self.runMuseum(broker, seconds: simulatedSeconds, outboxes: outboxes)
        var generator = SystemRandomNumberGenerator()
        var restarts: [Double] = []
        for kill in 1...Self.kills {
            let onlineBefore = statuses.messages.count
            let started = ContinuousClock.now
            let hub = try Programs.Running("beacon-hub", ["run", "--config", config])
            let online = await statuses.first(within: .seconds(30)) { _ in statuses.messages.count > onlineBefore }
            #expect(online != nil, "hub never came online: \(hub.text)")
            let acksBefore = acks.messages.count
            // The first acknowledgement after the start: ingest is back.
            _ = await acks.first(within: .seconds(15)) { _ in acks.messages.count > acksBefore }
            restarts.append((ContinuousClock.now - started) / .seconds(1))
            try await Task.sleep(for: .milliseconds(Int.random(in: 300...2500, using: &generator)))
            hub.signal(SIGKILL)
            #expect(await hub.waitForExit(timeout: .seconds(10)) != nil)
            try await Self.check(database, acknowledged: Self.highest(acks.messages), after: "kill \(kill)")
        }

        // The last hub stays until the simulation ends and the agents have resent what was not acknowledged.
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
        try await Self.check(database, acknowledged: Self.highest(acks.messages), after: "the end")

        let (committed, waiting, sightings) = try await Self.accountForEveryBatch(
            outboxes: outboxes, database: database)
        print(
            "crash safety: \(Self.kills) SIGKILLs mid-ingest; \(committed) batches (\(sightings) sightings) committed "
                + "exactly once, \(waiting) still in outboxes; back ingesting after a restart in "
                + "\(restarts.map { String(format: "%.1f", $0) }.joined(separator: ", ")) s")
    }

}

extension MuseumSuite {
    /// Writes the museum hub of the fault tests to `directory`/hub.yaml and returns its path: the museum venue, fast
    /// reconnects, ticks and commits, raw sightings stored at `store` (relative to the file), extra `live` settings.
    static func writeMuseumHubConfig(
        in directory: URL, _ broker: MosquittoBroker, store: String, live: String = ""
    ) throws -> String {
        let path = directory.appendingPathComponent("hub.yaml").path
        try """
        hub: hub-1
        site: museum
        venue: \(root.path)/config/venues/museum.yaml
        mqtt: { host: 127.0.0.1, port: \(broker.port), reconnectMinSeconds: 0.1, reconnectMaxSeconds: 0.5 }
        inference: { boundaryLossDB: 8.5 }
        live: { tickSeconds: 0.2, claimSettleSeconds: 0.2\(live.isEmpty ? "" : ", " + live) }
        store: { path: \(store), rawSightings: true, commitSeconds: 0.3 }
        """.write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    /// The simulated museum for `seconds`: its nine gateways run the agents' publishing code, their outboxes in
    /// `outboxes`.
    static func runMuseum(
        _ broker: MosquittoBroker, seconds: Int, outboxes: String, extra: [String] = []
    ) throws -> Programs.Running {
        try Programs.Running(
            "beacon-sim",
            [
                "run", "\(root.path)/config/venues/museum.yaml", "--mqtt", "127.0.0.1:\(broker.port)", "--duration",
                "\(seconds)", "--outbox-dir", outboxes,
            ] + extra)
    }

    /// Every batch any agent made is committed exactly once, or still waits in its outbox (never acknowledged): per
    /// gateway, sequences 1…highest each in the ledger (once: its key) or pending, none missing, one boot.
    static func accountForEveryBatch(outboxes: String, database: String) async throws -> (
        committed: Int, waiting: Int, sightings: Int
    ) {
        let store = try HubStore(readingFrom: database)
        defer { try? store.close() }
        return try await accountForEveryBatch(outboxes: outboxes, history: store)
    }

    static func accountForEveryBatch(outboxes: String, history store: any HistoryStore) async throws -> (
        committed: Int, waiting: Int, sightings: Int
    ) {
        var committed = 0
        var waiting = 0
        var sightings = 0
        for file in try FileManager.default.contentsOfDirectory(atPath: outboxes) where file.hasSuffix(".db") {
            let gateway = String(file.dropLast(3))
            let outbox = try Outbox(path: "\(outboxes)/\(file)")
            let pending = try await outbox.pending(limit: 1_000_000)
            #expect(try await outbox.droppedTotal() == 0)
            try outbox.close()
            let boots = try await store.integer(
                "SELECT count(DISTINCT boot) FROM batches WHERE gateway = '\(gateway)'")
            #expect(boots == 1, "\(gateway): one agent boot")
            let rows = try #require(
                try await store.integer("SELECT count(*) FROM batches WHERE gateway = '\(gateway)'"))
            let highest =
                max(
                    try await store.integer("SELECT max(seq) FROM batches WHERE gateway = '\(gateway)'")
                        ?? 0, Int(pending.map(\.seq).max() ?? 0))
            let waitingHere = pending.count
            let both =
                pending.isEmpty
                ? 0
                : try await store.integer(
                    "SELECT count(*) FROM batches WHERE gateway = '\(gateway)' AND seq IN ("
                        + pending.map { "\($0.seq)" }.joined(separator: ",") + ")") ?? 0
            #expect(
                rows + waitingHere - both == highest,
                "\(gateway): \(rows) committed, \(waitingHere) waiting (\(both) both), highest sequence \(highest)")
            committed += rows
            waiting += waitingHere
            sightings +=
                try await store.integer(
                    "SELECT coalesce(sum(sightings), 0) FROM batches WHERE gateway = '\(gateway)'") ?? 0
        }
        return (committed, waiting, sightings)
    }

    /// Per gateway and boot, the highest acknowledgement seen.
    static func highest(_ messages: [MQTTMessage]) -> [String: [String: UInt64]] {
        var highest: [String: [String: UInt64]] = [:]
        for message in messages {
            guard let ack = try? ContractCoding.decode(Acknowledgement.self, from: message.payload) else { continue }
            for entry in ack.acks {
                highest[ack.gateway.rawValue, default: [:]][entry.boot] = max(
                    highest[ack.gateway.rawValue]?[entry.boot] ?? 0, entry.seq)
            }
        }
        return highest
    }

    /// The database a killed hub left: sound, every acknowledged batch there with its sightings, no visit twice.
    static func check(_ path: String, acknowledged: [String: [String: UInt64]], after moment: String) async throws {
        let store = try HubStore(readingFrom: path)
        defer { try? store.close() }
        #expect(try await store.database.integrityCheck() == "ok", "after \(moment)")
        try await check(store, acknowledged: acknowledged, after: moment)
    }

    /// The history a killed hub left, on either database: every acknowledged batch there with its sightings, no
    /// visit twice, no two visits of a tag at once.
    static func check(
        _ store: any HistoryStore, acknowledged: [String: [String: UInt64]], after moment: String
    ) async throws {
        for (gateway, boots) in acknowledged {
            for (boot, seq) in boots {
                let present = try await store.integer(
                    "SELECT count(*) FROM batches WHERE gateway = '\(gateway)' AND boot = '\(boot)' AND seq <= \(seq)")
                #expect(
                    present == Int(seq), "after \(moment): \(gateway) acknowledged up to \(seq), \(present ?? 0) stored"
                )
            }
        }
        // Each committed batch's sightings were committed with it (raw sightings are on).
        let ledger = try await store.integer("SELECT coalesce(sum(sightings), 0) FROM batches")
        let raw = try await store.integer("SELECT count(*) FROM sightings")
        #expect(ledger == raw, "after \(moment)")
        let duplicates = try await store.integer(
            "SELECT count(*) FROM (SELECT 1 FROM visits GROUP BY tag, zone, enter HAVING count(*) > 1) AS twice")
        #expect(duplicates == 0, "after \(moment)")
        let overlapping = try await store.integer(
            """
            SELECT count(*) FROM visits a JOIN visits b ON a.tag = b.tag AND a.id < b.id
            WHERE b.enter < coalesce(a.exit, 1e18) AND a.enter < coalesce(b.exit, 1e18)
            """)
        #expect(overlapping == 0, "after \(moment): visits of one tag overlap")
    }
}
