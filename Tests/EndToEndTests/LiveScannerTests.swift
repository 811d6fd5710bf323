import BLEScanner
import BeaconAgent
import BeaconDecoding
import BeaconMQTT
import BeaconModel
import BrokerTestSupport
import Foundation
import Synchronization
import Testing

/// The agent's live path, in process, against a real mosquitto: packets enter through the scanner's real read path (the
/// CBluetooth seam's socket pair), are batched on the reader's thread, stored and published; the retained status
/// announces the gateway's own beacon, advertising. Serialized: the seam is process-wide.
@Suite(.serialized, .timeLimit(.minutes(3)))
struct LiveScannerTests {
    @Test func scannedAdvertsArriveAndTheStatusAnnouncesTheOwnBeacon() async throws {
        try await HCITestSeam.withPipe { pipe in
            let directory = FileManager.default.temporaryDirectory.appendingPathComponent("live-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(at: directory) }
            let broker = try MosquittoBroker()
            try await broker.start()
            let hub = try await AcknowledgingHub(broker: broker)
            let watcher = try MQTTClient(
                configuration: MQTTConfiguration(host: broker.host, port: broker.port, clientID: "status-watcher"))
            try await watcher.connect()
            let statuses = try await watcher.subscribe(to: Topics(site: "e2e").gatewayStatus("gw-live"))

            let own = "ibeacon:e2c56db5-dffb-48d2-b060-d0f5a71096e0:900:1"
            let config = directory.appendingPathComponent("agent.yaml").path
            try """
            gateway: gw-live
            site: e2e
            mqtt: { host: 127.0.0.1, port: \(broker.port) }
            heartbeatSeconds: 1
            batch: { maxDelaySeconds: 0.1 }
            outbox: { path: \(directory.path)/outbox.db }
            selfBeacon: { beacon: "\(own)", measuredPower: -60, intervalMs: 250 }
            """.write(toFile: config, atomically: true, encoding: .utf8)

            let agent = try buildAgent(
                configuration: try AgentConfiguration.load(from: config), configFile: config, source: .scanner)
            let running = Task { try await agent.run() }

            // A tag seen by this gateway, written as the kernel would deliver its adverts.
            let tag = bytes(fromHex: "0201061aff4c000215e2c56db5dffb48d2b060d0f5a71096e000010002c5")!
            let written = Date().timeIntervalSince1970
            for index in 0..<20 {
                pipe.write(
                    [0x04]
                        + BTSnoopWriter.advertisingReportEvent(
                            address: [1, 2, 3, 4, 5, 6], rssi: Int8(-50 - index), data: tag))
            }
            let deadline = ContinuousClock.now.advanced(by: .seconds(60))
            while hub.received.values.flatMap(\.values).joined().count < 20 && ContinuousClock.now < deadline {
                try await Task.sleep(for: .milliseconds(50))
            }
            let sightings = hub.received.values.flatMap(\.values).joined()
            #expect(sightings.count == 20)
            #expect(sightings.allSatisfy { $0.beacon == "ibeacon:e2c56db5-dffb-48d2-b060-d0f5a71096e0:1:2" })
            // Stamped by the kernel when written, not when the reader got round to them.
            #expect(sightings.allSatisfy { $0.t >= written - 0.01 && $0.t < written + 5 })

            var announced: GatewayStatus.SelfBeacon?
            for await message in statuses {
                guard let status = try? ContractCoding.decode(GatewayStatus.self, from: message.payload) else {
                    continue
                }
                if status.selfBeacon?.state == "advertising" {
                    announced = status.selfBeacon
                    break
                }
                if ContinuousClock.now > deadline { break }
            }
            #expect(announced?.beacon == own)
            #expect(announced?.mode == "legacy" && announced?.measuredPower == -60 && announced?.intervalMs == 250)
            // The controller got the frame of that beacon.
            let sent = pipe.sentPackets()
            #expect(
                sent.contains(
                    HCICommand.leSetAdvertisingData(
                        AdvertisementEncoder.advertisingData(beacon: own, txPower: -60)!)!.packet))

            running.cancel()
            try await running.value
            await watcher.shutdown()
            await hub.stop()
            await broker.stop()
        }
    }
}
