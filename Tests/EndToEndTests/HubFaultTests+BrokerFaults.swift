import BeaconMQTT
import BeaconModel
import BeaconStore
import BrokerTestSupport
import Foundation
import Testing

/// The broker dies under load: the simulated museum's nine real agents and `beacon-hub run` (with its database) go on
/// while mosquitto (persistence on) is stopped with SIGTERM and killed with SIGKILL in turn, at random moments. A
/// SIGKILL loses what mosquitto had acknowledged but not saved; the agents' outboxes resend it. In the end every batch
/// the agents made is committed exactly once or still waits in an outbox, and every acknowledged one is committed.
extension HubFaultTests {
    /// Stops of each kind; `BEACONTRACKER_BROKER_KILLS` raises it (the fault tests run 10 of each).
    static let brokerKills = ProcessInfo.processInfo.environment["BEACONTRACKER_BROKER_KILLS"].flatMap(Int.init) ?? 3

    @Test func stoppingAndKillingTheBrokerLosesNoBatchAndCommitsNoneTwice() async throws {
        let broker = try MosquittoBroker()
        try await broker.start()
        let database = directory.appendingPathComponent("hub.db").path
        let config = try Self.writeMuseumHubConfig(in: directory, broker, store: "hub.db")
        let outboxes = directory.appendingPathComponent("outboxes").path
        let hub = try Programs.Running("beacon-hub", ["run", "--config", config])
        let stops = 2 * Self.brokerKills
        let simulatedSeconds = 30 + stops * 6
        let sim = try Self.runMuseum(broker, seconds: simulatedSeconds, outboxes: outboxes)
        // Ingest is measured in the database (a watcher's own connection would die with the broker too).
        func committedBatches() async -> Int {
            guard let store = try? HubStore(readingFrom: database) else { return 0 }
            defer { try? store.close() }
            return (try? await store.database.fetchInteger("SELECT count(*) FROM batches")) ?? 0
        }
        var generator = SystemRandomNumberGenerator()
        var recoveries: [Double] = []
        var committedAtStart = 0
        for _ in 0..<300 where committedAtStart == 0 {
            try await Task.sleep(for: .milliseconds(100))
            committedAtStart = await committedBatches()
        }
        #expect(committedAtStart > 0, "the hub never committed a batch: \(hub.text.suffix(1500))")
        // A backup while the hub writes (docs/operations.md): a sound copy of one commit.
        let backup = directory.appendingPathComponent("backup.db").path
        let (backupStatus, backupOutput) = try await Programs.run(
            "beacon-hub", ["backup", "--db", database, "--to", backup])
        #expect(backupStatus == 0 && backupOutput.contains("integrity ok"), "\(backupOutput)")
        let (again, refused) = try await Programs.run("beacon-hub", ["backup", "--db", database, "--to", backup])
        #expect(again != 0 && refused.contains("exists"), "\(refused)")
        for stop in 1...stops {
            try await Task.sleep(for: .milliseconds(Int.random(in: 1000...3000, using: &generator)))
            let kind = stop % 2 == 1 ? "SIGTERM" : "SIGKILL"
            if kind == "SIGTERM" { await broker.stop() } else { await broker.kill() }
            try await Task.sleep(for: .milliseconds(Int.random(in: 300...2000, using: &generator)))
            let before = await committedBatches()
            let started = ContinuousClock.now
            try await broker.start()
            // Back: the hub commits batches again (agents and hub reconnected, batches flowing).
            var now = before
            while now <= before && ContinuousClock.now - started < .seconds(60) {
                try await Task.sleep(for: .milliseconds(100))
                now = await committedBatches()
            }
            #expect(now > before, "nothing committed within 60 s after the broker's \(kind) \(stop)")
            recoveries.append((ContinuousClock.now - started) / .seconds(1))
        }

        // The simulation ends; the agents resend what was not acknowledged (10 s), the hub commits it.
        #expect(await sim.waitForExit(timeout: .seconds(Double(simulatedSeconds) * 3 + 60)) == 0, "sim: \(sim.text)")
        try await Task.sleep(for: .seconds(2))
        hub.signal(SIGTERM)
        #expect(await hub.waitForExit(timeout: .seconds(15)) == 0, "hub did not stop cleanly: \(hub.text)")
        await broker.stop()
        try await Self.check(database, acknowledged: [:], after: "the broker faults")
        let (committed, waiting, sightings) = try await Self.accountForEveryBatch(
            outboxes: outboxes, database: database)
        let backedUp = try HubStore(readingFrom: backup)
        let inBackup = try await backedUp.database.fetchInteger("SELECT count(*) FROM batches") ?? 0
        try backedUp.close()
        #expect(inBackup >= committedAtStart && inBackup <= committed, "\(inBackup) batches in the backup")
        print(
            "broker faults: \(Self.brokerKills) SIGTERMs and \(Self.brokerKills) SIGKILLs of mosquitto under load; "
                + "\(committed) batches (\(sightings) sightings) committed exactly once, \(waiting) still in outboxes, "
                + "0 lost; ingest back after each restart in "
                + "\(recoveries.map { String(format: "%.1f", $0) }.joined(separator: ", ")) s; under load, "
                + backupOutput.trimmingCharacters(in: .whitespacesAndNewlines))
    }
}
