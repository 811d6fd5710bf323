import BeaconAgent
import BeaconConfig
import BeaconDecoding
import BeaconModel
import Foundation
import Logging
import ServiceLifecycle
import Simulator
import Synchronization

/// `beacon-sim run VENUE --mqtt HOST:PORT`: every gateway of the venue runs as a real agent in this process — decode,
/// region filter, batches, outbox, boot id, sequence numbers, status and last-will — fed with the advertisements the
/// simulator says it heard, encoded as HCI advertising reports. The driver paces the simulation to the wall clock.
public final class SimulationDriver: Service, Sendable {
    let venue: Venue
    let seed: UInt64
    let speed: Double
    let duration: Double?
    let inputs: [GatewayID: AsyncStream<TimedReport>.Continuation]
    let truthPath: String?
    let gatewayBeacons: Bool
    let logger: Logger

    init(
        venue: Venue, seed: UInt64, speed: Double, duration: Double?,
        inputs: [GatewayID: AsyncStream<TimedReport>.Continuation], truthPath: String?, gatewayBeacons: Bool,
        logger: Logger
    ) {
        self.truthPath = truthPath
        self.gatewayBeacons = gatewayBeacons
        self.venue = venue
        self.seed = seed
        self.speed = speed
        self.duration = duration
        self.inputs = inputs
        self.logger = logger
    }

    public func run() async throws {
        let start = Date().timeIntervalSince1970
        let truth = try truthPath.map { try LineFileWriter(path: $0) }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        func write(_ interval: TruthInterval) {
            if let truth, let data = try? encoder.encode(interval) {
                truth.write(String(decoding: data, as: UTF8.self))
            }
        }
        var simulation = VenueSimulation(venue: venue, seed: seed, start: start)
        var rng = SeededGenerator(seed: seed)
        let tags = SimulatedTag.expand(venue, using: &rng)
        // Each tag gets a stable random-looking address; its advertisement bytes are made once.
        let advertisements = Dictionary(
            tags.map { ($0.beacon, AdvertisementEncoder.advertisingData(beacon: $0.beacon, txPower: $0.txPower)) },
            uniquingKeysWith: { a, _ in a })
        let addresses = Dictionary(
            tags.enumerated().map { index, tag in
                (
                    tag.beacon,
                    [0xC0, 0x5E, 0xA0, UInt8(index >> 16 & 0xFF), UInt8(index >> 8 & 0xFF), UInt8(index & 0xFF)]
                )
            }, uniquingKeysWith: { a, _ in a })
        // The gateways' own beacons, in the same radio (a seed of their own: the tags' draws stay as they were).
        let beacons = GatewayBeacons(venue: venue, radio: simulation.radio, seed: seed &+ 0x6A7E)
        var air = gatewayBeacons ? GatewayBeacons.Air(beacons, start: start, seed: seed &+ 0x6A7F) : nil
        let beaconIDs = GatewayBeacons.beaconIDs(of: venue)
        let gatewayAdvertisements = beaconIDs.mapValues {
            AdvertisementEncoder.advertisingData(beacon: $0, txPower: Int(beacons.measuredPower))
        }
        let gatewayAddresses = Dictionary(
            venue.gateways.map(\.id).sorted { $0.rawValue < $1.rawValue }.enumerated().map { index, id in
                (id, [UInt8](arrayLiteral: 0xB8, 0x27, 0xEB, 0x00, UInt8(index >> 8 & 0xFF), UInt8(index & 0xFF)))
            }, uniquingKeysWith: { a, _ in a })
        logger.info(
            "simulating", metadata: ["site": "\(venue.site)", "tags": "\(tags.count)", "speed": "\(speed)"])
        let clock = ContinuousClock()
        let began = clock.now
        var sent = 0
        let stopping = Mutex(false)
        await withGracefulShutdownHandler {
            while !Task.isCancelled && !stopping.withLock({ $0 }) {
                let elapsed = (clock.now - began).seconds * speed
                if let duration, elapsed >= duration { break }
                simulation.advance(
                    until: start + elapsed,
                    sighting: { line in
                        guard var data = advertisements[line.beacon] ?? nil, let address = addresses[line.beacon] else {
                            return
                        }
                        // A TLM frame, from the same address as the tag's identity (the agent joins them so).
                        if let telemetry = line.extras?.tlm { data = AdvertisementEncoder.telemetryData(telemetry) }
                        let report = AdvertisingReport(
                            eventType: 3, extended: false, addressType: 1, address: address, rssi: line.rssi,
                            txPower: nil, data: data)
                        inputs[line.gateway]?.yield(TimedReport(report: report, time: line.t))
                        sent += 1
                    }, truth: write)
                for heard in air?.advance(until: start + elapsed) ?? [] {
                    guard let data = gatewayAdvertisements[heard.tx] ?? nil, let address = gatewayAddresses[heard.tx]
                    else { continue }
                    // Non-connectable undirected (ADV_NONCONN_IND), from the gateway's public address.
                    let report = AdvertisingReport(
                        eventType: 3, extended: false, addressType: 0, address: address, rssi: heard.rssi,
                        txPower: nil, data: data)
                    inputs[heard.rx]?.yield(TimedReport(report: report, time: heard.t))
                    sent += 1
                }
                try? await Task.sleep(for: .milliseconds(100))
            }
        } onGracefulShutdown: {
            stopping.withLock { $0 = true }
        }
        for input in inputs.values { input.finish() }
        if let truth {
            simulation.finish(at: start + (clock.now - began).seconds * speed, truth: write)
            try truth.close()
        }
        logger.info("simulation stopped", metadata: ["reports": "\(sent)"])
    }
}

