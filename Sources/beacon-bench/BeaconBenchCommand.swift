import ArgumentParser
import BeaconMQTT
import BrokerTestSupport
import Foundation
import Synchronization

/// Benchmarks that print figures, each beside a baseline measured in the same run (machines here are noisy, so
/// ratios matter more than absolute numbers). Not part of the test suite: `make bench`.
@main
struct BeaconBenchCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "beacon-bench",
        abstract: "BeaconTracker benchmarks: print figures with a same-run baseline.",
        subcommands: [
            MQTTBench.self, DecodeBench.self, BatchDecodeBench.self, AgentBench.self, EngineBench.self, HubBench.self,
            StoreBench.self, SitesBench.self, InstructionsBench.self,
        ],
        defaultSubcommand: MQTTBench.self
    )
}

struct MQTTBench: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "mqtt",
        abstract: "BeaconMQTT on loopback against a real mosquitto: round trip, QoS 1/0 publish rate, receive rate.")

    @Option(help: "Messages per throughput run.")
    var messages = 20_000

    @Option(help: "Payload bytes per message.")
    var payloadBytes = 200

    @Option(help: "Round trips to time.")
    var roundTrips = 2_000

    @Option(help: "Publishes in flight at once in the windowed runs.")
    var window = 100

    func run() async throws {
        let broker = try MosquittoBroker()
        try await broker.start()
        let payload = [UInt8](repeating: UInt8(ascii: "x"), count: payloadBytes)
        print("beacon-bench mqtt: mosquitto on 127.0.0.1:\(broker.port), \(payloadBytes)-byte payloads")

        let publisher = try client(broker, "bench-pub")
        let subscriber = try client(broker, "bench-sub")
        try await publisher.connect()
        try await subscriber.connect()

        // Round trip: publish QoS 1, wait until our own subscription delivers it.
        let echo = try await subscriber.subscribe(to: "bench/rt")
        var iterator = echo.makeAsyncIterator()
        var latencies: [Double] = []
        for _ in 0..<roundTrips {
            let start = ContinuousClock.now
            try await publisher.publish(payload, to: "bench/rt", qos: .atLeastOnce)
            _ = await iterator.next()
            latencies.append((ContinuousClock.now - start).seconds * 1e6)
        }
        latencies.sort()
        print(
            String(
                format: "round trip QoS 1 (publish → PUBACK → delivery), %d runs: p50 %.0f µs, p99 %.0f µs",
                roundTrips, latencies[latencies.count / 2], latencies[latencies.count * 99 / 100]))

        let sequential = try await rate(messages / 4) { _ in
            try await publisher.publish(payload, to: "bench/seq", qos: .atLeastOnce)
        }
        print(String(format: "QoS 1 publish, one at a time (await each PUBACK): %8.0f msg/s", sequential))

        let qos1 = try await windowedRate(publisher, payload, topic: "bench/q1", qos: .atLeastOnce)
        let qos0 = try await windowedRate(publisher, payload, topic: "bench/q0", qos: .atMostOnce)
        let baseline1 = try await mosquittoPubRate(broker, payload, qos: 1)
        let baseline0 = try await mosquittoPubRate(broker, payload, qos: 0)
        print(
            String(
                format:
                    "QoS 1 publish, %d in flight: %8.0f msg/s | mosquitto_pub -q 1 -l (baseline): %8.0f msg/s | ratio %.2f",
                window, qos1, baseline1, qos1 / baseline1))
        print(
            String(
                format:
                    "QoS 0 publish, %d in flight: %8.0f msg/s | mosquitto_pub -q 0 -l (baseline): %8.0f msg/s | ratio %.2f",
                window, qos0, baseline0, qos0 / baseline0))

        // Receive: everything a windowed QoS 1 publisher sends must arrive at one subscriber.
        let inbox = try await subscriber.subscribe(to: "bench/rx", qos: .atLeastOnce)
        let received = Task {
            var count = 0
            for await _ in inbox {
                count += 1
                if count == messages { break }
            }
            return count
        }
        let start = ContinuousClock.now
        _ = try await windowedRate(publisher, payload, topic: "bench/rx", qos: .atLeastOnce)
        let count = await received.value
        let seconds = (ContinuousClock.now - start).seconds
        print(
            String(
                format: "QoS 1 end to end (publish → subscriber), %d messages: %8.0f msg/s, %d received, %d dropped",
                messages, Double(count) / seconds, count, subscriber.droppedMessages))

        await publisher.shutdown()
        await subscriber.shutdown()
        await broker.stop()
    }

    func client(_ broker: MosquittoBroker, _ id: String) throws -> MQTTClient {
        try MQTTClient(
            configuration: MQTTConfiguration(
                host: broker.host, port: broker.port, clientID: id, maximumInflightMessages: window))
    }

    func rate(_ count: Int, _ body: (Int) async throws -> Void) async throws -> Double {
        let start = ContinuousClock.now
        for index in 0..<count { try await body(index) }
        return Double(count) / (ContinuousClock.now - start).seconds
    }

    /// Publishes `messages` keeping `window` publishes awaiting completion.
    func windowedRate(
        _ client: MQTTClient, _ payload: [UInt8], topic: String, qos: MQTTQoS
    ) async throws -> Double {
        let start = ContinuousClock.now
        try await withThrowingTaskGroup(of: Void.self) { group in
            for index in 0..<messages {
                if index >= window { try await group.next() }
                group.addTask { try await client.publish(payload, to: topic, qos: qos) }
            }
            try await group.waitForAll()
        }
        return Double(messages) / (ContinuousClock.now - start).seconds
    }

    /// libmosquitto's own command-line client publishing one message per stdin line, timed from start to exit.
    func mosquittoPubRate(_ broker: MosquittoBroker, _ payload: [UInt8], qos: Int) async throws -> Double {
        let input = FileManager.default.temporaryDirectory.appendingPathComponent("bench-\(UUID()).txt")
        let line = String(decoding: payload, as: UTF8.self) + "\n"
        try String(repeating: line, count: messages).write(to: input, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(at: input) }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/mosquitto_pub")
        process.arguments = ["-h", broker.host, "-p", "\(broker.port)", "-q", "\(qos)", "-t", "bench/base", "-l"]
        process.standardInput = try FileHandle(forReadingFrom: input)
        let start = ContinuousClock.now
        try process.run()
        while process.isRunning { try await Task.sleep(for: .milliseconds(1)) }
        return Double(messages) / (ContinuousClock.now - start).seconds
    }
}

extension Duration {
    var seconds: Double {
        let (seconds, attoseconds) = components
        return Double(seconds) + Double(attoseconds) / 1e18
    }
}
