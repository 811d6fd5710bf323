import ArgumentParser
import BeaconMQTT
import BeaconModel
import BrokerTestSupport
import Foundation
import Synchronization

/// `beacon-bench hub`: the live hub (`beacon-hub run`, release, a child process) against a real mosquitto.
///
/// 1. Ingest: the same stream of sighting batches (100 sightings each) read by a bare libmosquitto subscriber that
///    only counts messages, then by the hub, which decodes, validates, deduplicates, runs the zone engine and
///    acknowledges; sightings/s of each, from the first publish to the last message (baseline) or to the last
///    acknowledgement (hub).
/// 2. Steady load: 100 gateways × 10,000 tags heard by 6 gateways each at 1 Hz (60,000 sightings/s), paced in real
///    time; the hub's CPU and memory.
struct HubBench: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "hub", abstract: "The live hub: ingest beside a bare subscriber, CPU and memory under load.")

    @Option(help: "Tags in the venue.")
    var tags = 10_000

    @Option(help: "Gateways (a square grid of rooms, one gateway each).")
    var gateways = 100

    @Option(help: "Gateways that hear each tag.")
    var heardBy = 6

    @Option(help: "Seconds of data in the ingest stream.")
    var burstSeconds = 10

    @Option(help: "Seconds of steady load.")
    var seconds = 30

    @Option(help: "Ingest rounds (baseline and hub alternate).")
    var rounds = 2

    static let uuid = "e2c56db5-dffb-48d2-b060-d0f5a71096e0"

    func run() async throws {
        let broker = try MosquittoBroker()
        try await broker.start()
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("hub-bench-\(UUID())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let side = Int(Double(gateways).squareRoot().rounded(.up))
        let gatewayIDs = (0..<gateways).map { GatewayID(rawValue: "gw-\($0)")! }
        try venue(side: side).write(
            to: directory.appendingPathComponent("venue.yaml"), atomically: true, encoding: .utf8)
        let config = directory.appendingPathComponent("hub.yaml").path
        try """
        hub: bench
        site: bench
        venue: venue.yaml
        mqtt: { host: 127.0.0.1, port: \(broker.port) }
        regions: [{ id: all, ibeacon: { uuid: \(Self.uuid) } }]
        live: { statusSeconds: 1, heartbeatSeconds: 600 }
        """.write(toFile: config, atomically: true, encoding: .utf8)

        // Who hears whom: each tag in a random room, heard by the `heardBy` nearest gateways.
        var generator = SystemRandomNumberGenerator()
        let hearing: [[(gateway: Int, rssi: Int)]] = (0..<tags).map { _ in
            let x = Double.random(in: 0..<Double(side * 10), using: &generator)
            let y = Double.random(in: 0..<Double(side * 10), using: &generator)
            return (0..<gateways).map { g -> (Int, Double) in
                let gx = Double(g % side) * 10 + 5
                let gy = Double(g / side) * 10 + 5
                return (g, ((gx - x) * (gx - x) + (gy - y) * (gy - y) + 1.5).squareRoot())
            }.sorted { $0.1 < $1.1 }.prefix(heardBy).map { ($0.0, Int(-59 - 20 * log10($0.1))) }
        }
        var byGateway = [[(tag: Int, rssi: Int)]](repeating: [], count: gateways)
        for (tag, heard) in hearing.enumerated() {
            for reading in heard { byGateway[reading.gateway].append((tag, reading.rssi)) }
        }
        /// One second of a gateway's sightings at `t`, as batches of 100.
        func batches(_ g: Int, at t: Double, boot: String, firstSeq: UInt64) -> [SightingBatch] {
            let sightings = byGateway[g].enumerated().map { index, reading in
                Sighting(
                    t: t + Double(index) / Double(max(byGateway[g].count, 1)),
                    beacon: "ibeacon:\(Self.uuid):\(reading.tag / 65536 + 1):\(reading.tag % 65536)",
                    rssi: reading.rssi + Int.random(in: -3...3), txPower: -59)
            }
            return stride(from: 0, to: sightings.count, by: 100).enumerated().map { index, start in
                SightingBatch(
                    gateway: gatewayIDs[g], boot: boot, seq: firstSeq + UInt64(index), sent: t + 1, clockSynced: true,
                    sightings: Array(sightings[start..<min(start + 100, sightings.count)]))
            }
        }
        /// The ingest stream: `burstSeconds` of every gateway, interleaved by time, ending now; fresh boots.
        func stream() throws -> (messages: [(String, [UInt8])], sightings: Int, last: [GatewayID: (String, UInt64)]) {
            let end = Date().timeIntervalSince1970 - 2
            var messages: [(String, [UInt8])] = []
            var sightings = 0
            var last: [GatewayID: (String, UInt64)] = [:]
            let boots = gatewayIDs.map { _ in UUID().uuidString.lowercased() }
            var seq = [UInt64](repeating: 1, count: gateways)
            for second in 0..<burstSeconds {
                let t = end - Double(burstSeconds - second)
                for g in 0..<gateways {
                    for batch in batches(g, at: t, boot: boots[g], firstSeq: seq[g]) {
                        messages.append(
                            (
                                "beacontracker/bench/gateways/\(gatewayIDs[g])/sightings",
                                try ContractCoding.encode(batch)
                            ))
                        sightings += batch.sightings.count
                        seq[g] = batch.seq + 1
                        last[gatewayIDs[g]] = (boots[g], batch.seq)
                    }
                }
            }
            return (messages, sightings, last)
        }

        let publisher = try MQTTClient(
            configuration: MQTTConfiguration(
                host: broker.host, port: broker.port, clientID: "bench-gateways", maximumInflightMessages: 200))
        try await publisher.connect()
        let acks = try AckWatcher(broker: broker)
        try await acks.start()

        let binary = CommandLine.arguments[0].replacingOccurrences(of: "beacon-bench", with: "beacon-hub")
        let hub = Process()
        hub.executableURL = URL(fileURLWithPath: binary)
        hub.arguments = ["run", "--config", config, "--log-level", "warning"]
        hub.standardOutput = FileHandle.nullDevice
        hub.standardError = FileHandle.nullDevice
        try hub.run()
        defer { if hub.isRunning { kill(hub.processIdentifier, SIGKILL) } }
        let pid = hub.processIdentifier
        guard await acks.waitForHubOnline(within: .seconds(30)) else {
            print("beacon-bench hub: the hub did not come online")
            throw ExitCode(1)
        }
        try await Task.sleep(for: .seconds(2))
        let idleRSS = ProcessStats.rssMiB(pid)
        print(
            "beacon-bench hub: \(tags) tags × \(gateways) gateways, each tag heard by \(heardBy) at 1 Hz "
                + "(\(tags * heardBy) sightings/s); batches of 100; mosquitto on 127.0.0.1:\(broker.port)")
        print(String(format: "hub idle: RSS %.1f MiB (venue loaded, no tag met yet)", idleRSS))

        // 1. Ingest, baseline and hub alternating.
        var ratios: [Double] = []
        for round in 1...max(rounds, 1) {
            let baselineStream = try stream()
            let counter = try await MessageCounter(broker: broker, filter: "beacontracker/bench/gateways/+/sightings")
            let start = ContinuousClock.now
            for (topic, payload) in baselineStream.messages { try publisher.send(payload, to: topic) }
            await counter.wait(for: baselineStream.messages.count, within: .seconds(300))
            let baselineSeconds = (counter.lastArrival - start).seconds
            let baselineRate = Double(baselineStream.sightings) / baselineSeconds
            await counter.stop()

            let hubStream = try stream()
            let ticksBefore = ProcessStats.cpuTicks(pid)
            let hubStart = ContinuousClock.now
            for (topic, payload) in hubStream.messages { try publisher.send(payload, to: topic) }
            let done = await acks.wait(for: hubStream.last, within: .seconds(600))
            let hubSeconds = (ContinuousClock.now - hubStart).seconds
            let hubRate = Double(hubStream.sightings) / hubSeconds
            let cpu =
                (ProcessStats.cpuTicks(pid) - ticksBefore) / Double(sysconf(Int32(_SC_CLK_TCK))) / hubSeconds * 100
            ratios.append(hubRate / baselineRate)
            print(
                String(
                    format:
                        "ingest round %d: %d batches, %d sightings — bare subscriber %.0f sightings/s (%.2f s); "
                        + "hub to last acknowledgement %.0f sightings/s (%.2f s, CPU %.0f %% of a core)%@; ratio %.2f",
                    round, hubStream.messages.count, hubStream.sightings, baselineRate, baselineSeconds, hubRate,
                    hubSeconds, cpu, done ? "" : " NOT ALL ACKNOWLEDGED", hubRate / baselineRate))
        }

        // 2. Steady load at the real rate.
        var seq = [UInt64](repeating: 1, count: gateways)
        let boots = gatewayIDs.map { _ in UUID().uuidString.lowercased() }
        var last: [GatewayID: (String, UInt64)] = [:]
        var published = 0
        let ticksPerSecond = Double(sysconf(Int32(_SC_CLK_TCK)))
        let startTicks = ProcessStats.cpuTicks(pid)
        let start = ContinuousClock.now
        var peakRSS = 0.0
        var late = 0
        for second in 0..<seconds {
            let due = start.advanced(by: .seconds(second))
            if ContinuousClock.now < due { try await Task.sleep(until: due) } else if second > 0 { late += 1 }
            let t = Date().timeIntervalSince1970
            for g in 0..<gateways {
                for batch in batches(g, at: t - 1, boot: boots[g], firstSeq: seq[g]) {
                    try publisher.send(
                        try ContractCoding.encode(batch), to: "beacontracker/bench/gateways/\(gatewayIDs[g])/sightings")
                    published += batch.sightings.count
                    seq[g] = batch.seq + 1
                    last[gatewayIDs[g]] = (boots[g], batch.seq)
                }
            }
            peakRSS = max(peakRSS, ProcessStats.rssMiB(pid))
        }
        let loadSeconds = (ContinuousClock.now - start).seconds
        let cpu = (ProcessStats.cpuTicks(pid) - startTicks) / ticksPerSecond / loadSeconds * 100
        let caughtUpStart = ContinuousClock.now
        let caughtUp = await acks.wait(for: last, within: .seconds(120))
        let lag = (ContinuousClock.now - caughtUpStart).seconds
        peakRSS = max(peakRSS, ProcessStats.rssMiB(pid))
        let hwm = ProcessStats.rssMiB(pid, field: "VmHWM")
        print(
            String(
                format:
                    "steady load %d s: published %.0f sightings/s (%d of %d seconds started late); hub CPU %.0f %% of "
                    + "one core (%.0f %% of the machine's %d); RSS peak %.1f MiB (VmHWM %.1f, idle %.1f); %@",
                seconds, Double(published) / loadSeconds, late, seconds, cpu,
                cpu / Double(ProcessInfo.processInfo.activeProcessorCount),
                ProcessInfo.processInfo.activeProcessorCount, peakRSS, hwm, idleRSS,
                caughtUp ? String(format: "all acknowledged %.1f s after the last publish", lag) : "NOT CAUGHT UP"))
        print(
            String(
                format: "ingest ratio hub / bare subscriber, per round: %@",
                ratios.map { String(format: "%.2f", $0) }.joined(separator: ", ")))
        kill(pid, SIGTERM)
        while hub.isRunning { try await Task.sleep(for: .milliseconds(20)) }
        await acks.stop()
        await publisher.shutdown()
        await broker.stop()
    }

    /// A square grid of 10 × 10 m rooms, one gateway in the middle of each, doors between neighbours.
    func venue(side: Int) -> String {
        var zones: [String] = []
        var doors = ["  - { between: [outside, r0], at: [5, 0] }"]
        var gatewayLines: [String] = []
        for g in 0..<gateways {
            let (x, y) = (g % side, g / side)
            zones.append("  - { id: r\(g), rect: { x: \(x * 10), y: \(y * 10), width: 10, height: 10 } }")
            gatewayLines.append("  - { id: gw-\(g), zone: r\(g), position: [\(x * 10 + 5), \(y * 10 + 5)] }")
            if x + 1 < side && g + 1 < gateways {
                doors.append("  - { between: [r\(g), r\(g + 1)], at: [\(x * 10 + 10), \(y * 10 + 5)] }")
            }
            if g + side < gateways {
                doors.append("  - { between: [r\(g), r\(g + side)], at: [\(x * 10 + 5), \(y * 10 + 10)] }")
            }
        }
        return "site: bench\nzones:\n" + zones.joined(separator: "\n") + "\ndoors:\n" + doors.joined(separator: "\n")
            + "\ngateways:\n" + gatewayLines.joined(separator: "\n") + "\n"
    }
}