extension Duration {
    fileprivate var seconds: Double {
        let (seconds, attoseconds) = components
        return Double(seconds) + Double(attoseconds) / 1e18
    }
}

/// Builds one agent per gateway (outboxes in `outboxDirectory`) and the driver that feeds them; run them in one
/// ServiceGroup, the driver last so that it stops first.
public func buildLiveSimulation(
    venue: Venue, seed: UInt64, speed: Double, duration: Double?, host: String, port: Int, outboxDirectory: String,
    truthPath: String? = nil, gatewayBeacons: Bool = false, logger: Logger
) throws -> [any Service] {
    try FileManager.default.createDirectory(atPath: outboxDirectory, withIntermediateDirectories: true)
    var services: [any Service] = []
    var inputs: [GatewayID: AsyncStream<TimedReport>.Continuation] = [:]
    let beaconIDs = GatewayBeacons.beaconIDs(of: venue)
    for gateway in venue.gateways {
        // The same agent.yaml an operator would write for this gateway.
        let own = beaconIDs[gateway.id] ?? ""
        let yaml = """
            gateway: \(gateway.id)
            site: \(venue.site)
            mqtt: { host: "\(host)", port: \(port), clientId: "sim-\(venue.site)-\(gateway.id)" }
            heartbeatSeconds: 10
            outbox: { path: "\(outboxDirectory)/\(gateway.id).db", resendAfterSeconds: 10, resendPerSecond: 5 }
            \(gatewayBeacons ? "selfBeacon: { beacon: \"\(own)\", measuredPower: -59, intervalMs: 200 }" : "")
            """
        let configuration = try ConfigLoader.decode(
            AgentConfiguration.self, from: yaml, file: "simulated \(gateway.id)")
        let (stream, continuation) = AsyncStream<TimedReport>.makeStream(bufferingPolicy: .bufferingNewest(10_000))
        inputs[gateway.id] = continuation
        var agentLogger = logger
        agentLogger[metadataKey: "gateway"] = "\(gateway.id)"
        services.append(
            try buildAgent(
                configuration: configuration, configFile: "simulated \(gateway.id)", source: .stream(stream),
                logger: agentLogger))
    }
    services.append(
        SimulationDriver(
            venue: venue, seed: seed, speed: speed, duration: duration, inputs: inputs, truthPath: truthPath,
            gatewayBeacons: gatewayBeacons, logger: logger))
    return services
}
