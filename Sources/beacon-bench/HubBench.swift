import ArgumentParser
import BeaconMQTT
import BeaconModel
import BrokerTestSupport
import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// `beacon-bench hub`: the live hub (`beacon-hub run` from the same bin directory, a child process) against a real
/// mosquitto, at 100 gateways × 10,000 tags heard by 6 gateways each at 1 Hz (60,000 sightings/s in 600 batches of
/// 100 a second).
///
/// 1. Steady load, first, on a fresh hub (so its memory is not the leftover of a burst): the load paced in real time,
///    scan times = now; the hub's CPU and RSS, whether its acknowledgements keep up, its `hub/status` ingest counts
///    against what was published.
/// 2. Ingest, in alternating rounds: one pre-encoded stream of `--burst-seconds` of the load (dated in the recent
///    past, each gateway in time order, gateways interleaved by time) sent as fast as a windowed QoS 1 publisher can,
///    first to a bare libmosquitto subscriber that only counts messages (on another site's topics, which the hub does
///    not hear), then to the hub, timed to the last acknowledgement of every gateway. Sightings/s of each and the
///    ratio.
struct HubBench: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "hub",
        abstract: "The live hub through mosquitto: ingest beside a bare subscriber, CPU and memory under steady load.")

    @Option(help: "Tags in the venue.")
    var tags = 10_000

    @Option(help: "Gateways (a square grid of rooms, one gateway each).")
    var gateways = 100

    @Option(help: "Gateways that hear each tag.")
    var heardBy = 6

    @Option(help: "Seconds of steady load (paced in real time).")
    var seconds = 30

    @Option(help: "Seconds of the load in each ingest round's stream (sent as fast as possible).")
    var burstSeconds = 20

    @Option(help: "Ingest rounds (bare subscriber and hub alternate).")
    var rounds = 3

    @Option(help: "QoS 1 publishes in flight at once (libmosquitto's window).")
    var window = 100

    static let uuid = "e2c56db5-dffb-48d2-b060-d0f5a71096e0"
    static let batchSize = 100

    func validate() throws {
        guard tags >= 1, tags <= 65_536 * 65_535 else { throw ValidationError("--tags must be 1…4294901760") }
        guard gateways >= 1 else { throw ValidationError("--gateways must be at least 1") }
        guard heardBy >= 1, heardBy <= gateways else { throw ValidationError("--heard-by must be 1…--gateways") }
        guard seconds >= 1, burstSeconds >= 1, rounds >= 1, window >= 1 else {
            throw ValidationError("--seconds, --burst-seconds, --rounds and --window must be at least 1")
        }
    }

    func run() async throws {
        let binary = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
            .appendingPathComponent("beacon-hub").path
        guard FileManager.default.isExecutableFile(atPath: binary) else {
            throw ValidationError("build beacon-hub beside beacon-bench first (swift build -c release)")
        }
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("hub-bench-\(UUID())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let broker = try MosquittoBroker()
        try await broker.start()

        let side = Int(Double(gateways).squareRoot().rounded(.up))
        try Self.venue(side: side, gateways: gateways).write(
            to: directory.appendingPathComponent("venue.yaml"), atomically: true, encoding: .utf8)
        let config = directory.appendingPathComponent("hub.yaml").path
        // Gateways publish no status here: a long heartbeat keeps them online between phases.
        try """
        hub: bench
        site: bench
        venue: venue.yaml
        mqtt: { host: 127.0.0.1, port: \(broker.port) }
        regions: [{ id: all, ibeacon: { uuid: \(Self.uuid) } }]
        live: { tickSeconds: 0.5, statusSeconds: 1, heartbeatSeconds: 600 }
        """.write(toFile: config, atomically: true, encoding: .utf8)

        var load = Load(tags: tags, gateways: gateways, heardBy: heardBy, side: side)
        let hubTopics = Topics(site: "bench")
        let hubSightings = load.gatewayIDs.map { hubTopics.sightings($0) }
        let bareSightings = load.gatewayIDs.map { Topics(site: "baseline").sightings($0) }
        let workers = max(1, ProcessInfo.processInfo.activeProcessorCount)

        let publisher = try MQTTClient(
            configuration: MQTTConfiguration(
                host: broker.host, port: broker.port, clientID: "bench-gateways", maximumInflightMessages: window))
        try await publisher.connect()
        let watcher = try HubWatcher(broker: broker, topics: hubTopics)
        try await watcher.start()
        let counter = try await MessageCounter(broker: broker, filter: Topics(site: "baseline").allSightings)

        let spawned = ContinuousClock.now
        let hub = try ChildProcess.spawn(
            binary, ["run", "--config", config, "--log-level", "warning"],
            output: directory.appendingPathComponent("hub.log").path)
        defer {
            if hub.isRunning {
                hub.signal(SIGKILL)
                while hub.isRunning { usleep(1000) }
            }
        }
        let brokerPID = Self.pid(ofProcessWithArgument: broker.directory.appendingPathComponent("mosquitto.conf").path)
        let sampler = Sampler(hub: hub.pid, broker: brokerPID)
        guard await watcher.waitForOnline(within: .seconds(30)) else {
            print("beacon-bench hub: the hub did not come online within 30 s; its output:\n\(hub.output)")
            throw ExitCode(1)
        }
        let online = (ContinuousClock.now - spawned).seconds
        let startupCPU = ProcessStats.cpuTicks(hub.pid) / Double(sysconf(Int32(_SC_CLK_TCK)))
        try await Task.sleep(for: .seconds(1))
        let idleStart = sampler.snapshot()
        try await Task.sleep(for: .seconds(2))
        let idle = Usage(idleStart, sampler.snapshot())
        let idleRSS = ProcessStats.rssMiB(hub.pid)
        print(
            "beacon-bench hub: \(tags) tags × \(gateways) gateways (rooms \(side)×\(side)), each tag heard by "
                + "\(heardBy) at 1 Hz = \(Self.grouped(tags * heardBy)) sightings/s in batches of \(Self.batchSize); "
                + "mosquitto on 127.0.0.1:\(broker.port); QoS 1, \(window) in flight; \(workers) cores")
        print(
            "hub: online \(Self.format(online, 1)) s after start (\(Self.format(startupCPU, 1)) s of CPU: venue model, "
                + "lock claim, restore); then idle: RSS "
                + "\(Self.format(idleRSS, 1)) MiB, CPU \(Self.format(idle.hub, 1)) % of a core (no tag met yet)")
        print(
            "order: steady load first, on the fresh hub (so its memory is not what a burst left), then ingest rounds "
                + "(bare subscriber, then hub)")
        sampler.start()

        // 1. Steady load. Encoded ahead (the publisher must not take the hub's CPU while it runs), dated from the time
        // encoding is expected to end.
        var calibration = load
        let sample = try await Self.encode(
            calibration.batches(
                from: Date().timeIntervalSince1970, seconds: 1, boots: load.gatewayIDs.map { _ in "calibration" }),
            workers: workers)
        let perSecond = sample.encodeSeconds + sample.generateSeconds
        let steadyBase = Date().timeIntervalSince1970 + perSecond * Double(seconds) * 1.3 + 1
        let steady = try await Self.encode(
            load.batches(from: steadyBase, seconds: seconds, boots: Self.boots(gateways)), workers: workers)
        let steadyResult = try await runSteady(
            steady, base: steadyBase, publisher: publisher, topics: hubSightings, watcher: watcher,
            sampler: sampler, hub: hub)
        print(steadyResult.lines(seconds: seconds, workers: workers, idleRSS: idleRSS).joined(separator: "\n"))
        try Self.checkRunning(hub)
        var newest = steady.newest

        // 2. Ingest rounds.
        var results: [RoundResult] = []
        for round in 1...rounds {
            // Scan times end just before now, and start no more than 5 s before the newest the hub has seen (its
            // engine counts sightings 10 s older than the newest as late, which would flatter the figure).
            let wait = newest - 5 + Double(burstSeconds) + 0.5 - Date().timeIntervalSince1970
            if wait > 0 { try await Task.sleep(for: .seconds(wait)) }
            let base = Date().timeIntervalSince1970 - Double(burstSeconds) - 0.5
            let stream = try await Self.encode(
                load.batches(from: base, seconds: burstSeconds, boots: Self.boots(gateways)), workers: workers)
            newest = stream.newest
            let result = try await runRound(
                round, stream, publisher: publisher, bare: bareSightings, hubTopics: hubSightings, counter: counter,
                watcher: watcher, sampler: sampler, hub: hub)
            print(result.line)
            results.append(result)
            try Self.checkRunning(hub)
        }

        sampler.stop()
        print(
            Self.summary(
                steady: steadyResult, rounds: results, idleRSS: idleRSS, seconds: seconds, workers: workers,
                tags: tags, gateways: gateways, heardBy: heardBy, burstSeconds: burstSeconds))

        hub.signal(SIGTERM)
        let deadline = ContinuousClock.now.advanced(by: .seconds(15))
        while hub.isRunning && ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(20)) }
        if hub.isRunning { print("note: the hub did not stop within 15 s of SIGTERM") }
        await counter.stop()
        await watcher.stop()
        await publisher.shutdown()
        await broker.stop()
    }

    static func checkRunning(_ hub: ChildProcess) throws {
        guard !hub.isRunning else { return }
        print("beacon-bench hub: the hub exited (status \(hub.status ?? -1)); its output:\n\(hub.output)")
        throw ExitCode(1)
    }

    // MARK: Steady load

    /// What the steady phase measured.
    struct SteadyResult {
        var published = 0
        var batches = 0
        var elapsed = 0.0
        var startLag = 0.0
        var maxBehind = 0.0
        var behindSeconds = 0
        var cpu = Usage()
        var perSecondHubCPU: [Double] = []
        var rss: [Double] = []
        var hwm = 0.0
        var caughtUp = false
        var catchUp = 0.0
        var maxBacklog = 0
        var unacknowledged = 0
        var ingest: HubStatus.Ingest?

        func lines(seconds: Int, workers: Int, idleRSS: Double) -> [String] {
            let rate = Double(published) / elapsed
            let batchRate = Double(batches) / elapsed
            let pace =
                maxBehind < 0.5
                ? "kept the pace (at most \(format(maxBehind, 2)) s behind schedule)"
                : "FELL BEHIND: up to \(format(maxBehind, 1)) s behind schedule, \(behindSeconds) s of \(seconds) "
                    + "more than 0.5 s late"
            let sorted = perSecondHubCPU.sorted()
            let p50 = sorted.isEmpty ? 0 : sorted[sorted.count / 2]
            let maxCPU = sorted.last ?? 0
            let status: String
            if let ingest {
                status =
                    "hub/status ingest: \(grouped(ingest.batches)) batches, \(grouped(ingest.sightings)) sightings "
                    + "of \(grouped(batches)) / \(grouped(published)) published; duplicates \(ingest.duplicates), "
                    + "rejected \(ingest.rejected.values.reduce(0, +)), events \(ingest.events.values.reduce(0, +))"
            } else {
                status = "no hub/status after the phase"
            }
            let lag = startLag > 0.05 ? "; scan times \(format(startLag, 1)) s behind the clock at the start" : ""
            let acknowledgements =
                caughtUp
                ? "all caught up \(format(catchUp, 2)) s after the last publish"
                : "NOT CAUGHT UP after \(format(catchUp, 0)) s: \(unacknowledged) batches unacknowledged"
            return [
                "steady load, \(seconds) s paced in real time (scan times = now\(lag)):",
                "  publisher: \(grouped(Int(rate))) sightings/s, \(format(batchRate, 1)) batches/s; \(pace)",
                "  hub CPU: \(format(cpu.hub)) % of one core (\(format(cpu.hub / Double(workers))) % of the machine's "
                    + "\(workers) cores); 1-s samples p50 \(format(p50)) %, max \(format(maxCPU)) %",
                "  others: mosquitto \(format(cpu.broker)) % of a core, this bench (publisher) \(format(cpu.bench)) %; "
                    + "machine busy \(format(cpu.machine)) % of \(workers) cores",
                "  hub RSS: idle \(format(idleRSS, 1)) MiB → during load mean \(format(mean(rss), 1)), max "
                    + "\(format(rss.max() ?? 0, 1)) MiB; VmHWM \(format(hwm, 1)) MiB",
                "  acknowledgements: \(acknowledgements); unacknowledged during the load at most \(maxBacklog) "
                    + "batches (\(format(Double(maxBacklog) / batchRate, 2)) s of the load; acknowledgements go out "
                    + "each tick)",
                "  \(status)",
            ]
        }
    }

    func runSteady(
        _ stream: Stream, base: Double, publisher: MQTTClient, topics: [String], watcher: HubWatcher,
        sampler: Sampler, hub: ChildProcess
    ) async throws -> SteadyResult {
        var result = SteadyResult()
        let before = watcher.status?.ingest ?? HubStatus.Ingest()
        // Wall time `base` on the continuous clock.
        let wallNow = Date().timeIntervalSince1970
        let clockNow = ContinuousClock.now
        func instant(_ wall: Double) -> ContinuousClock.Instant { clockNow.advanced(by: .seconds(wall - wallNow)) }
        let start = instant(base)
        if start > ContinuousClock.now { try await Task.sleep(until: start) }
        result.startLag = max(0, (ContinuousClock.now - start).seconds)
        let first = sampler.snapshot()
        var published = [UInt64](repeating: 0, count: gateways)
        var index = 0
        var nextCheck = start.advanced(by: .seconds(1))
        var lateSeconds = Set<Int>()
        while index < stream.messages.count {
            let due = instant(stream.messages[index].sent)
            if due > ContinuousClock.now { try await Task.sleep(until: due, tolerance: .milliseconds(1)) }
            let now = ContinuousClock.now
            while index < stream.messages.count && instant(stream.messages[index].sent) <= now {
                let message = stream.messages[index]
                try publisher.send(message.payload, to: topics[message.gateway])
                let behind = (now - instant(message.sent)).seconds
                result.maxBehind = max(result.maxBehind, behind)
                if behind > 0.5 { lateSeconds.insert(Int(message.sent - base)) }
                published[message.gateway] = message.seq
                result.published += message.sightings
                result.batches += 1
                index += 1
            }
            if now >= nextCheck {
                nextCheck = now.advanced(by: .seconds(1))
                result.maxBacklog = max(result.maxBacklog, watcher.backlog(published: published, boots: stream.boots))
                result.rss.append(ProcessStats.rssMiB(hub.pid))
            }
        }
        let lastSend = ContinuousClock.now
        result.elapsed = max((lastSend - start).seconds, Double(seconds))
        result.behindSeconds = lateSeconds.count
        let last = sampler.snapshot()
        result.cpu = Usage(first, last)
        result.perSecondHubCPU = sampler.hubCPUPerInterval(from: first.at, to: last.at)
        result.caughtUp = await watcher.wait(for: stream.last, within: .seconds(60))
        result.catchUp = (ContinuousClock.now - lastSend).seconds
        result.unacknowledged = watcher.backlog(published: published, boots: stream.boots)
        result.hwm = ProcessStats.rssMiB(hub.pid, field: "VmHWM")
        // A status published after the last acknowledgement counts everything.
        let after = Date().timeIntervalSince1970 + 0.1
        if let status = await watcher.waitForStatus(after: after, within: .seconds(5)), var ingest = status.ingest {
            ingest.batches -= before.batches
            ingest.sightings -= before.sightings
            ingest.duplicates -= before.duplicates
            for (key, value) in before.rejected { ingest.rejected[key, default: 0] -= value }
            for (key, value) in before.events { ingest.events[key, default: 0] -= value }
            result.ingest = ingest
        }
        return result
    }

    // MARK: Ingest rounds

    /// What one ingest round measured.
    struct RoundResult {
        var round = 0
        var batches = 0
        var sightings = 0
        var bareSeconds = 0.0
        var bareReceived = 0
        var bareDropped = 0
        var bareCPU = Usage()
        var hubSeconds = 0.0
        var hubCPU = Usage()
        var acknowledged = false
        var unacknowledged = 0

        var bareRate: Double { Double(sightings) / bareSeconds }
        var hubRate: Double { Double(sightings) / hubSeconds }

        var line: String {
            let bare =
                bareReceived == batches
                ? "" : " (ONLY \(bareReceived) of \(batches) messages arrived; \(bareDropped) dropped by the client)"
            let hub = acknowledged ? "" : " (NOT ALL ACKNOWLEDGED: \(unacknowledged) batches missing)"
            return "ingest round \(round): \(grouped(batches)) batches, \(grouped(sightings)) sightings\n"
                + "  bare subscriber: \(grouped(Int(bareRate))) sightings/s (\(format(bareSeconds, 2)) s)\(bare); "
                + "CPU mosquitto \(format(bareCPU.broker)) %, bench \(format(bareCPU.bench)) %\n"
                + "  hub, to the last acknowledgement: \(grouped(Int(hubRate))) sightings/s "
                + "(\(format(hubSeconds, 2)) s)"
                + "\(hub); CPU hub \(format(hubCPU.hub)) %, mosquitto \(format(hubCPU.broker)) %, bench "
                + "\(format(hubCPU.bench)) %\n"
                + "  hub / bare subscriber: \(format(hubRate / bareRate, 3))"
        }
    }

    func runRound(
        _ round: Int, _ stream: Stream, publisher: MQTTClient, bare: [String], hubTopics: [String],
        counter: MessageCounter, watcher: HubWatcher, sampler: Sampler, hub: ChildProcess
    ) async throws -> RoundResult {
        var result = RoundResult(round: round, batches: stream.messages.count, sightings: stream.sightings)
        _ = await sampler.waitForHubIdle(within: .seconds(30))

        // (a) A bare subscriber counting messages, without decoding.
        let counted = counter.count
        var first = sampler.snapshot()
        var start = ContinuousClock.now
        for message in stream.messages { try publisher.send(message.payload, to: bare[message.gateway]) }
        let arrived = await counter.wait(for: counted + stream.messages.count, within: .seconds(120))
        result.bareSeconds = (counter.lastArrival - start).seconds
        result.bareCPU = Usage(first, sampler.snapshot())
        result.bareReceived = arrived - counted
        result.bareDropped = counter.dropped

        // (b) The same batches through the hub: decode, validate, deduplicate, zone engine, acknowledge.
        _ = await sampler.waitForHubIdle(within: .seconds(30))
        first = sampler.snapshot()
        start = ContinuousClock.now
        for message in stream.messages { try publisher.send(message.payload, to: hubTopics[message.gateway]) }
        let timeout = Duration.seconds(max(120, 20 * burstSeconds))
        result.acknowledged = await watcher.wait(for: stream.last, within: timeout)
        result.hubSeconds = (ContinuousClock.now - start).seconds
        result.hubCPU = Usage(first, sampler.snapshot())
        if !result.acknowledged {
            var published = [UInt64](repeating: 0, count: gateways)
            for (gateway, entry) in stream.last { published[gateway] = entry.seq }
            result.unacknowledged = watcher.backlog(published: published, boots: stream.boots)
        }
        return result
    }

    // MARK: Summary

    static func summary(
        steady: SteadyResult, rounds: [RoundResult], idleRSS: Double, seconds: Int, workers: Int, tags: Int,
        gateways: Int, heardBy: Int, burstSeconds: Int
    ) -> String {
        let bare = rounds.map(\.bareRate)
        let hub = rounds.map(\.hubRate)
        let ratios = rounds.map { $0.hubRate / $0.bareRate }
        let keptUp =
            steady.caughtUp && steady.catchUp < 5 && steady.maxBehind < 0.5
            && steady.ingest.map { $0.batches == steady.batches && $0.sightings == steady.published } == true
        var lines = [
            "",
            "== beacon-bench hub: summary (release; \(workers) cores) ==",
            "load: \(grouped(tags)) tags × \(gateways) gateways, heard by \(heardBy) at 1 Hz = "
                + "\(grouped(tags * heardBy)) sightings/s (\(tags * heardBy / batchSize) batches/s of \(batchSize))",
            "ingest of \(burstSeconds) s of the load (\(grouped(rounds.first?.sightings ?? 0)) sightings), "
                + "sightings/s:",
            "  (hub: from the first publish to the last gateway's acknowledgement, which goes out on the hub's "
                + "0.5 s tick)",
            "  round   bare subscriber   hub (to last ack)   hub / bare   hub CPU (% of a core)",
        ]
        for round in rounds {
            lines.append(
                "  \(round.round)".padding(toLength: 8, withPad: " ", startingAt: 0)
                    + pad(grouped(Int(round.bareRate)), 17) + pad(grouped(Int(round.hubRate)), 20)
                    + pad(format(round.hubRate / round.bareRate, 3), 13) + pad(format(round.hubCPU.hub), 24)
                    + (round.acknowledged && round.bareReceived == round.batches ? "" : "  INCOMPLETE"))
        }
        lines.append(
            "  median  " + pad(grouped(Int(median(bare))), 15) + pad(grouped(Int(median(hub))), 20)
                + pad(format(median(ratios), 3), 13) + pad(format(median(rounds.map(\.hubCPU.hub))), 24))
        lines += [
            "steady \(grouped(tags * heardBy)) sightings/s for \(seconds) s: publisher reached "
                + "\(grouped(Int(Double(steady.published) / steady.elapsed))) sightings/s "
                + "(\(format(Double(steady.batches) / steady.elapsed, 1)) batches/s)"
                + (steady.maxBehind < 0.5 ? "" : ", BEHIND SCHEDULE"),
            "  hub CPU \(format(steady.cpu.hub)) % of one core = \(format(steady.cpu.hub / Double(workers))) % of "
                + "the machine; mosquitto \(format(steady.cpu.broker)) %; machine \(format(steady.cpu.machine)) % busy",
            "  hub RSS idle \(format(idleRSS, 1)) MiB, under load max \(format(steady.rss.max() ?? 0, 1)) MiB, "
                + "VmHWM \(format(steady.hwm, 1)) MiB",
            "  kept up: \(keptUp ? "yes" : "NO") (acknowledgements "
                + (steady.caughtUp
                    ? "caught up \(format(steady.catchUp, 2)) s after the last publish" : "never caught up")
                + "; at most \(format(Double(steady.maxBacklog) / (Double(steady.batches) / steady.elapsed), 1)) s "
                + "unacknowledged during the load; hub/status counted \(grouped(steady.ingest?.sightings ?? 0)) of "
                + "\(grouped(steady.published)) sightings)",
        ]
        return lines.joined(separator: "\n")
    }

    // MARK: Load and streams

    /// One encoded batch, ready to publish.
    struct Message: Sendable {
        var gateway: Int
        var seq: UInt64
        /// When the batch closed (its last scan time), unix seconds: when the steady phase sends it.
        var sent: Double
        var sightings: Int
        var payload: [UInt8]
    }

    /// Batches of every gateway in the order they close.
    struct Stream: Sendable {
        var messages: [Message] = []
        var boots: [String] = []
        var sightings = 0
        var newest = -Double.infinity
        /// Per gateway index: its boot and last sequence.
        var last: [Int: (boot: String, seq: UInt64)] = [:]
        var generateSeconds = 0.0
        var encodeSeconds = 0.0
    }

    static func boots(_ count: Int) -> [String] { (0..<count).map { _ in UUID().uuidString.lowercased() } }

    /// Encodes `batches` with `ContractCoding` on `workers` tasks, keeping their order.
    static func encode(_ generated: (batches: [SightingBatch], seconds: Double), workers: Int) async throws -> Stream {
        let batches = generated.batches
        let began = ContinuousClock.now
        let chunk = (batches.count + workers - 1) / max(workers, 1)
        let parts = try await withThrowingTaskGroup(of: (Int, [[UInt8]]).self) { group in
            for worker in 0..<workers where worker * chunk < batches.count {
                let slice = Array(batches[worker * chunk..<min((worker + 1) * chunk, batches.count)])
                group.addTask { (worker, try slice.map { try ContractCoding.encode($0) }) }
            }
            var parts: [Int: [[UInt8]]] = [:]
            for try await (worker, payloads) in group { parts[worker] = payloads }
            return parts
        }
        let payloads = parts.keys.sorted().flatMap { parts[$0]! }
        var stream = Stream()
        stream.generateSeconds = generated.seconds
        stream.encodeSeconds = (ContinuousClock.now - began).seconds
        var gatewayIndex: [GatewayID: Int] = [:]
        stream.messages.reserveCapacity(batches.count)
        for (batch, payload) in zip(batches, payloads) {
            let gateway: Int
            if let known = gatewayIndex[batch.gateway] {
                gateway = known
            } else {
                gateway = Int(batch.gateway.rawValue.dropFirst(3)) ?? 0
                gatewayIndex[batch.gateway] = gateway
            }
            stream.messages.append(
                Message(
                    gateway: gateway, seq: batch.seq, sent: batch.sent, sightings: batch.sightings.count,
                    payload: payload))
            stream.sightings += batch.sightings.count
            stream.newest = max(stream.newest, batch.sent)
            stream.last[gateway] = (batch.boot, batch.seq)
        }
        stream.boots = batches.isEmpty ? [] : Array(Set(batches.map(\.boot)))
        return stream
    }

    /// The venue's load: tags in the rooms of a square grid, each heard once a second by the gateways nearest its
    /// room (as EngineBench), loudest in its own; each tag moves to a neighbouring room once a minute.
    struct Load {
        let tags: Int
        let gatewayIDs: [GatewayID]
        /// Per room: the gateways that hear a tag there, with their mean RSSI.
        let hearing: [[(gateway: Int, rssi: Double)]]
        let neighbours: [[Int]]
        let beacons: [String]
        let addresses: [String]
        var rooms: [Int]
        /// Seconds of load generated so far: the movement's clock.
        var clock = 0

        init(tags: Int, gateways: Int, heardBy: Int, side: Int) {
            self.tags = tags
            gatewayIDs = (0..<gateways).map { GatewayID(rawValue: "gw-\($0)")! }
            let positions = (0..<gateways).map { Point(Double($0 % side) * 10 + 5, Double($0 / side) * 10 + 5) }
            hearing = positions.map { room -> [(gateway: Int, rssi: Double)] in
                let nearest = positions.indices.sorted {
                    positions[$0].distance(to: room) < positions[$1].distance(to: room)
                }
                return nearest.prefix(heardBy).map { gateway -> (gateway: Int, rssi: Double) in
                    let distance = max(positions[gateway].distance(to: room), 1)
                    return (gateway, -65 - 20 * log10(distance))
                }
            }
            neighbours = (0..<gateways).map { room in
                var next: [Int] = []
                if room % side > 0 { next.append(room - 1) }
                if room % side + 1 < side && room + 1 < gateways { next.append(room + 1) }
                if room >= side { next.append(room - side) }
                if room + side < gateways { next.append(room + side) }
                return next
            }
            beacons = (0..<tags).map { "ibeacon:\(HubBench.uuid):\($0 / 65536 + 1):\($0 % 65536)" }
            addresses = (0..<tags).map {
                String(format: "c0:ff:ee:%02x:%02x:%02x", ($0 >> 16) & 0xFF, ($0 >> 8) & 0xFF, $0 & 0xFF)
            }
            rooms = (0..<tags).map { $0 % gateways }
        }

        /// `seconds` of the load from `base` (unix seconds), as each gateway's batches of up to 100 sightings in the
        /// order they close (a gateway's stream is in time order; the last partial batches close at the end).
        mutating func batches(from base: Double, seconds: Int, boots: [String]) -> (
            batches: [SightingBatch], seconds: Double
        ) {
            let began = ContinuousClock.now
            var generator = SystemRandomNumberGenerator()
            var pending = [[Sighting]](repeating: [], count: gatewayIDs.count)
            var seqs = [UInt64](repeating: 0, count: gatewayIDs.count)
            var batches: [SightingBatch] = []
            batches.reserveCapacity(seconds * tags * (hearing.first?.count ?? 1) / batchSize + gatewayIDs.count)
            func close(_ gateway: Int, at sent: Double) {
                seqs[gateway] += 1
                batches.append(
                    SightingBatch(
                        gateway: gatewayIDs[gateway], boot: boots[gateway], seq: seqs[gateway], sent: sent,
                        clockSynced: true, sightings: pending[gateway]))
                pending[gateway].removeAll(keepingCapacity: true)
            }
            for second in 0..<seconds {
                for tag in 0..<tags {
                    if (clock + tag) % 60 == 0, let next = neighbours[rooms[tag]].randomElement(using: &generator) {
                        rooms[tag] = next
                    }
                    // Each tag advertises at its own moment in the second; every gateway hears the same advertisement.
                    let t = base + Double(second) + (Double(tag) + 0.5) / Double(tags)
                    for (gateway, rssi) in hearing[rooms[tag]] {
                        pending[gateway].append(
                            Sighting(
                                t: t, beacon: beacons[tag], rssi: Int(rssi) + Int.random(in: -4...4, using: &generator),
                                txPower: -59, kind: .iBeacon, address: addresses[tag]))
                        if pending[gateway].count == batchSize { close(gateway, at: t) }
                    }
                }
                clock += 1
            }
            for gateway in gatewayIDs.indices where !pending[gateway].isEmpty {
                close(gateway, at: base + Double(seconds))
            }
            return (batches, (ContinuousClock.now - began).seconds)
        }
    }

    /// A square grid of 10 × 10 m rooms, one gateway in the middle of each, doors between neighbours, an entrance.
    static func venue(side: Int, gateways: Int) -> String {
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

    /// The process whose command line has `argument` (our broker, by its own configuration file's path).
    static func pid(ofProcessWithArgument argument: String) -> Int32? {
        guard let entries = try? FileManager.default.contentsOfDirectory(atPath: "/proc") else { return nil }
        for entry in entries {
            guard let pid = Int32(entry),
                let data = FileManager.default.contents(atPath: "/proc/\(entry)/cmdline"),
                data.split(separator: 0).contains(where: { String(decoding: $0, as: UTF8.self) == argument })
            else { continue }
            return pid
        }
        return nil
    }

    // MARK: Formatting

    static func format(_ value: Double, _ digits: Int = 0) -> String {
        value.isFinite ? String(format: "%.\(digits)f", value) : "–"
    }

    static func grouped(_ value: Int) -> String {
        let digits = String(value.magnitude)
        var result = ""
        for (index, character) in digits.enumerated() {
            if index > 0 && (digits.count - index) % 3 == 0 { result.append(",") }
            result.append(character)
        }
        return (value < 0 ? "-" : "") + result
    }

    static func pad(_ text: String, _ width: Int) -> String {
        String(repeating: " ", count: max(0, width - text.count)) + text
    }

    static func mean(_ values: [Double]) -> Double { values.isEmpty ? 0 : values.reduce(0, +) / Double(values.count) }

    static func median(_ values: [Double]) -> Double {
        let sorted = values.sorted()
        guard !sorted.isEmpty else { return 0 }
        return sorted.count % 2 == 1
            ? sorted[sorted.count / 2] : (sorted[sorted.count / 2 - 1] + sorted[sorted.count / 2]) / 2
    }
}

