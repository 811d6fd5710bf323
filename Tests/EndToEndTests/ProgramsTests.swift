import BeaconMQTT
import BeaconModel
import BrokerTestSupport
import Foundation
import Testing

/// The built programs against a real mosquitto: what an operator sees.
@Suite(.timeLimit(.minutes(2)))
struct ProgramsTests {
    /// Deleted with the suite's instance, which Swift Testing drops once the test has ended, pass or fail.
    let temporaryDirectory: TemporaryDirectory
    var directory: URL { temporaryDirectory.url }

    init() throws {
        temporaryDirectory = try TemporaryDirectory(prefix: "e2e")
    }

    func write(_ name: String, _ text: String) throws -> String {
        let path = directory.appendingPathComponent(name).path
        try text.write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    /// The first message decoding to a `T` that satisfies `predicate`, or nil after `timeout`.
    func first<T: Decodable & Sendable>(
        _ type: T.Type, in collector: MessageCollector, within timeout: Duration = .seconds(30),
        where predicate: @escaping @Sendable (T) -> Bool
    ) async -> T? {
        let message = await collector.first(within: timeout) { message in
            (try? ContractCoding.decode(T.self, from: message.payload)).map(predicate) ?? false
        }
        return message.flatMap { try? ContractCoding.decode(T.self, from: $0.payload) }
    }

    @Test(arguments: ["beacon-agent", "beacon-hub", "beacon-sim"])
    func everyProgramAnswersVersionAndHelp(program: String) async throws {
        let version = try await Programs.run(program, ["--version"])
        #expect(version.status == 0)
        #expect(version.output.trimmingCharacters(in: .whitespacesAndNewlines) == BeaconTrackerVersion.current)
        let help = try await Programs.run(program, ["--help"])
        #expect(help.status == 0)
        #expect(help.output.contains("USAGE: \(program)"))
    }

    @Test func wrongConfigExitsNamingFileAndKey() async throws {
        let path = try write("agent.yaml", "gateway: gw-1\nsite: demo\nmqtt:\n  prot: 1883\n")
        let result = try await Programs.run("beacon-agent", ["run", "--config", path])
        #expect(result.status == 78)
        #expect(result.output.contains(path))
        #expect(result.output.contains("mqtt.prot"))
        #expect(result.output.contains("unknown key"))
    }

    /// SIGKILL leaves no chance to say goodbye: the broker must publish the agent's retained last-will.
    @Test func killedAgentLeavesItsLastWill() async throws {
        let broker = try MosquittoBroker()
        try await broker.start()
        let config = try write(
            "gw.yaml",
            "gateway: gw-kill\nsite: e2e\nmqtt: { host: 127.0.0.1, port: \(broker.port) }\n"
                + "outbox: { path: \(directory.path)/outbox.db }\n")
        let (watcher, statuses) = try await watch(broker, "beacontracker/e2e/gateways/gw-kill/status")
        let agent = try Programs.Running("beacon-agent", ["run", "--config", config])
        let online = await first(GatewayStatus.self, in: statuses) { $0.state == .online }
        #expect(online?.gateway == "gw-kill")
        agent.signal(SIGKILL)
        let will = await first(GatewayStatus.self, in: statuses) { $0.state == .offline }
        #expect(will?.reason == "connection lost")
        #expect(will?.boot == online?.boot)
        await watcher.shutdown()
        await broker.stop()
    }

    /// SIGTERM: agent and hub publish "offline, shutdown" themselves and exit 0; the hub saw the agent come and go.
    @Test func agentAndHubStopCleanlyOnSIGTERM() async throws {
        let broker = try MosquittoBroker()
        try await broker.start()
        let mqtt = "mqtt: { host: 127.0.0.1, port: \(broker.port) }"
        _ = try write(
            "venue.yaml",
            "site: e2e\nzones: [{ id: hall, rect: { x: 0, y: 0, width: 10, height: 10 } }]\n"
                + "doors: [{ between: [outside, hall], at: [5, 0] }]\n"
                + "gateways: [{ id: gw-term, zone: hall, position: [5, 5] }]\n")
        let hubConfig = try write("hub.yaml", "hub: hub-e2e\nsite: e2e\nvenue: venue.yaml\n\(mqtt)\n")
        let agentConfig = try write(
            "gw.yaml", "gateway: gw-term\nsite: e2e\n\(mqtt)\noutbox: { path: \(directory.path)/outbox.db }\n")
        let (watcher, statuses) = try await watch(broker, "beacontracker/e2e/#")

        let hub = try Programs.Running("beacon-hub", ["run", "--config", hubConfig])
        #expect(await first(HubStatus.self, in: statuses) { $0.state == .online } != nil)
        let agent = try Programs.Running("beacon-agent", ["run", "--config", agentConfig])
        #expect(await first(GatewayStatus.self, in: statuses) { $0.state == .online } != nil)

        agent.signal(SIGTERM)
        let goodbye = await first(GatewayStatus.self, in: statuses) { $0.state == .offline }
        #expect(goodbye?.reason == "shutdown")
        #expect(await agent.waitForExit() == 0)

        hub.signal(SIGTERM)
        let hubGoodbye = await first(HubStatus.self, in: statuses) { $0.state == .offline }
        #expect(hubGoodbye?.reason == "shutdown")
        #expect(await hub.waitForExit() == 0)
        #expect(hub.text.contains("gateway=gw-term"))
        #expect(hub.text.contains("code=gateway-offline"))
        await watcher.shutdown()
        await broker.stop()
    }
}
