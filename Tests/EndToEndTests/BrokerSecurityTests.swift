import BeaconDecoding
import BeaconMQTT
import BeaconModel
import BeaconStore
import BrokerTestSupport
import Foundation
import Testing

/// The shipped production broker configuration (deploy/mosquitto/beacontracker.conf and .acl), run as shipped except
/// for ports, paths and test certificates, with `beacon-hub run` as user hub-1: who gets in, who may publish and read
/// what, and that bad payloads a gateway sends never reach the database.
@Suite(.serialized, .timeLimit(.minutes(3))) struct BrokerSecurityTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()
    static let users = [
        "gw-entrance": "entrance-secret-1", "gw-egypt": "egypt-secret-2", "hub-1": "hub-secret-3",
        "hub-2": "hub-secret-4", "alerts": "alerts-secret-5",
    ]
    let topics = Topics(site: "museum")

    static func productionBroker() async throws -> MosquittoBroker {
        var options = MosquittoBroker.Options()
        options.users = users
        options.productionConfig = root.appendingPathComponent("deploy/mosquitto/beacontracker.conf")
        options.productionACL = root.appendingPathComponent("deploy/mosquitto/beacontracker.acl")
        let broker = try MosquittoBroker(options: options)
        try await broker.start()
        return broker
    }

    /// A client of `broker` as `user` (nil: anonymous), over TLS trusting `ca` when given, else the loopback listener.
    static func client(_ broker: MosquittoBroker, _ user: String?, password: String? = nil, tls ca: URL? = nil) throws
        -> MQTTClient
    {
        var configuration = MQTTConfiguration(
            host: "127.0.0.1", port: ca == nil ? broker.port : broker.tlsPort!,
            clientID: "\(user ?? "anon")-\(UUID().uuidString.prefix(6))",
            reconnectMinimumDelay: .milliseconds(100), reconnectMaximumDelay: .milliseconds(500))
        configuration.username = user
        configuration.password = password ?? user.flatMap { users[$0] }
        if let ca { configuration.tls = MQTTConfiguration.TLS(caFile: ca.path) }
        return try MQTTClient(configuration: configuration)
    }

    static func refused(_ client: MQTTClient) async -> MQTTError.Code? {
        defer { Task { await client.shutdown() } }
        do {
            try await client.connect(timeout: .seconds(10))
            return nil
        } catch {
            return error.code
        }
    }

    @Test func strangersAreRefusedOnBothListeners() async throws {
        let broker = try await Self.productionBroker()
        let ca = try #require(broker.certificates).caFile
        #expect(await Self.refused(try Self.client(broker, nil)) == .notAuthorized, "anonymous, loopback")
        #expect(await Self.refused(try Self.client(broker, nil, tls: ca)) == .notAuthorized, "anonymous, TLS")
        #expect(
            await Self.refused(try Self.client(broker, "gw-entrance", password: "guess", tls: ca)) == .notAuthorized)
        #expect(await Self.refused(try Self.client(broker, "gw-nobody", password: "x", tls: ca)) == .notAuthorized)
        let otherCA = try #require(broker.certificates).otherCAFile
        #expect(await Self.refused(try Self.client(broker, "gw-entrance", tls: otherCA)) == .tlsFailure)
        #expect(await Self.refused(try Self.client(broker, "gw-entrance", tls: ca)) == nil, "the gateway itself")
        await broker.stop()
    }

    @Test func aGatewayPublishesAndReadsOnlyItsOwnTopicsAndBadPayloadsNeverReachTheDatabase() async throws {
        let broker = try await Self.productionBroker()
        let ca = try #require(broker.certificates).caFile
        let directory = broker.directory.appendingPathComponent("hub")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let passwordFile = directory.appendingPathComponent("hub.password").path
        try Self.users["hub-1"]!.write(toFile: passwordFile, atomically: true, encoding: .utf8)
        chmod(passwordFile, 0o600)
        let config = directory.appendingPathComponent("hub.yaml").path
        try """
        hub: hub-1
        site: museum
        venue: \(Self.root.path)/config/venues/museum.yaml
        mqtt: { host: 127.0.0.1, port: \(broker.port), username: hub-1, passwordFile: hub.password,
                reconnectMinSeconds: 0.1, reconnectMaxSeconds: 0.5 }
        live: { tickSeconds: 0.2, statusSeconds: 1, claimSettleSeconds: 0.2 }
        store: { path: hub.db, commitSeconds: 0.2 }
        """.write(toFile: config, atomically: true, encoding: .utf8)

        // Watchers: a second hub's user sees what hubs see; the gateway subscribes to everything.
        let observer = try Self.client(broker, "hub-2", tls: ca)
        try await observer.connect()
        let sightings = MessageCollector(try await observer.subscribe(to: topics.allSightings))
        let statuses = MessageCollector(try await observer.subscribe(to: topics.hubStatus))
        let hub = try Programs.Running("beacon-hub", ["run", "--config", config])
        let online = await statuses.first(within: .seconds(120)) {
            (try? ContractCoding.decode(HubStatus.self, from: $0.payload))?.state == .online
        }
        #expect(online != nil, "the hub (user hub-1) never came online: \(hub.text.suffix(2000))")

        let gateway = try Self.client(broker, "gw-entrance", tls: ca)
        try await gateway.connect()
        let seen = MessageCollector(try await gateway.subscribe(to: "#"))
        let entrance = GatewayID(unchecked: "gw-entrance")
        let egypt = GatewayID(unchecked: "gw-egypt")
        let now = Date().timeIntervalSince1970
        func batch(_ gateway: GatewayID, _ seq: UInt64) throws -> [UInt8] {
            try ContractCoding.encode(
                SightingBatch(
                    gateway: gateway, boot: "boot-1", seq: seq, sent: now, clockSynced: true,
                    sightings: [
                        Sighting(t: now, beacon: "ibeacon:e2c56db5-dffb-48d2-b060-d0f5a71096e0:1:1", rssi: -60)
                    ]))
        }
        // On its own topic: garbage, an oversized payload, a batch claiming another gateway; then a good batch.
        try await gateway.publish(Array("not json".utf8), to: topics.sightings(entrance))
        try await gateway.publish([UInt8](repeating: 0x20, count: 300 * 1024), to: topics.sightings(entrance))
        try await gateway.publish(try batch(egypt, 1), to: topics.sightings(entrance))
        // As another gateway, on its topic: the broker drops it.
        try await gateway.publish(try batch(egypt, 1), to: topics.sightings(egypt))
        // Another hub's business: the broker drops it too.
        try await gateway.publish(Array("{}".utf8), to: topics.hubActive)
        try await gateway.publish(try batch(entrance, 1), to: topics.sightings(entrance))

        // The good batch is acknowledged; the gateway reads that acknowledgement and nothing else.
        let ack = await seen.first(within: .seconds(60)) { $0.topic == topics.acknowledgement(entrance) }
        #expect(ack != nil, "no acknowledgement: \(hub.text.suffix(2000))")
        try await Task.sleep(for: .seconds(2))
        #expect(Set(seen.messages.map(\.topic)) == [topics.acknowledgement(entrance)])
        #expect(!sightings.messages.contains { $0.topic == topics.sightings(egypt) }, "published as gw-egypt")

        // The hub counted each refusal, and its database holds only the good batch.
        let counted = await statuses.first(within: .seconds(30)) { message in
            let rejected = (try? ContractCoding.decode(HubStatus.self, from: message.payload))?.ingest?.rejected ?? [:]
            return rejected["malformed"] != nil && rejected["too-large"] != nil && rejected["gateway-mismatch"] != nil
        }
        #expect(
            counted != nil,
            "rejections not counted: \(statuses.messages.last.map { String(decoding: $0.payload, as: UTF8.self) } ?? "")"
        )
        hub.signal(SIGTERM)
        #expect(await hub.waitForExit(timeout: .seconds(15)) == 0)
        let store = try HubStore(readingFrom: directory.appendingPathComponent("hub.db").path)
        let ledger = try await store.database.fetchInteger("SELECT count(*) FROM batches")
        let fromEntrance = try await store.database.fetchInteger(
            "SELECT count(*) FROM batches WHERE gateway = 'gw-entrance' AND seq = 1")
        try store.close()
        #expect(ledger == 1 && fromEntrance == 1)

        // A packet beyond the broker's max_packet_size (1 MiB) ends the sender's connection, not the broker. Sent
        // with mosquitto_pub, which gives up then: our client would resend the queued QoS 1 message at each
        // reconnect (a loop this test hung in once).
        let large = broker.directory.appendingPathComponent("large.bin")
        try Data(repeating: 0x20, count: 2 * 1024 * 1024).write(to: large)
        let pub = Process()
        pub.executableURL = URL(fileURLWithPath: "/usr/bin/mosquitto_pub")
        pub.arguments = [
            "-h", "127.0.0.1", "-p", "\(broker.tlsPort!)", "--cafile", ca.path, "-u", "gw-egypt", "-P",
            Self.users["gw-egypt"]!, "-q", "1", "-t", topics.sightings(egypt), "-f", large.path,
        ]
        pub.standardOutput = FileHandle.nullDevice
        pub.standardError = FileHandle.nullDevice
        try pub.run()
        let deadline = ContinuousClock.now.advanced(by: .seconds(30))
        while pub.isRunning && ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(100)) }
        if pub.isRunning { pub.terminate() }
        #expect(FreePort.accepts(port: broker.port), "the broker went down")
        #expect(broker.logTail.contains("oversize packet"), "\(broker.logTail)")
        #expect(!sightings.messages.contains { $0.payload.count > 1024 * 1024 })
        await gateway.shutdown()
        await observer.shutdown()
        await broker.stop()
    }

    @Test func alertSubscribersReadEventsOnlyAndPublishNothing() async throws {
        let broker = try await Self.productionBroker()
        let ca = try #require(broker.certificates).caFile
        let alerts = try Self.client(broker, "alerts", tls: ca)
        try await alerts.connect()
        let received = MessageCollector(try await alerts.subscribe(to: "#"))
        let hub = try Self.client(broker, "hub-2", tls: ca)
        try await hub.connect()
        let hubSees = MessageCollector(try await hub.subscribe(to: topics.allEvents))
        let gateway = try Self.client(broker, "gw-entrance", tls: ca)
        try await gateway.connect()

        try await alerts.publish(Array("forged".utf8), to: topics.events(.exit))
        try await gateway.publish(Array("a batch".utf8), to: topics.sightings(GatewayID(unchecked: "gw-entrance")))
        try await hub.publish(Array("real".utf8), to: topics.events(.enter))
        let event = await received.first(within: .seconds(30)) { $0.topic == topics.events(.enter) }
        #expect(event?.text == "real")
        try await Task.sleep(for: .seconds(1))
        #expect(received.messages.map(\.topic) == [topics.events(.enter)], "alerts read only events")
        #expect(hubSees.messages.map(\.text) == ["real"], "the alerts user's publish was dropped")
        for client in [alerts, hub, gateway] { await client.shutdown() }
        await broker.stop()
    }
}