extension HubBench {
    /// CPU time of the hub, the broker and this process, and the machine's busy time, at one moment.
    struct Snapshot: Sendable {
        var at = ContinuousClock.now
        var hub = 0.0
        var broker = 0.0
        var bench = 0.0
        var busy = 0.0
        var total = 0.0
        var hubRSS = 0.0
    }

    /// CPU use between two snapshots: % of one core per process, % of all cores for the machine.
    struct Usage: Sendable {
        var hub = 0.0
        var broker = 0.0
        var bench = 0.0
        var machine = 0.0

        init() {}

        init(_ first: Snapshot, _ last: Snapshot) {
            let seconds = (last.at - first.at).seconds
            let ticks = Double(sysconf(Int32(_SC_CLK_TCK)))
            hub = (last.hub - first.hub) / ticks / seconds * 100
            broker = (last.broker - first.broker) / ticks / seconds * 100
            bench = (last.bench - first.bench) / ticks / seconds * 100
            machine = last.total > first.total ? (last.busy - first.busy) / (last.total - first.total) * 100 : 0
        }
    }

    /// Samples /proc every 500 ms in the background, and on demand.
    final class Sampler: Sendable {
        let hub: Int32
        let broker: Int32?
        private let samples = Mutex<[Snapshot]>([])
        private let task = Mutex<Task<Void, Never>?>(nil)

