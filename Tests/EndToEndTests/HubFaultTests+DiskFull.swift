import BeaconMQTT
import BeaconModel
import BeaconStore
import BrokerTestSupport
import Foundation
import Testing

/// The hub's disk fills up under load: its database lives on a real, small tmpfs that the test fills with a file,
/// while the simulated museum's nine real agents publish through a real mosquitto. The hub must not crash, must
/// acknowledge nothing it could not commit (the agents keep those batches), must raise `disk-full`, and must commit the
/// backlog and raise `store-recovered` when space returns — twice in a row, the second time killed with SIGKILL while
/// the disk is full. In the end every batch is committed exactly once or still waits in an outbox.
extension HubFaultTests {
    @Test func aFullDiskAtTheHubAcknowledgesNothingUncommittedRaisesAnAlertAndRecovers() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("disk-full-\(UUID())")
        let data = directory.appendingPathComponent("data").path
        try FileManager.default.createDirectory(atPath: data, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let tmpfs = try await Tmpfs(megabytes: 32, at: data)
        let broker = try MosquittoBroker()
        try await broker.start()
        let config = try Self.writeMuseumHubConfig(
            in: directory, broker, store: "data/hub.db", live: "statusSeconds: 1")
        let (_, acks) = try await watch(broker, "beacontracker/museum/gateways/+/ack")
        let (_, alerts) = try await watch(broker, "beacontracker/museum/events/alert")
        let (_, statuses) = try await watch(broker, "beacontracker/museum/hub/status")
        func alerted(_ code: String) -> Int {
            alerts.messages.filter { (try? ContractCoding.decode(ZoneEvent.self, from: $0.payload))?.code == code }
                .count
        }
        func lastStatus() -> HubStatus? {
            statuses.messages.compactMap { try? ContractCoding.decode(HubStatus.self, from: $0.payload) }.last
        }
        func acknowledged() -> Int { Self.highest(acks.messages).values.flatMap(\.values).reduce(0) { $0 + Int($1) } }
        /// Polls `condition` every 200 ms for up to `seconds`.
        func until(_ seconds: Double, _ condition: () -> Bool) async -> Bool {
            let deadline = ContinuousClock.now.advanced(by: .seconds(seconds))
            while !condition() {
                guard ContinuousClock.now < deadline else { return false }
                try? await Task.sleep(for: .milliseconds(200))
            }
            return true
        }

        let outboxes = directory.appendingPathComponent("outboxes").path
        let simulatedSeconds = 100
        let sim = try Self.runMuseum(broker, seconds: simulatedSeconds, outboxes: outboxes)
        var hub = try Programs.Running("beacon-hub", ["run", "--config", config], prefix: tmpfs.enter)
        let first = await until(30) { !acks.messages.isEmpty }
        try #require(first, "the hub acknowledged nothing: \(hub.text.suffix(1500))")
        try await Task.sleep(for: .seconds(3))

        // 1. Full: the alert comes, the hub goes on ingesting, acknowledgements stop.
        var filled = try tmpfs.fill()
        let fullAt = ContinuousClock.now
        let raised = await until(90) { alerted("disk-full") >= 1 }
        try #require(raised, "no disk-full alert within 90 s of a full disk: \(hub.text.suffix(1500))")
        let alertSeconds = (ContinuousClock.now - fullAt) / .seconds(1)
        try await Task.sleep(for: .seconds(1))
        let frozen = acknowledged()
        let ingestedAtFreeze = lastStatus()?.ingest?.batches ?? 0
        try await Task.sleep(for: .seconds(5))
        #expect(hub.child.isRunning, "the hub stopped on a full disk: \(hub.text.suffix(1500))")
        #expect(acknowledged() == frozen, "acknowledgements moved while nothing could be committed")
        let status = try #require(lastStatus()?.ingest)
        #expect(status.batches > ingestedAtFreeze, "ingest stopped on a full disk")
        let backlog = status.store?.backlogBatches ?? 0
        #expect(backlog > 0 && (status.store?.failures ?? 0) > 0, "status: \(status)")

        // Space returns: the backlog is committed and acknowledged, `store-recovered` raised.
        try tmpfs.free()
        let freedAt = ContinuousClock.now
        let recovered = await until(30) { alerted("store-recovered") >= 1 }
        #expect(recovered, "no store-recovered within 30 s after space returned: \(hub.text.suffix(1500))")
        let recoverySeconds = (ContinuousClock.now - freedAt) / .seconds(1)
        let moved = await until(10) { acknowledged() > frozen }
        #expect(moved, "acknowledgements did not move after the recovery")
        try await Task.sleep(for: .seconds(3))

        // 2. Full again, and the hub killed while it is: what was acknowledged is in the database.
        filled = max(filled, try tmpfs.fill())
        let again = await until(90) { alerted("disk-full") >= 2 }
        #expect(again, "the disk filling again raised no second alert: \(hub.text.suffix(1500))")
        try await Task.sleep(for: .seconds(2))
        #expect(hub.child.isRunning, "the hub stopped on a full disk: \(hub.text.suffix(1500))")
        hub.signal(SIGKILL)
        #expect(await hub.waitForExit(timeout: .seconds(10)) != nil)
        let killed = directory.appendingPathComponent("killed").path
        try tmpfs.copy(["hub.db", "hub.db-wal"], to: killed)
        try await Self.check(
            "\(killed)/hub.db", acknowledged: Self.highest(acks.messages), after: "a kill on a full disk")

        // Space returns and a new hub takes over the database; the agents resend what was never acknowledged.
        try tmpfs.free()
        let restarted = ContinuousClock.now
        let before = acknowledged()
        hub = try Programs.Running("beacon-hub", ["run", "--config", config], prefix: tmpfs.enter)
        let back = await until(30) { acknowledged() > before }
        #expect(back, "the restarted hub acknowledged nothing: \(hub.text.suffix(1500))")
        let backSeconds = (ContinuousClock.now - restarted) / .seconds(1)
        #expect(await sim.waitForExit(timeout: .seconds(Double(simulatedSeconds) * 3 + 60)) == 0, "sim: \(sim.text)")
        try await Task.sleep(for: .seconds(2))
        hub.signal(SIGTERM)
        #expect(await hub.waitForExit(timeout: .seconds(15)) == 0, "hub did not stop cleanly: \(hub.text.suffix(1500))")
        let final = directory.appendingPathComponent("final").path
        try tmpfs.copy(["hub.db", "hub.db-wal"], to: final)
        try await Self.check("\(final)/hub.db", acknowledged: Self.highest(acks.messages), after: "the end")
        let (committed, waiting, sightings) = try await Self.accountForEveryBatch(
            outboxes: outboxes, database: "\(final)/hub.db")
        print(
            "disk full: a 32 MiB tmpfs filled (\(filled / 1024) KiB of filler at most); disk-full raised "
                + "\(String(format: "%.1f", alertSeconds)) s after the disk filled; the hub went on ingesting with "
                + "\(backlog) batches unacknowledged; store-recovered \(String(format: "%.1f", recoverySeconds)) s "
                + "after space returned; killed on a full disk: database sound, every acknowledged batch in it; "
                + "restarted, acknowledging again in \(String(format: "%.1f", backSeconds)) s; \(committed) batches "
                + "(\(sightings) sightings) committed exactly once, \(waiting) still in outboxes")
    }
}