/// Counts messages on a filter; remembers when the last arrived.
final class MessageCounter: Sendable {
    let client: MQTTClient
    private let state = Mutex((count: 0, last: ContinuousClock.now))
    private let task: Mutex<Task<Void, Never>?> = Mutex(nil)

    init(broker: MosquittoBroker, filter: String) async throws {
        client = try MQTTClient(
            configuration: MQTTConfiguration(
                host: broker.host, port: broker.port, clientID: "bench-bare-\(UUID().uuidString.prefix(6))",
                subscriptionBufferSize: 1_000_000))
        try await client.connect()
        let subscription = try await client.subscribe(to: filter)
        let task = Task { [self] in
            for await _ in subscription {
                state.withLock {
                    $0.count += 1
                    $0.last = ContinuousClock.now
                }
            }
        }
        self.task.withLock { $0 = task }
    }

    var lastArrival: ContinuousClock.Instant { state.withLock { $0.last } }

    func wait(for count: Int, within timeout: Duration) async {
        let deadline = ContinuousClock.now.advanced(by: timeout)
        while state.withLock({ $0.count }) < count && ContinuousClock.now < deadline {
            try? await Task.sleep(for: .milliseconds(5))
        }
    }

    func stop() async {
        task.withLock { $0?.cancel() }
        await client.shutdown()
    }
}