        init(hub: Int32, broker: Int32?) {
            self.hub = hub
            self.broker = broker
        }

        func snapshot() -> Snapshot {
            var snapshot = Snapshot()
            snapshot.hub = ProcessStats.cpuTicks(hub)
            snapshot.broker = broker.map { ProcessStats.cpuTicks($0) } ?? 0
            snapshot.bench = ProcessStats.cpuTicks(getpid())
            snapshot.hubRSS = ProcessStats.rssMiB(hub)
            // /proc/stat's first line: cpu user nice system idle iowait irq softirq steal …
            if let stat = try? String(contentsOfFile: "/proc/stat", encoding: .utf8),
                let line = stat.split(separator: "\n").first
            {
                let fields = line.split(separator: " ").dropFirst().compactMap { Double($0) }
                if fields.count >= 5 {
                    let total = fields.prefix(8).reduce(0, +)
                    snapshot.total = total
                    snapshot.busy = total - fields[3] - fields[4]
                }
            }
            return snapshot
        }

        func start() {
            let task = Task { [self] in
                while !Task.isCancelled {
                    let snapshot = snapshot()
                    samples.withLock { $0.append(snapshot) }
                    try? await Task.sleep(for: .milliseconds(500))
                }
            }
            self.task.withLock { $0 = task }
        }

