import BeaconDecoding
import BeaconMQTT
import BeaconModel
import BeaconStore
import BrokerTestSupport
import Foundation
import Synchronization
import Testing

/// The agent's outbox loop against a real mosquitto: replay → broker → a test subscriber that acknowledges as the
/// hub will → the outbox empties; and with the broker stopped and the agent killed (-9) in between, every batch
/// sequence still arrives, exactly once after deduplication, with no gap.
@Suite(.timeLimit(.minutes(3)))
struct LossFreePublishingTests {
    /// Deleted with the suite's instance, which Swift Testing drops once the test has ended, pass or fail.
    let temporaryDirectory: TemporaryDirectory
    var directory: URL { temporaryDirectory.url }

    init() throws {
        temporaryDirectory = try TemporaryDirectory(prefix: "lossfree")
    }

    /// `seconds` of capture: three beacons advertising 10 times a second each, plus a phone that is not a beacon.
    func makeCapture(seconds: Int) throws -> (path: String, beaconAdvertisements: Int) {
        var writer = BTSnoopWriter()
        let ibeacon = bytes(fromHex: "0201061aff4c000215e2c56db5dffb48d2b060d0f5a71096e000010002c5")!
        let uid = bytes(fromHex: "0201060303aafe1516aafe00e8edd1ebeac04e5defa0170123456789ab")!
        let tlm = bytes(fromHex: "0201060303aafe1116aafe20000bb81480000003e800002710")!
        let alt = bytes(fromHex: "0201061bff1801beace2c56db5dffb48d2b060d0f5a71096e000010002c500")!
        let phone = bytes(fromHex: "02011a0aff4c0010050b1c6d9e2f")!
        let start = 1_700_000_000.0
        var beacons = 0
        for tick in 0..<(seconds * 10) {
            let t = start + Double(tick) / 10
            writer.appendEvent(
                BTSnoopWriter.advertisingReportEvent(address: [0xC4, 1, 2, 3, 4, 5], rssi: -60, data: ibeacon), at: t)
            writer.appendEvent(
                BTSnoopWriter.advertisingReportEvent(
                    address: [0xD0, 1, 2, 3, 4, 6], random: true, rssi: -70, data: tick % 10 == 9 ? tlm : uid),
                at: t + 0.01)
            writer.appendEvent(
                BTSnoopWriter.advertisingReportEvent(address: [0xE0, 1, 2, 3, 4, 7], rssi: -80, data: alt), at: t + 0.02
            )
            writer.appendEvent(
                BTSnoopWriter.advertisingReportEvent(
                    address: [0x5A, 1, 2, 3, 4, 8], random: true, rssi: -50, data: phone),
                at: t + 0.03)
            beacons += 3
        }
        let path = directory.appendingPathComponent("beacons.btsnoop").path
        try Data(writer.bytes).write(to: URL(fileURLWithPath: path))
        return (path, beacons)
    }

    func agentConfig(_ broker: MosquittoBroker) throws -> String {
        let path = directory.appendingPathComponent("agent.yaml").path
        try """
        gateway: gw-e2e
        site: e2e
        mqtt: { host: 127.0.0.1, port: \(broker.port), reconnectMinSeconds: 0.1, reconnectMaxSeconds: 0.5 }
        heartbeatSeconds: 1
        batch: { maxSightings: 50, maxDelaySeconds: 0.1 }
        outbox: { path: \(directory.path)/outbox.db, resendAfterSeconds: 2, resendPerSecond: 200 }
        """.write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    @Test func replayedSightingsArriveAndTheOutboxEmpties() async throws {
        let broker = try MosquittoBroker()
        try await broker.start()
        let (capture, beacons) = try makeCapture(seconds: 10)
        let hub = try await AcknowledgingHub(broker: broker)
        let config = try agentConfig(broker)

        let result = try await Programs.run(
            "beacon-agent", ["replay", capture, "--config", config, "--speed", "0", "--drain-timeout", "20"])
        #expect(result.status == 0, "\(result.output.suffix(2000))")

        let boots = hub.received
        #expect(boots.count == 1)
        let batches = try #require(boots.values.first)
        #expect(Array(batches.keys).sorted() == Array(1...UInt64(batches.count)))
        // Every beacon advertisement became one sighting; the phone's never left the gateway.
        #expect(batches.values.reduce(0) { $0 + $1.count } == beacons)
        #expect(!batches.values.joined().contains { $0.beacon.hasPrefix("mac:") })
        #expect(
            batches.values.joined().contains { $0.kind == .eddystoneTLM && $0.extras?.tlm?.batteryMilliVolts == 3000 })

        let outbox = try Outbox(path: "\(directory.path)/outbox.db")
        #expect(try await outbox.depth().batches == 0)
        try outbox.close()
        await hub.stop()
        await broker.stop()
    }

