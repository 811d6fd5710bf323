import BeaconConfig
import BeaconMQTT
import BeaconModel
import BrokerTestSupport
import Foundation
import Simulator
import Testing

/// Gateways as beacons end to end: `beacon-sim run --gateway-beacons` puts every gateway's own beacon on the
/// simulated air, its agent announces it in the retained status, the other agents publish what they hear of it, and
/// the hub keeps those sightings as gateway-to-gateway links, never as tags.
extension HubServiceTests {
    @Test func theMuseumsGatewaysHearEachOtherAndAreNotTags() async throws {
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

        // The gateway stands elsewhere now: placed from the API (the gateway panel's form), only with the token, on
        // the plan, in a zone of the venue. The plan and the engine take the new place live, as a calibration
        // version, and the links go on being fitted; a rollback puts it back where the venue file says.
        let place = "/api/gateways/\(gateway)/place"
        let file = try #require(museum.gateways.first).position
        let there = Point(file.x + 6, file.y + 1)
        let asked: [String: Any] = ["x": there.x, "y": there.y, "who": "ana"]
        #expect(try await api(url, place, token: nil, method: "POST", body: asked).0 == 401)
        let (offPlan, offPlanError) = try await api(
            url, place, method: "POST", body: ["x": 1000, "y": there.y, "who": "ana"])
        #expect(offPlan == 400, "\(offPlanError)")
        #expect(
            ((offPlanError["error"] as? [String: Any])?["message"] as? String)?.contains("floor plan") == true,
            "\(offPlanError)")
        let (noZone, noZoneError) = try await api(
            url, place, method: "POST", body: ["x": there.x, "y": there.y, "zone": "atrium", "who": "ana"])
        #expect(noZone == 400, "\(noZoneError)")
        let (noWho, _) = try await api(url, place, method: "POST", body: ["x": there.x, "y": there.y, "who": " "])
        #expect(noWho == 400)
        let placedAt = Date().timeIntervalSince1970
        let (placedStatus, placed) = try await api(url, place, method: "POST", body: asked)
        #expect(placedStatus == 200, "\(placed)")
        let version = placed["version"] as? [String: Any]
        #expect(version?["kind"] as? String == "placement" && version?["version"] as? Int == 1, "\(placed)")
        #expect(version?["who"] as? String == "ana", "\(placed)")
        #expect(abs((placed["movedMetres"] as? Double ?? 0) - 37.0.squareRoot()) < 0.01, "\(placed)")
        #expect(
            placed["zone"] as? String == museum.zone(at: there)?.id.rawValue
                || (placed["zone"] is NSNull && museum.zone(at: there) == nil), "\(placed)")
        func point(_ value: Any?) -> [Double]? { (value as? [Any])?.compactMap { ($0 as? NSNumber)?.doubleValue } }
        func shown() async throws -> [String: Any]? {
            let (_, venueView) = try await api(url, "/api/venue")
            return (venueView["gateways"] as? [[String: Any]])?.first { $0["id"] as? String == gateway }
        }
        let moved = try await shown()
        #expect(point(moved?["position"]) == [there.x, there.y], "\(String(describing: moved))")
        #expect(point(moved?["venueFilePosition"]) == [file.x, file.y], "\(String(describing: moved))")
        #expect(hub.text.contains("gateway placed"), "\(hub.text.suffix(2000))")
        let (_, overview) = try await api(url, "/api/calibration")
        #expect((overview["active"] as? [String: Any])?["kind"] as? String == "placement", "\(overview)")
        // The hub goes on fitting the links, the placed gateway's with the others.
        let refitted = await hubStatuses.first(within: .seconds(120)) { message in
            let links = (try? ContractCoding.decode(HubStatus.self, from: message.payload))?.links
            return links.map { $0.t > placedAt && $0.gains[gateway] != nil } ?? false
        }
        #expect(refitted != nil, "hub statuses: \(hubStatuses.messages.suffix(2).map(\.text))")
        let (rolledBack, rollback) = try await api(
            url, "/api/calibration/rollback", method: "POST", body: ["who": "ana"])
        #expect(rolledBack == 200, "\(rollback)")
        let back = try await shown()
        #expect(point(back?["position"]) == [file.x, file.y], "\(String(describing: back))")
        #expect(back?["venueFilePosition"] == nil, "\(String(describing: back))")

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