        func stop() { task.withLock { $0?.cancel() } }

        /// The hub's CPU (% of one core) over each second-long stretch of samples between `start` and `end`.
        func hubCPUPerInterval(from start: ContinuousClock.Instant, to end: ContinuousClock.Instant) -> [Double] {
            let inside = samples.withLock { $0.filter { $0.at >= start && $0.at <= end } }
            var result: [Double] = []
            var index = 0
            while index + 2 < inside.count {
                result.append(Usage(inside[index], inside[index + 2]).hub)
                index += 2
            }
            return result
        }

        /// Waits until the hub uses under 10 % of a core over half a second; returns the seconds waited.
        func waitForHubIdle(within timeout: Duration) async -> Double {
            let began = ContinuousClock.now
            var previous = snapshot()
            while ContinuousClock.now - began < timeout {
                try? await Task.sleep(for: .milliseconds(500))
                let now = snapshot()
                if Usage(previous, now).hub < 10 { break }
                previous = now
            }
            return (ContinuousClock.now - began).seconds
        }
    }

    /// Counts messages on a filter without decoding them; remembers when the last arrived.
    final class MessageCounter: Sendable {
        let client: MQTTClient
        private let state = Mutex((count: 0, last: ContinuousClock.now))
        private let task = Mutex<Task<Void, Never>?>(nil)

