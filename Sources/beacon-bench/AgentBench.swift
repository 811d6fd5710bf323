import ArgumentParser
import BeaconDecoding
import BeaconMQTT
import BeaconModel
import BrokerTestSupport
import Foundation
import Synchronization

struct AgentBench: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "agent",
        abstract:
            "The agent's CPU and memory while replaying N advertisements/s through a real broker, beside the idle agent."
    )

    @Option(help: "Advertisements per second in the capture.")
    var rate = 1_000

    @Option(help: "Seconds of capture (and of the idle baseline).")
    var seconds = 20

    @Option(
        help: """
            Non-beacon adverts per second beside the beacons (phones, watches, headphones, scan responses): with it, \
            the capture is a shop's air, --rate beacon adverts/s of 200 tags among them (1,000 + 5,000).
            """)
    var noise = 0

    @Option(
        help:
            "The agent's scanner.sliceMs: the replay's slices (the live reader's pause), milliseconds (default: the agent's own)."
    )
    var sliceMs: Double?

    @Option(help: "The agent's batch.maxSightings (default: the agent's own).")
    var maxSightings: Int?

    @Option(help: "The agent's batch.maxDelaySeconds (default: the agent's own).")
    var maxDelay: Double?

    func run() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("agent-bench-\(UUID())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let broker = try MosquittoBroker()
        try await broker.start()
        let acknowledger = try await Acknowledger(broker: broker)

        var writer = BTSnoopWriter()
        if noise > 0 {
            for (offset, event) in ShopMix.events(beacons: rate, noise: noise, seconds: seconds) {
                writer.appendEvent(event, at: 1_700_000_000 + offset)
            }
        } else {
            let events = AdvertisementMix.events(rate * seconds)
            for (index, event) in events.enumerated() {
                writer.appendEvent(event, at: 1_700_000_000 + Double(index) / Double(rate))
            }
        }
        let capture = directory.appendingPathComponent("bench.btsnoop").path
        try Data(writer.bytes).write(to: URL(fileURLWithPath: capture))
        let config = directory.appendingPathComponent("agent.yaml").path
        try """
        gateway: gw-bench
        site: bench
        mqtt: { host: 127.0.0.1, port: \(broker.port) }
        outbox: { path: \(directory.path)/outbox.db }
        \(sliceMs.map { "scanner: { sliceMs: \($0) }" } ?? "")
        \(batchSettings)
        """.write(toFile: config, atomically: true, encoding: .utf8)

        let binary = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
            .appendingPathComponent("beacon-agent").path
        guard FileManager.default.isExecutableFile(atPath: binary) else {
            throw ValidationError("build beacon-agent beside beacon-bench first (swift build -c release)")
        }
        print(
            "beacon-bench agent: \(rate) adverts/s"
                + (noise > 0 ? " of 200 tags among \(noise) non-beacon adverts/s (a shop)" : " (8-payload mix)")
                + " for \(seconds) s through mosquitto, acknowledged by a test hub each 0.5 s (as the hub does); "
                + (sliceMs.map { "slices of \($0) ms" } ?? "the agent's own slices (scanner.sliceMs)")
                + (batchSettings.isEmpty ? "" : "; \(batchSettings)"))
        let idle = try await sample(binary, ["run", "--no-scan", "--config", config], seconds: seconds)
        let busy = try await sample(
            binary, ["replay", capture, "--config", config, "--speed", "1", "--drain-timeout", "10"],
            seconds: seconds)
        print(
            String(
                format:
                    "idle agent (baseline):  CPU %5.1f %% of one core, RSS max %6.1f MiB (own %4.1f, program file %4.1f)",
                idle.cpu, idle.rss, idle.anonymous, idle.rss - idle.anonymous))
        print(
            String(
                format:
                    "replaying %5d adv/s:   CPU %5.1f %% of one core, RSS max %6.1f MiB (own %4.1f, program file %4.1f)"
                    + " | CPU +%.1f points, RSS ×%.2f",
                rate + noise, busy.cpu, busy.rss, busy.anonymous, busy.rss - busy.anonymous, busy.cpu - idle.cpu,
                busy.rss / idle.rss))
        print("sightings acknowledged: \(acknowledger.sightings) in \(acknowledger.batches) batches")
        await acknowledger.stop()
        await broker.stop()
    }

    /// The `batch:` section when an option sets it.
    var batchSettings: String {
        let keys = [maxSightings.map { "maxSightings: \($0)" }, maxDelay.map { "maxDelaySeconds: \($0)" }]
        let set = keys.compactMap { $0 }
        return set.isEmpty ? "" : "batch: { \(set.joined(separator: ", ")) }"
    }

    /// Runs the program for `seconds`, sampling /proc every 250 ms; CPU is averaged over the run after start-up. RSS
    /// is at its largest sample, with the part of it that is the program's own memory (`RssAnon`, anonymous pages:
    /// heap, stacks) rather than pages of the program file mapped from the page cache (`RssFile`, clean and shared).
    func sample(
        _ binary: String, _ arguments: [String], seconds: Int
    ) async throws -> (cpu: Double, rss: Double, anonymous: Double) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: binary)
        process.arguments = arguments
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        let pid = process.processIdentifier
        try await Task.sleep(for: .seconds(1))  // start-up is not steady state
        let ticksPerSecond = Double(sysconf(Int32(_SC_CLK_TCK)))
        let startTicks = ProcessStats.cpuTicks(pid)
        let start = ContinuousClock.now
        var maxRSS = 0.0
        var anonymous = 0.0
        while (ContinuousClock.now - start) < .seconds(seconds - 1) && process.isRunning {
            let rss = ProcessStats.rssMiB(pid)
            if rss >= maxRSS {
                maxRSS = rss
                anonymous = ProcessStats.rssMiB(pid, field: "RssAnon")
            }
            try await Task.sleep(for: .milliseconds(250))
        }
        let cpu =
            (ProcessStats.cpuTicks(pid) - startTicks) / ticksPerSecond / (ContinuousClock.now - start).seconds * 100
        kill(pid, SIGTERM)
        while process.isRunning { try await Task.sleep(for: .milliseconds(20)) }
        return (cpu, maxRSS, anonymous)
    }
}