extension BrokerSecurityTests {
    /// scripts/provision-gateway.sh end to end: the CA, broker certificate and password file it makes run the shipped
    /// broker configuration, and a real agent started from its bundle (agent.yaml, password, CA; only the Pi's paths
    /// and the port moved to the test's) connects over TLS as its gateway and publishes what the hub's user reads.
    @Test func aProvisionedGatewayConnectsOverTLSWithItsBundle() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("provision-\(UUID())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        func path(_ name: String) -> String { directory.appendingPathComponent(name).path }
        func bash(_ arguments: [String]) async throws -> (status: Int32, output: String) {
            let child = try ChildProcess.spawn("/bin/bash", arguments, output: path("bash-\(UUID()).log"))
            guard let status = try await child.exit(within: .seconds(180)) else {
                child.signal(SIGKILL)
                return (-1, "still running after 180 s, killed: \(child.output)")
            }
            return (status, child.output)
        }
        let script = Self.root.appendingPathComponent("scripts/provision-gateway.sh").path
        let provision = [
            script, "--gateway", "gw-entrance", "--site", "museum", "--broker", "localhost", "--out", path("bundle"),
            "--passwd-file", path("passwd"), "--ca-dir", path("ca"),
        ]
        let made = try await bash(provision)
        try #require(made.status == 0, "\(made.output)")
        // The hub's user, added by hand as operations.md says.
        let hubUser = try await bash(["-c", "mosquitto_passwd -b \"$0\" hub-1 hub-secret-3", path("passwd")])
        try #require(hubUser.status == 0, "\(hubUser.output)")

        var options = MosquittoBroker.Options()
        options.productionConfig = Self.root.appendingPathComponent("deploy/mosquitto/beacontracker.conf")
        options.productionACL = Self.root.appendingPathComponent("deploy/mosquitto/beacontracker.acl")
        options.provisioned = MosquittoBroker.Options.Provisioned(
            caFile: URL(fileURLWithPath: path("ca/ca.crt")), certFile: URL(fileURLWithPath: path("ca/broker.crt")),
            keyFile: URL(fileURLWithPath: path("ca/broker.key")), passwordFile: URL(fileURLWithPath: path("passwd")))
        let broker = try MosquittoBroker(options: options)
        try await broker.start()
        let hub = try Self.client(broker, "hub-1")
        try await hub.connect()
        let received = MessageCollector(try await hub.subscribe(to: "beacontracker/museum/gateways/gw-entrance/#"))

        let agentYAML = try String(contentsOfFile: path("bundle/agent.yaml"), encoding: .utf8)
            .replacingOccurrences(of: "port: 8883", with: "port: \(try #require(broker.tlsPort))")
            .replacingOccurrences(
                of: "/run/credentials/beacon-agent.service/mqtt-password", with: path("bundle/mqtt-password")
            )
            .replacingOccurrences(of: "/etc/beacontracker/ca.pem", with: path("bundle/ca.pem"))
            .replacingOccurrences(of: "/var/lib/beacon-agent/outbox.db", with: path("outbox.db"))
        try agentYAML.write(toFile: path("agent.yaml"), atomically: true, encoding: .utf8)
        var writer = BTSnoopWriter()
        let data = try #require(
            AdvertisementEncoder.advertisingData(
                beacon: "ibeacon:e2c56db5-dffb-48d2-b060-d0f5a71096e0:1:7", txPower: -59))
        for tick in 0..<20 {
            writer.appendEvent(
                BTSnoopWriter.advertisingReportEvent(address: [0xC4, 1, 2, 3, 4, 7], rssi: -60, data: data),
                at: Date().timeIntervalSince1970 + Double(tick) / 10)
        }
        try Data(writer.bytes).write(to: URL(fileURLWithPath: path("capture.btsnoop")))
        let agent = try Programs.Running(
            "beacon-agent",
            ["replay", path("capture.btsnoop"), "--config", path("agent.yaml"), "--speed", "0", "--drain-timeout", "5"])
        let batch = await received.first(within: .seconds(60)) { $0.topic.hasSuffix("/sightings") }
        let sent = try #require(batch, "no batch from the provisioned agent: \(agent.text.suffix(1500))")
        let decoded = try ContractCoding.decode(SightingBatch.self, from: sent.payload)
        #expect(decoded.gateway == "gw-entrance" && !decoded.sightings.isEmpty)
        #expect(await received.first(within: .seconds(30)) { $0.topic.hasSuffix("/status") } != nil)
        _ = await agent.waitForExit(timeout: .seconds(30))
        #expect(agent.text.contains("MQTT connected"), "\(agent.text.suffix(1500))")

        // A second run for the same bundle refuses to overwrite it without --force.
        let again = try await bash(provision)
        #expect(again.status != 0 && again.output.contains("--force"), "\(again.output)")
        await hub.shutdown()
        await broker.stop()
    }
}
