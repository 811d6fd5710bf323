import BeaconConfig
import BeaconMQTT
import BeaconModel
import BrokerTestSupport
import Foundation
import Simulator
import Testing

/// Gateways as beacons end to end (issue 22): `beacon-sim run --gateway-beacons` puts every gateway's own beacon on the
/// simulated air, its agent announces it in the retained status, the other agents publish what they hear of it, and
/// the hub keeps those sightings as gateway-to-gateway links, never as tags. Part of the serialized hub suite: a second
/// simulated museum beside another would starve both on two cores.
extension HubServiceTests {
    @Test func theMuseumsGatewaysHearEachOtherAndAreNotTags() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("gwbeacons-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let broker = try MosquittoBroker()
        try await broker.start()
        // The museum with its gateways' beacons named, as the simulator numbers them (by gateway id): the hub knows
        // them before the first status, so no ordering of status and batches can make a gateway a tag.
        let museum = try VenueLoader.load(from: "\(Self.root.path)/config/venues/museum.yaml")
        let venueText = GatewayBeacons.namingBeacons(
            inVenueFile: try String(
                contentsOf: Self.root.appendingPathComponent("config/venues/museum.yaml"), encoding: .utf8))
        let venue = directory.appendingPathComponent("museum.yaml").path
        try venueText.write(toFile: venue, atomically: true, encoding: .utf8)
        #expect(try VenueLoader.load(from: venue).gateways.allSatisfy { $0.beacon != nil })
        let config = directory.appendingPathComponent("hub.yaml").path
        try """
        hub: hub-1
        site: museum
        venue: \(venue)
        mqtt: { host: 127.0.0.1, port: \(broker.port) }
        regions: [{ id: everything, ibeacon: { uuid: 6A7E3A1E-B0B0-4C0D-9E5E-0000000000FF } }]
        live: { tickSeconds: 0.2, statusSeconds: 1 }
        inference: { linkFitSeconds: 5 }
        http: { host: 127.0.0.1, port: 0, tokenFile: token.txt }
        """.write(toFile: config, atomically: true, encoding: .utf8)
        let tokenFile = directory.appendingPathComponent("token.txt").path
        try Self.token.write(toFile: tokenFile, atomically: true, encoding: .utf8)
        chmod(tokenFile, 0o600)
        let (hubWatcher, hubStatuses) = try await watch(broker, "beacontracker/museum/hub/status")
        let (stateWatcher, states) = try await watch(broker, "beacontracker/museum/tags/+/state")
        let (gatewayWatcher, gatewayStatuses) = try await watch(broker, "beacontracker/museum/gateways/+/status")
        let hub = try Programs.Running("beacon-hub", ["run", "--config", config])
        #expect(await hubStatuses.first(within: .seconds(60)) { $0.text.contains("\"online\"") } != nil, "\(hub.text)")
        let sim = try Programs.Running(
            "beacon-sim",
            [
                "run", "\(Self.root.path)/config/venues/museum.yaml", "--mqtt", "127.0.0.1:\(broker.port)",
                "--duration", "600", "--gateway-beacons", "--outbox-dir",
                directory.appendingPathComponent("outboxes").path,
            ])

        // The hub counts the gateways' beacons apart, and keeps counting.
        let counted = await hubStatuses.first(within: .seconds(120)) { message in
            let status = try? ContractCoding.decode(HubStatus.self, from: message.payload)
            return (status?.ingest?.gatewayBeacons ?? 0) >= 200
        }
        #expect(counted != nil, "hub: \(hub.text.suffix(2000)) sim: \(sim.text.suffix(2000))")
        let announced = gatewayStatuses.messages.compactMap {
            try? ContractCoding.decode(GatewayStatus.self, from: $0.payload).selfBeacon
        }
        #expect(announced.contains { $0.state == "simulated" && $0.beacon.hasPrefix("ibeacon:6a7e3a1e") })
        // A region covers the gateways' UUID, yet no gateway became a tag.
        #expect(!states.messages.contains { $0.topic.contains("6a7e3a1e") || $0.text.contains("6a7e3a1e") })
        #expect(!states.messages.isEmpty, "the museum's tags are tracked")
        // The links are fitted (every 5 s here) and the fit is in the hub's status, applied, every gateway with a gain.
        let fitted = await hubStatuses.first(within: .seconds(120)) { message in
            let links = (try? ContractCoding.decode(HubStatus.self, from: message.payload))?.links
            return links.map { $0.applied && $0.linksUsed >= 10 && $0.gains.count == museum.gateways.count } ?? false
        }
        #expect(fitted != nil, "hub statuses: \(hubStatuses.messages.suffix(2).map(\.text))")

        // A gateway's links started afresh from the dashboard's API (its link alert accepted; none is in force here):
        // only with the token, only for a gateway of the venue, and the links it had are forgotten.
        let url = try await dashboardURL(of: hub)
        let gateway = try #require(museum.gateways.first).id.rawValue
        let relearn = "/api/gateways/\(gateway)/relearn"
        #expect(try await api(url, relearn, token: nil, method: "POST").0 == 401)
        let (missing, refused) = try await api(url, "/api/gateways/gw-nowhere/relearn", method: "POST")
        #expect(missing == 404 && (refused["error"] as? [String: Any])?["code"] as? String == "unknown-gateway")
        let (status, relearned) = try await api(url, relearn, method: "POST")
        #expect(status == 200 && relearned["gateway"] as? String == gateway, "\(relearned)")
        #expect((relearned["linksForgotten"] as? Int ?? 0) >= 2, "\(relearned)")
        #expect(relearned["alertCleared"] is NSNull, "\(relearned)")
        #expect(hub.text.contains("gateway's links started afresh"), "\(hub.text.suffix(2000))")

        sim.signal(SIGTERM)
        #expect(await sim.waitForExit(timeout: .seconds(60)) == 0, "\(sim.text.suffix(2000))")
        hub.signal(SIGTERM)
        #expect(await hub.waitForExit(timeout: .seconds(60)) == 0, "\(hub.text.suffix(2000))")
        await hubWatcher.shutdown()
        await stateWatcher.shutdown()
        await gatewayWatcher.shutdown()
        await broker.stop()
    }
}