/// Acknowledges every batch (highest contiguous sequence per boot) as the hub does: each gateway whose batches moved
/// gets one retained acknowledgement per tick (the hub's `live.tickSeconds`, 0.5 s by default), not one per batch.
final class Acknowledger: Sendable {
    let client: MQTTClient
    private let state = Mutex(
        (tracker: AcknowledgementTracker(), sightings: 0, batches: 0, due: Set<GatewayID>()))
    private let tasks: Mutex<[Task<Void, Never>]> = Mutex([])

    init(broker: MosquittoBroker, tickSeconds: Double = 0.5) async throws {
        client = try MQTTClient(
            configuration: MQTTConfiguration(
                host: broker.host, port: broker.port, clientID: "bench-hub", cleanSession: false))
        try await client.connect()
        let topics = Topics(site: "bench")
        let subscription = try await client.subscribe(to: topics.allSightings)
        let reader = Task { [weak self] in
            for await message in subscription { self?.record(message) }
        }
        let ticker = Task { [weak self, client] in
            while !Task.isCancelled {
                try? await Task.sleep(for: .seconds(tickSeconds))
                guard let acks = self?.takeDue() else { return }
                for ack in acks {
                    guard let payload = try? ContractCoding.encode(ack) else { continue }
                    try? await client.publish(payload, to: topics.acknowledgement(ack.gateway), retain: true)
                }
            }
        }
        tasks.withLock { $0 = [reader, ticker] }
    }

    /// Records a batch once.
    private func record(_ message: MQTTMessage) {
        guard let batch = try? ContractCoding.decode(SightingBatch.self, from: message.payload) else { return }
        state.withLock { state in
            if state.tracker.record(boot: batch.boot, seq: batch.seq) {
                state.sightings += batch.sightings.count
                state.batches += 1
            }
            state.due.insert(batch.gateway)
        }
    }

    /// The acknowledgements due this tick.
    private func takeDue() -> [Acknowledgement] {
        state.withLock { state in
            defer { state.due.removeAll() }
            let now = Date().timeIntervalSince1970
            return state.due.map { Acknowledgement(gateway: $0, t: now, acks: state.tracker.entries) }
        }
    }

    var sightings: Int { state.withLock { $0.sightings } }
    var batches: Int { state.withLock { $0.batches } }

    func stop() async {
        await client.shutdown()
        for task in tasks.withLock({ $0 }) { task.cancel() }
    }
}
