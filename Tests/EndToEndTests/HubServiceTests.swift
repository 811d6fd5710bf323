import BeaconMQTT
import BeaconModel
import BrokerTestSupport
import Foundation
import Simulator
import Synchronization
import Testing

/// `beacon-hub run` against a real mosquitto: what alert subscribers and gateways see. One of the museum round's two
/// lanes (MuseumSuite); HubFaultTests is the other.
@Suite(.serialized) struct HubServiceTests: MuseumSuite {
    static let beacon = "ibeacon:e2c56db5-dffb-48d2-b060-d0f5a71096e0:1:1"
    /// Deleted with the suite's instance, which Swift Testing drops once the test has ended, pass or fail.
    let temporaryDirectory: TemporaryDirectory

    init() throws {
        temporaryDirectory = try TemporaryDirectory(prefix: "hub-e2e")
        try TestVenues.row().write(
            to: directory.appendingPathComponent("row.yaml"), atomically: true, encoding: .utf8)
    }

    func hubConfig(_ broker: MosquittoBroker, hub: String = "hub-1", extra: String = "") throws -> String {
        let path = directory.appendingPathComponent("\(hub).yaml").path
        try """
        hub: \(hub)
        site: row
        venue: row.yaml
        mqtt: { host: 127.0.0.1, port: \(broker.port), reconnectMinSeconds: 0.1, reconnectMaxSeconds: 0.5 }
        tags:
          - { id: tag-1, beacon: "\(Self.beacon)" }
        live: { tickSeconds: 0.2, statusSeconds: 1, heartbeatSeconds: 1, lockKeepAliveSeconds: 5 }
        \(extra)
        """.write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    /// Plays one gateway's agent by hand: contract batches with exact control over boot, sequence and clock.
    final class FakeAgent: Sendable {
        let client: MQTTClient
        let gateway: String
        let boot = UUID().uuidString.lowercased()
        let seq = Mutex<UInt64>(0)
        let topics = Topics(site: "row")

        init(_ broker: MosquittoBroker, gateway: String) async throws {
            self.gateway = gateway
            client = try MQTTClient(
                configuration: MQTTConfiguration(host: broker.host, port: broker.port, clientID: "fake-\(gateway)"))
            try await client.connect()
        }

        func status(heartbeat: Double = 1, state: GatewayStatus.State = .online) async throws {
            let status = GatewayStatus(
                gateway: GatewayID(rawValue: gateway)!, state: state, boot: boot, t: Date().timeIntervalSince1970,
                agentVersion: "test", clockSynced: true, heartbeatSeconds: heartbeat)
            try await client.publish(
                try ContractCoding.encode(status), to: topics.gatewayStatus(GatewayID(rawValue: gateway)!), retain: true
            )
        }

        /// Publishes the next batch: `rssi` for the test tag, scanned now (or `skew` seconds off).
        @discardableResult
        func batch(rssi: Int, skew: Double = 0, synced: Bool = true) async throws -> SightingBatch {
            let next = seq.withLock { value -> UInt64 in
                value += 1
                return value
            }
            let now = Date().timeIntervalSince1970 + skew
            let batch = SightingBatch(
                gateway: GatewayID(rawValue: gateway)!, boot: boot, seq: next, sent: now, clockSynced: synced,
                sightings: [
                    Sighting(t: now - 0.3, beacon: HubServiceTests.beacon, rssi: rssi, txPower: -59),
                    Sighting(t: now - 0.1, beacon: HubServiceTests.beacon, rssi: rssi + 1, txPower: -59),
                ])
            try await resend(batch)
            return batch
        }

        /// Publishes the next batch with these sightings.
        func sightings(_ sightings: [Sighting]) async throws {
            let next = seq.withLock { value -> UInt64 in
                value += 1
                return value
            }
            try await resend(
                SightingBatch(
                    gateway: GatewayID(rawValue: gateway)!, boot: boot, seq: next, sent: Date().timeIntervalSince1970,
                    clockSynced: true, sightings: sightings))
        }

        func resend(_ batch: SightingBatch) async throws {
            try await raw(try ContractCoding.encode(batch))
        }

        func raw(_ payload: [UInt8], gateway other: String? = nil) async throws {
            try await client.publish(payload, to: topics.sightings(GatewayID(rawValue: other ?? gateway)!))
        }
    }

    /// Feeds the tag in room a (gw-a loud) for `seconds`, two batches a second.
    func stayInA(_ agent: FakeAgent, seconds: Double) async throws {
        let end = ContinuousClock.now.advanced(by: .seconds(seconds))
        while ContinuousClock.now < end {
            try await agent.batch(rssi: -68)
            try await Task.sleep(for: .milliseconds(500))
        }
    }

    func startHub(_ broker: MosquittoBroker, hub: String = "hub-1", extra: String = "") throws -> Programs.Running {
        try Programs.Running("beacon-hub", ["run", "--config", try hubConfig(broker, hub: hub, extra: extra)])
    }

    @Test func simulatedMuseumComesOutInTheRightZones() async throws {
        let broker = try MosquittoBroker()
        try await broker.start()
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        let config = directory.appendingPathComponent("museum-hub.yaml").path
        try """
        hub: hub-1
        site: museum
        venue: \(root.path)/config/venues/museum.yaml
        mqtt: { host: 127.0.0.1, port: \(broker.port) }
        inference: { boundaryLossDB: 8.5 }
        """.write(toFile: config, atomically: true, encoding: .utf8)
        let (watcher, events) = try await watch(broker, "beacontracker/museum/events/#")
        let (_, acks) = try await watch(broker, "beacontracker/museum/gateways/+/ack")
        let hub = try Programs.Running("beacon-hub", ["run", "--config", config])
        let (_, status) = try await watch(broker, "beacontracker/museum/hub/status")
        #expect(await status.first { $0.text.contains("\"online\"") } != nil, "hub never came online: \(hub.text)")
        let truthPath = directory.appendingPathComponent("truth.jsonl").path
        let sim = try Self.runMuseum(
            broker, seconds: 40, outboxes: directory.appendingPathComponent("outboxes").path,
            extra: ["--truth", truthPath])
        #expect(await sim.waitForExit(timeout: .seconds(90)) == 0, "simulator: \(sim.text)")
        try await Task.sleep(for: .seconds(2))
        hub.signal(SIGTERM)
        #expect(await hub.waitForExit(timeout: .seconds(15)) == 0, "hub did not stop cleanly: \(hub.text)")
        await watcher.shutdown()

        let truth = try String(contentsOfFile: truthPath, encoding: .utf8).split(separator: "\n").map {
            try JSONDecoder().decode(TruthInterval.self, from: Data($0.utf8))
        }
        let decoded = Self.decode(ZoneEvent.self, events.messages)
        let score = Scorer.score(truth: truth, events: decoded.filter { $0.type == .enter || $0.type == .exit })
        print(
            "live museum, 40 s: accuracy \(score.overall.accuracy), \(decoded.count) events, \(truth.count) truth intervals"
        )
        // 40 s from cold (each tag needs its first seconds), so well below the 30-minute figure of docs/accuracy.md.
        #expect(score.overall.accuracy > 0.6)
        #expect(decoded.contains { $0.type == .enter })
        // Every gateway's batches were acknowledged, so the agents' outboxes could drain.
        let acked = Set(Self.decode(Acknowledgement.self, acks.messages).map(\.gateway.rawValue))
        #expect(acked.count == 9, "acknowledged gateways: \(acked.sorted())")
    }

    @Test func malformedDuplicateAndForeignBatchesAreCountedNeverFatal() async throws {
        let broker = try MosquittoBroker()
        try await broker.start()
        let (watcher, events) = try await watch(broker, "beacontracker/row/events/#")
        let (_, acks) = try await watch(broker, "beacontracker/row/gateways/gw-a/ack")
        let (_, statuses) = try await watch(broker, "beacontracker/row/hub/status")
        let hub = try startHub(broker)
        #expect(await statuses.first { $0.text.contains("\"online\"") } != nil, "hub: \(hub.text)")
        let agent = try await FakeAgent(broker, gateway: "gw-a")
        try await agent.status()
        let first = try await agent.batch(rssi: -68)
        let bad: [(String, [UInt8])] = [
            ("gw-a", Array("not json at all".utf8)),
            ("gw-a", Array(#"{"version":1,"gateway":"gw-a"}"#.utf8)),
            (
                "gw-a",
                Array(
                    #"{"version":99,"gateway":"gw-a","boot":"x","seq":1,"sent":1,"clockSynced":true,"sightings":[]}"#
                        .utf8)
            ),
            ("gw-a", [UInt8](repeating: 0x20, count: 300_000)),
            (
                "gw-a",
                Array(
                    #"{"version":1,"gateway":"gw-b","boot":"x","seq":1,"sent":1,"clockSynced":true,"sightings":[]}"#
                        .utf8)
            ),
            (
                "gw-nowhere",
                Array(
                    #"{"version":1,"gateway":"gw-nowhere","boot":"x","seq":1,"sent":1,"clockSynced":true,"sightings":[]}"#
                        .utf8)
            ),
        ]
        for (gateway, payload) in bad { try await agent.raw(payload, gateway: gateway) }
        try await agent.resend(first)
        try await agent.resend(first)
        try await agent.batch(rssi: -68, skew: 3600)
        try await stayInA(agent, seconds: 5)
        let last = agent.seq.withLock { $0 }

        let enter = await events.first { $0.topic.hasSuffix("/enter") }
        let event = enter.flatMap { try? ContractCoding.decode(ZoneEvent.self, from: $0.payload) }
        #expect(event?.zone == "a" && event?.tag == "tag-1", "events: \(events.messages.map(\.text))")
        // Everything with a sequence was processed (the future-dated batch refused, yet acknowledged so that it does
        // not block the outbox); the acknowledgement reaches the last batch.
        let ack = await acks.first { message in
            (try? ContractCoding.decode(Acknowledgement.self, from: message.payload))?.acks.first?.seq == last
        }
        #expect(ack != nil, "acks: \(acks.messages.suffix(3).map(\.text))")
        let counts = await ingest(statuses) { $0.batches >= Int(last) - 1 && $0.duplicates >= 2 }
        #expect(counts?.duplicates == 2)
        #expect(counts?.rejected["malformed"] == 2)
        #expect(counts?.rejected["unsupported-version"] == 1)
        #expect(counts?.rejected["too-large"] == 1)
        #expect(counts?.rejected["gateway-mismatch"] == 1)
        #expect(counts?.rejected["unknown-gateway"] == 1)
        #expect(counts?.rejected["future-dated"] == 1)
        #expect(counts?.batches == Int(last) - 1)
        let alerts = Self.decode(ZoneEvent.self, events.messages).filter { $0.type == .alert }.compactMap(\.code)
        #expect(alerts.contains("unknown-gateway") && alerts.contains("clock-skew"), "alerts: \(alerts)")
        hub.signal(SIGTERM)
        #expect(await hub.waitForExit() == 0, "hub: \(hub.text)")
        await agent.client.shutdown()
        await watcher.shutdown()
    }

    @Test func unsynchronisedClocksAreRebasedAndFlagged() async throws {
        let broker = try MosquittoBroker()
        try await broker.start()
        let (watcher, events) = try await watch(broker, "beacontracker/row/events/#")
        let (_, states) = try await watch(broker, "beacontracker/row/tags/+/state")
        let (_, statuses) = try await watch(broker, "beacontracker/row/hub/status")
        let hub = try startHub(broker)
        #expect(await statuses.first { $0.text.contains("\"online\"") } != nil, "hub: \(hub.text)")
        let agent = try await FakeAgent(broker, gateway: "gw-a")
        try await agent.status()
        // A Pi without RTC or NTP: its clock says 1970-something, a day behind… here 2 hours.
        let end = ContinuousClock.now.advanced(by: .seconds(5))
        while ContinuousClock.now < end {
            try await agent.batch(rssi: -68, skew: -7200, synced: false)
            try await Task.sleep(for: .milliseconds(500))
        }
        let enter = await events.first { $0.topic.hasSuffix("/enter") }
        #expect(enter != nil, "no enter from re-based sightings: \(events.messages.map(\.text))")
        let skew = Self.decode(ZoneEvent.self, events.messages).first { $0.code == "clock-skew" }
        #expect(skew?.gateway == "gw-a" && skew?.reason.contains("7200") == true, "\(String(describing: skew))")
        // The state's lastSeen is on the hub's clock, not two hours ago.
        let state = Self.decode(TagState.self, states.messages).last
        #expect(abs((state?.lastSeen ?? 0) - Date().timeIntervalSince1970) < 5)
        let counts = await ingest(statuses) { $0.batches >= 8 }
        #expect(counts.map { $0.rebased == 2 * $0.batches } == true, "\(String(describing: counts))")
        hub.signal(SIGTERM)
        #expect(await hub.waitForExit() == 0)
        await agent.client.shutdown()
        await watcher.shutdown()
    }

    @Test func aSilentGatewayMakesItsTagsUnknownThenTheyReturnWithoutANewEnter() async throws {
        let broker = try MosquittoBroker()
        try await broker.start()
        let (watcher, events) = try await watch(broker, "beacontracker/row/events/#")
        let (_, states) = try await watch(broker, "beacontracker/row/tags/tag-1/state")
        let (_, statuses) = try await watch(broker, "beacontracker/row/hub/status")
        let hub = try startHub(broker)
        #expect(await statuses.first { $0.text.contains("\"online\"") } != nil, "hub: \(hub.text)")
        let agent = try await FakeAgent(broker, gateway: "gw-a")
        try await agent.status(heartbeat: 1)
        try await stayInA(agent, seconds: 4)
        #expect(await events.first { $0.topic.hasSuffix("/enter") } != nil)

        // The Pi loses power: no status, no batches. 3 × 1 s later the hub says offline, and the tag unknown.
        let silentAt = Date().timeIntervalSince1970
        let offline = await events.first(within: .seconds(8)) {
            $0.text.contains("gateway-offline") && $0.text.contains("\"gw-a\"")
        }
        #expect(offline != nil, "no gateway-offline alert: \(events.messages.map(\.text))")
        let unknown = await events.first { $0.topic.hasSuffix("/unknown") }
        let unknownEvent = unknown.flatMap { try? ContractCoding.decode(ZoneEvent.self, from: $0.payload) }
        #expect(unknownEvent?.zone == "a" && unknownEvent?.tag == "tag-1")
        if let offline, let event = try? ContractCoding.decode(ZoneEvent.self, from: offline.payload) {
            print("gateway silent → offline alert after \(event.t - silentAt) s (heartbeat 1 s)")
        }
        let unknownState = await states.first { $0.text.contains("\"unknown\"") }
        #expect(unknownState.flatMap { try? ContractCoding.decode(TagState.self, from: $0.payload) }?.zone == "a")
        // Long past the absence timeout (12 s): still no exit.
        try await Task.sleep(for: .seconds(14))
        #expect(!events.messages.contains { $0.topic.hasSuffix("/exit") })

        // Back: status, then the tag heard in the same room — inside again, no second enter.
        try await agent.status(heartbeat: 1)
        try await stayInA(agent, seconds: 4)
        let back = await events.first { $0.text.contains("gateway-online") }
        #expect(back != nil)
        let inside = Self.decode(TagState.self, states.messages).last
        #expect(inside?.state == .inside && inside?.zone == "a", "\(String(describing: inside))")
        #expect(events.messages.filter { $0.topic.hasSuffix("/enter") }.count == 1)
        #expect(!events.messages.contains { $0.topic.hasSuffix("/exit") })
        hub.signal(SIGTERM)
        #expect(await hub.waitForExit() == 0)
        await agent.client.shutdown()
        await watcher.shutdown()
    }

    @Test func aStandbyHubTakesOverWithinSecondsOfTheActiveOneDying() async throws {
        let broker = try MosquittoBroker()
        try await broker.start()
        let (watcher, events) = try await watch(broker, "beacontracker/row/events/#")
        let (_, claims) = try await watch(broker, "beacontracker/row/hub/active")
        let (_, acks) = try await watch(broker, "beacontracker/row/gateways/gw-a/ack")
        let (_, statuses) = try await watch(broker, "beacontracker/row/hub/status")
        let first = try startHub(broker, hub: "hub-1")
        #expect(
            await statuses.first { $0.text.contains("hub-1") && $0.text.contains("\"online\"") } != nil,
            "hub-1: \(first.text)")
        let second = try startHub(broker, hub: "hub-2")
        let agent = try await FakeAgent(broker, gateway: "gw-a")
        try await agent.status(heartbeat: 5)
        try await stayInA(agent, seconds: 4)
        #expect(await events.first { $0.topic.hasSuffix("/enter") } != nil)
        #expect(second.text.contains("standing by"), "hub-2: \(second.text)")
        #expect(!claims.messages.contains { $0.text.contains("hub-2") })

        first.signal(SIGKILL)
        let killedAt = ContinuousClock.now
        let taken = await claims.first(within: .seconds(15)) { $0.text.contains("hub-2") }
        let takeover = ContinuousClock.now - killedAt
        #expect(taken != nil, "hub-2 never claimed: \(second.text)")
        print("standby takeover after SIGKILL of the active hub: \(takeover)")
        #expect(takeover < .seconds(10))
        #expect(await statuses.first { $0.text.contains("hub-2") && $0.text.contains("\"online\"") } != nil)

        // hub-2 carries on: it acknowledges the gateway's next batches, and the tag still in a gets no second enter.
        try await stayInA(agent, seconds: 4)
        let last = agent.seq.withLock { $0 }
        let ack = await acks.first { message in
            (try? ContractCoding.decode(Acknowledgement.self, from: message.payload))?.acks.first?.seq == last
        }
        #expect(ack != nil, "acks: \(acks.messages.suffix(2).map(\.text))")
        #expect(events.messages.filter { $0.topic.hasSuffix("/enter") }.count == 1, "\(events.messages.map(\.text))")
        second.signal(SIGTERM)
        #expect(await second.waitForExit() == 0, "hub-2: \(second.text)")
        await agent.client.shutdown()
        await watcher.shutdown()
    }

    @Test func espresenseAndOpenMQTTGatewayReadingsMoveATag() async throws {
        let broker = try MosquittoBroker()
        try await broker.start()
        let phone = "iBeacon:1d4b2e16-481e-4579-8b35-ffc32e4a1758-100-1"
        let (watcher, events) = try await watch(broker, "beacontracker/row/events/#")
        let (_, statuses) = try await watch(broker, "beacontracker/row/hub/status")
        let hub = try startHub(
            broker,
            extra: """
                espresense: { rooms: { kitchen: gw-a } }
                openMQTTGateway: { prefix: home, gateways: { OpenMQTTGateway_ESP32_BLE: gw-b } }
                regions: [{ id: phones, ibeacon: { uuid: 1d4b2e16-481e-4579-8b35-ffc32e4a1758 } }]
                """)
        #expect(await statuses.first { $0.text.contains("\"online\"") } != nil, "hub: \(hub.text)")
        // ESPresense's kitchen node hears the phone loud (its payload as ESPresense 3.x publishes it).
        let end = ContinuousClock.now.advanced(by: .seconds(5))
        while ContinuousClock.now < end {
            try await watcher.publish(
                Array(
                    #"{"mac":"5a3f1c9d0e42","id":"\#(phone)","name":"pixel-8","rssi@1m":-59,"rssi":-62.35,"rxAdj":0,"rssiVar":1.84,"distance":1.42,"var":0.21,"int":1032}"#
                        .utf8), to: "espresense/devices/\(phone)/kitchen")
            try await Task.sleep(for: .milliseconds(300))
        }
        let enter = await events.first { $0.topic.hasSuffix("/enter") }
        let entered = enter.flatMap { try? ContractCoding.decode(ZoneEvent.self, from: $0.payload) }
        #expect(entered?.zone == "a", "events: \(events.messages.map(\.text)), hub: \(hub.text)")
        #expect(entered?.tag?.rawValue == "ibeacon:1d4b2e16-481e-4579-8b35-ffc32e4a1758:100:1")
        // Then only OpenMQTTGateway's node in room b hears it (Theengs' decoded iBeacon fields).
        let later = ContinuousClock.now.advanced(by: .seconds(8))
        while ContinuousClock.now < later {
            try await watcher.publish(
                Array(
                    #"{"id":"5A:3F:1C:9D:0E:42","mac_type":1,"rssi":-60,"brand":"GENERIC","model":"iBeacon","model_id":"IBEACON","mfid":"4c00","uuid":"1d4b2e16481e45798b35ffc32e4a1758","major":100,"minor":1,"txpower":-59}"#
                        .utf8), to: "home/OpenMQTTGateway_ESP32_BLE/BTtoMQTT/5A3F1C9D0E42")
            try await Task.sleep(for: .milliseconds(300))
        }
        let moved = await events.first { message in
            message.topic.hasSuffix("/enter") && message.text.contains("\"zone\":\"b\"")
        }
        #expect(moved != nil, "events: \(events.messages.map(\.text))")
        // A node no one mapped is counted, not fatal.
        try await watcher.publish(
            Array(#"{"id":"x","rssi":-70}"#.utf8), to: "espresense/devices/x/garage")
        let counts = await ingest(statuses) { $0.rejected["unknown-gateway"] == 1 }
        #expect((counts?.foreign ?? 0) >= 20)
        hub.signal(SIGTERM)
        #expect(await hub.waitForExit() == 0)
        await watcher.shutdown()
    }
}