        init(broker: MosquittoBroker, filter: String) async throws {
            client = try MQTTClient(
                configuration: MQTTConfiguration(
                    host: broker.host, port: broker.port, clientID: "bench-bare", subscriptionBufferSize: 1_000_000))
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

        var count: Int { state.withLock { $0.count } }
        var lastArrival: ContinuousClock.Instant { state.withLock { $0.last } }
        var dropped: Int { client.droppedMessages }

        /// Waits until `count` messages have arrived in all; returns how many did.
        func wait(for count: Int, within timeout: Duration) async -> Int {
            let deadline = ContinuousClock.now.advanced(by: timeout)
            while self.count < count && ContinuousClock.now < deadline {
                try? await Task.sleep(for: .milliseconds(2))
            }
            return self.count
        }

        func stop() async {
            task.withLock { $0?.cancel() }
            await client.shutdown()
        }
    }

    /// Follows the hub's retained acknowledgements and its status.
    final class HubWatcher: Sendable {
        let client: MQTTClient
        let topics: Topics
        private let state = Mutex((acks: [GatewayID: [String: UInt64]](), status: HubStatus?.none, online: false))
        private let tasks = Mutex<[Task<Void, Never>]>([])

        init(broker: MosquittoBroker, topics: Topics) throws {
            self.topics = topics
            client = try MQTTClient(
                configuration: MQTTConfiguration(
                    host: broker.host, port: broker.port, clientID: "bench-watcher", subscriptionBufferSize: 1_000_000
                ))
        }

