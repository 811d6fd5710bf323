import BeaconModel
import BrokerTestSupport
import Foundation
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// `beacon-hub run` with `http:` on a free port: the dashboard's API and metrics show what the hub ingests.
extension HubServiceTests {
    @Test func theRunningHubServesItsVenueTagsMetricsAndHealth() async throws {
        let broker = try MosquittoBroker()
        try await broker.start()
        let (_, statuses) = try await watch(broker, "beacontracker/row/hub/status")
        let hub = try startHub(
            broker, extra: "store: { path: hub.db, commitSeconds: 0.2 }\nhttp: { host: 127.0.0.1, port: 0 }")
        #expect(await statuses.first { $0.text.contains("\"online\"") } != nil, "hub: \(hub.text)")
        // The log names the port taken.
        var base: String?
        for _ in 0..<200 where base == nil {
            base = hub.text.firstMatch(of: /url=(http:\/\/127\.0\.0\.1:[0-9]+)\//).map { String($0.1) }
            if base == nil { try await Task.sleep(for: .milliseconds(50)) }
        }
        let url = try #require(base, "no dashboard URL in the log: \(hub.text)")

        let agent = try await FakeAgent(broker, gateway: "gw-a")
        try await agent.status(heartbeat: 1)
        try await stayInA(agent, seconds: 3)

        func get(_ path: String) async throws -> (Int, [String: Any], String) {
            let (data, response) = try await URLSession.shared.data(from: URL(string: url + path)!)
            let json = (try? JSONSerialization.jsonObject(with: data)) as? [String: Any] ?? [:]
            return ((response as? HTTPURLResponse)?.statusCode ?? 0, json, String(decoding: data, as: UTF8.self))
        }
        let venue = try await get("/api/venue")
        #expect((venue.1["zones"] as? [[String: Any]])?.map { $0["id"] as? String } == ["a", "b", "c"])
        let gateways = venue.1["gateways"] as? [[String: Any]] ?? []
        #expect(gateways.first { $0["id"] as? String == "gw-a" }?["health"] as? String == "online")
        let tag = try await get("/api/tags/tag-1")
        #expect(tag.0 == 200 && tag.1["zone"] as? String == "a", "\(tag.2)")
        let ready = try await get("/health/ready")
        #expect(ready.0 == 200 && ready.1["role"] as? String == "active", "\(ready.2)")
        // The history the hub committed is read back through the API.
        var visits: [Any] = []
        for _ in 0..<50 where visits.isEmpty {
            visits = try await get("/api/tags/tag-1/path").1["visits"] as? [Any] ?? []
            if visits.isEmpty { try await Task.sleep(for: .milliseconds(100)) }
        }
        #expect(visits.count == 1)
        let metrics = try await get("/metrics").2
        let sightings = metrics.firstMatch(of: /beacontracker_gateway_sightings_total\{gateway="gw-a"\} ([0-9]+)/)
        #expect(sightings.flatMap { Int($0.1) } ?? 0 >= 5, "\(metrics.prefix(2000))")
        #expect(metrics.contains("beacontracker_inference_seconds_bucket"))
        #expect(metrics.contains("beacontracker_mqtt_connected 1"))

        hub.signal(SIGTERM)
        #expect(await hub.waitForExit(timeout: .seconds(15)) == 0, "hub did not stop: \(hub.text)")
        await agent.client.shutdown()
    }
}