    @Test func brokerOutageAndAgentKillLoseNoBatch() async throws {
        let broker = try MosquittoBroker()
        try await broker.start()
        let (capture, _) = try makeCapture(seconds: 30)
        let hub = try await AcknowledgingHub(broker: broker)
        let config = try agentConfig(broker)

        let agent = try Programs.Running("beacon-agent", ["replay", capture, "--config", config, "--speed", "5"])
        try await Task.sleep(for: .seconds(2))
        let receivedBeforeOutage = hub.received.values.map(\.count).reduce(0, +)
        await broker.stop()  // outage: the agent keeps storing batches
        try await Task.sleep(for: .seconds(2))
        agent.signal(SIGKILL)  // and dies without a goodbye
        #expect(await agent.waitForExit() != 0)
        let firstBoot = try #require(hub.received.first(where: { !$0.value.isEmpty })?.key)
        try await broker.start()

        // A restarted agent (no source) resends what the dead one had stored; its heartbeat reports the depth.
        let (watcher, statuses) = try await watch(broker, Topics(site: "e2e").gatewayStatus("gw-e2e"))
        let restarted = try Programs.Running("beacon-agent", ["run", "--config", config])
        let drained = await statuses.first(within: .seconds(60)) { message in
            guard let status = try? ContractCoding.decode(GatewayStatus.self, from: message.payload) else {
                return false
            }
            // The retained status of the dead agent's boot does not count: only the new agent's report.
            return status.state == .online && status.boot != firstBoot && status.outbox?.pendingBatches == 0
        }
        #expect(drained != nil, "the outbox never drained: \(restarted.text.suffix(1500))")
        restarted.signal(SIGTERM)
        #expect(await restarted.waitForExit() == 0)
        await watcher.shutdown()

        let boot = firstBoot
        let batches = try #require(hub.received[boot])
        // Exactly the sequence numbers the dead agent stored, each once after deduplication, no gap.
        let outbox = try Outbox(path: "\(directory.path)/outbox.db")
        let lastSeq = try #require(try await outbox.lastSequence(boot: boot))
        #expect(try await outbox.depth().batches == 0)
        try outbox.close()
        #expect(Array(batches.keys).sorted() == Array(1...lastSeq))
        // Batches stored during the outage reached the hub only through the restarted agent's resend.
        #expect(receivedBeforeOutage > 0)
        #expect(lastSeq > UInt64(receivedBeforeOutage))
        await hub.stop()
        await broker.stop()
    }
}

/// Plays the hub's part of the contract: receives sighting batches (persistent session), keeps one copy per
/// (boot, seq), and publishes the retained acknowledgement of the highest contiguous sequence per boot.
final class AcknowledgingHub: Sendable {
    let client: MQTTClient
    private let state = Mutex(State())
    private let task: Mutex<Task<Void, Never>?> = Mutex(nil)

    struct State {
        var batches: [String: [UInt64: [Sighting]]] = [:]
        var tracker = AcknowledgementTracker()
        var duplicates = 0
    }

    init(broker: MosquittoBroker) async throws {
        client = try MQTTClient(
            configuration: MQTTConfiguration(
                host: broker.host, port: broker.port, clientID: "test-hub", cleanSession: false,
                reconnectMinimumDelay: .milliseconds(100), reconnectMaximumDelay: .milliseconds(500)))
        try await client.connect()
        let topics = Topics(site: "e2e")
        let subscription = try await client.subscribe(to: topics.allSightings)
        let task = Task { [weak self] in
            for await message in subscription {
                guard let self, let batch = try? ContractCoding.decode(SightingBatch.self, from: message.payload)
                else { continue }
                let acks = state.withLock { state -> [Acknowledgement.Entry] in
                    if state.tracker.record(boot: batch.boot, seq: batch.seq) {
                        state.batches[batch.boot, default: [:]][batch.seq] = batch.sightings
                    } else {
                        state.duplicates += 1
                    }
                    return state.tracker.entries
                }
                let ack = Acknowledgement(gateway: batch.gateway, t: Date().timeIntervalSince1970, acks: acks)
                if let payload = try? ContractCoding.encode(ack) {
                    try? await client.publish(
                        payload, to: topics.acknowledgement(batch.gateway), retain: true, timeout: .seconds(5))
                }
            }
        }
        self.task.withLock { $0 = task }
    }

    var received: [String: [UInt64: [Sighting]]] { state.withLock { $0.batches } }
    var duplicates: Int { state.withLock { $0.duplicates } }

    func stop() async {
        await client.shutdown()
        task.withLock { $0?.cancel() }
    }
}