        func start() async throws {
            try await client.connect()
            let acks = try await client.subscribe(to: "\(topics.root)/\(topics.site.rawValue)/gateways/+/ack")
            let status = try await client.subscribe(to: topics.hubStatus)
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
                for await message in status {
                    guard let status = try? ContractCoding.decode(HubStatus.self, from: message.payload) else {
                        continue
                    }
                    state.withLock {
                        $0.status = status
                        if status.state == .online { $0.online = true }
                    }
                }
            }
            tasks.withLock { $0 = [a, s] }
        }

        var status: HubStatus? { state.withLock { $0.status } }

        func waitForOnline(within timeout: Duration) async -> Bool {
            let deadline = ContinuousClock.now.advanced(by: timeout)
            while !state.withLock({ $0.online }) && ContinuousClock.now < deadline {
                try? await Task.sleep(for: .milliseconds(20))
            }
            return state.withLock { $0.online }
        }

        /// The first status dated at or after `wall` (unix seconds).
        func waitForStatus(after wall: Double, within timeout: Duration) async -> HubStatus? {
            let deadline = ContinuousClock.now.advanced(by: timeout)
            while ContinuousClock.now < deadline {
                if let status = self.status, (status.t ?? 0) >= wall { return status }
                try? await Task.sleep(for: .milliseconds(20))
            }
            return nil
        }