/// Follows the hub's acknowledgements and status.
final class AckWatcher: Sendable {
    let client: MQTTClient
    private let state = Mutex((acks: [GatewayID: [String: UInt64]](), online: false))
    private let tasks: Mutex<[Task<Void, Never>]> = Mutex([])

    init(broker: MosquittoBroker) throws {
        client = try MQTTClient(
            configuration: MQTTConfiguration(
                host: broker.host, port: broker.port, clientID: "bench-acks", subscriptionBufferSize: 1_000_000))
    }

    func start() async throws {
        try await client.connect()
        let acks = try await client.subscribe(to: "beacontracker/bench/gateways/+/ack")
        let status = try await client.subscribe(to: "beacontracker/bench/hub/status")
        let a = Task { [self] in
            for await message in acks {
                guard let ack = try? ContractCoding.decode(Acknowledgement.self, from: message.payload) else {
                    continue
                }
                state.withLock { state in
                    for entry in ack.acks { state.acks[ack.gateway, default: [:]][entry.boot] = entry.seq }
                }
            }
        }
        let s = Task { [self] in
            for await message in status where message.text.contains("\"online\"") {
                state.withLock { $0.online = true }
            }
        }
        tasks.withLock { $0 = [a, s] }
    }

    func waitForHubOnline(within timeout: Duration) async -> Bool {
        let deadline = ContinuousClock.now.advanced(by: timeout)
        while !state.withLock({ $0.online }) && ContinuousClock.now < deadline {
            try? await Task.sleep(for: .milliseconds(20))
        }
        return state.withLock { $0.online }
    }

    /// Waits until every gateway's acknowledgement reaches its last sequence.
    func wait(for last: [GatewayID: (String, UInt64)], within timeout: Duration) async -> Bool {
        let deadline = ContinuousClock.now.advanced(by: timeout)
        while ContinuousClock.now < deadline {
            let done = state.withLock { state in
                last.allSatisfy { gateway, entry in (state.acks[gateway]?[entry.0] ?? 0) >= entry.1 }
            }
            if done { return true }
            try? await Task.sleep(for: .milliseconds(5))
        }
        return false
    }

    func stop() async {
        tasks.withLock { $0.forEach { $0.cancel() } }
        await client.shutdown()
    }
}