        /// Batches published (`published[gateway index]` = last seq, in the boot of `boots`) but not acknowledged.
        func backlog(published: [UInt64], boots: [String]) -> Int {
            let bootSet = Set(boots)
            return state.withLock { state in
                published.enumerated().reduce(0) { sum, item in
                    let acked =
                        state.acks[GatewayID(rawValue: "gw-\(item.offset)")!]?.filter { bootSet.contains($0.key) }
                        .values.max() ?? 0
                    return sum + Int(item.element) - Int(min(acked, item.element))
                }
            }
        }

        /// Waits until every gateway's acknowledgement reaches its last sequence.
        func wait(for last: [Int: (boot: String, seq: UInt64)], within timeout: Duration) async -> Bool {
            let wanted = last.map { (GatewayID(rawValue: "gw-\($0.key)")!, $0.value) }
            let deadline = ContinuousClock.now.advanced(by: timeout)
            while ContinuousClock.now < deadline {
                let done = state.withLock { state in
                    wanted.allSatisfy { gateway, entry in (state.acks[gateway]?[entry.boot] ?? 0) >= entry.seq }
                }
                if done { return true }
                try? await Task.sleep(for: .milliseconds(2))
            }
            return false
        }

        func stop() async {
            tasks.withLock { $0.forEach { $0.cancel() } }
            await client.shutdown()
        }
    }
}
