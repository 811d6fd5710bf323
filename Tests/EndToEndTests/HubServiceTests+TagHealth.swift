import BeaconConfig
import BeaconMQTT
import BeaconModel
import BrokerTestSupport
import Foundation
import Testing

/// Tag health end to end: the simulated museum's lost badge sends Eddystone-TLM frames through its
/// gateway's agent and a real mosquitto; its battery drains, the tag falls silent, and a new cell brings it back. The
/// hub says each once, as `alert` events naming the tag, and its retained state carries the battery.
extension HubServiceTests {
    @Test func aDrainingBadgeIsLowThenMissingThenFoundWithANewCell() async throws {
        let broker = try MosquittoBroker()
        try await broker.start()
        // The museum, its badge's cell drained 2 mV a second from 2620 mV: low (below 2600) after ~10 s, flat (below
        // 2560, silent) after ~30 s, missing 60 s later (the hub looks every 15 s), replaced at 150 s by a 3000 mV
        // cell that lasts the run. A TLM frame every third advertisement.
        let museum = try String(
            contentsOf: Self.root.appendingPathComponent("config/venues/museum.yaml"), encoding: .utf8)
        let venueText = museum.replacingOccurrences(
            of: "battery: { milliVolts: 2950, drainPerHour: 0.5 }",
            with: "battery: { milliVolts: 2620, drainPerHour: 7200, deadBelowMilliVolts: 2560, "
                + "replacedAfterSeconds: 150, newCellMilliVolts: 3000, tlmEvery: 3 }")
        #expect(venueText != museum, "the shipped museum's badge has no battery to change")
        let venue = directory.appendingPathComponent("museum.yaml").path
        try venueText.write(toFile: venue, atomically: true, encoding: .utf8)
        let config = directory.appendingPathComponent("hub.yaml").path
        let httpPort = try FreePort.find()
        try """
        hub: hub-1
        site: museum
        venue: \(venue)
        mqtt: { host: 127.0.0.1, port: \(broker.port) }
        live: { tickSeconds: 0.2, statusSeconds: 1 }
        tagHealth:
          { batteryLowMilliVolts: 2600, batteryRecoveredMilliVolts: 2800, missingAfterSeconds: 60, advertWindowSeconds: 10 }
        http: { port: \(httpPort) }
        """.write(toFile: config, atomically: true, encoding: .utf8)
        let (hubWatcher, hubStatuses) = try await watch(broker, "beacontracker/museum/hub/status")
        let (alertWatcher, alerts) = try await watch(broker, "beacontracker/museum/events/alert")
        let (stateWatcher, states) = try await watch(broker, "beacontracker/museum/tags/lost-badge/state")
        let hub = try Programs.Running("beacon-hub", ["run", "--config", config])
        #expect(await hubStatuses.first(within: .seconds(60)) { $0.text.contains("\"online\"") } != nil, "\(hub.text)")
        let sim = try Programs.Running(
            "beacon-sim",
            [
                "run", venue, "--mqtt", "127.0.0.1:\(broker.port)", "--duration", "400", "--outbox-dir",
                directory.appendingPathComponent("outboxes").path,
            ])
        @Sendable func badge(_ code: String) -> [ZoneEvent] {
            alerts.messages.compactMap { try? ContractCoding.decode(ZoneEvent.self, from: $0.payload) }
                .filter { $0.tag == "lost-badge" && $0.code == code }
        }
        func said() -> String { "alerts: \(alerts.messages.map(\.text)) hub: \(hub.text.suffix(1500))" }

        // Its retained state carries the battery, ok at first.
        let fresh = await states.first(within: .seconds(90)) { message in
            (try? ContractCoding.decode(TagState.self, from: message.payload))?.battery != nil
        }
        let first = try #require(fresh.map { try ContractCoding.decode(TagState.self, from: $0.payload) }, "\(said())")
        #expect((2560...2620).contains(first.battery?.milliVolts ?? 0) && first.telemetry?.advertisingCount != nil)
        #expect(first.lastSeenGateway != nil, "\(first)")

        // Low, once; then missing, once, with the state saying so; then found with a reset, once each.
        let low = await alerts.first(within: .seconds(90)) { _ in !badge("tag-battery-low").isEmpty }
        #expect(low != nil, "\(said())")
        #expect(badge("tag-battery-low").first?.reason.contains("below 2600 mV") == true, "\(said())")
        let lowState = await states.first(within: .seconds(30)) { message in
            (try? ContractCoding.decode(TagState.self, from: message.payload))?.battery?.level == .low
        }
        #expect(lowState != nil, "states: \(states.messages.suffix(3).map(\.text))")
        // `beacon-hub tags` lists it among the low ones, from the running hub (hub.yaml's http: address).
        let lowList = try await Programs.run("beacon-hub", ["tags", "--config", config, "--battery-below", "2600"])
        #expect(lowList.status == 0, "\(lowList.output)")
        let lowLines = lowList.output.split(separator: "\n").filter { $0.hasPrefix("lost-badge") }
        #expect(lowLines.count == 1 && lowLines.first?.contains(" low ") == true, "\(lowList.output)")
        #expect(!lowList.output.contains("visitor-"), "only the low ones: \(lowList.output)")
        // By then it has been placed where it lies, and its state says where it was last heard.
        let placed = await states.first(within: .seconds(30)) { message in
            (try? ContractCoding.decode(TagState.self, from: message.payload))?.lastSeenZone == "egypt"
        }
        #expect(placed != nil, "states: \(states.messages.suffix(3).map(\.text))")
        let missing = await alerts.first(within: .seconds(150)) { _ in !badge("tag-missing").isEmpty }
        #expect(missing != nil, "\(said())")
        let missingState = await states.first(within: .seconds(30)) { message in
            (try? ContractCoding.decode(TagState.self, from: message.payload))?.missing == true
        }
        #expect(missingState != nil, "states: \(states.messages.suffix(3).map(\.text))")
        // Missing for 45 s and more, as JSON: the badge, marked missing, where it was last.
        let missingList = try await Programs.run(
            "beacon-hub",
            ["tags", "--live", "http://127.0.0.1:\(httpPort)", "--missing-for", "45s", "--format", "json"])
        #expect(missingList.status == 0, "\(missingList.output)")
        let rows = try JSONSerialization.jsonObject(with: Data(missingList.output.utf8)) as? [[String: Any]] ?? []
        let row = rows.first { $0["tag"] as? String == "lost-badge" }
        #expect(row?["missing"] as? Bool == true && row?["last_zone"] as? String == "egypt", "\(missingList.output)")
        #expect((row?["unheard_hours"] as? Double ?? 0) * 3600 >= 45, "\(missingList.output)")
        let found = await alerts.first(within: .seconds(120)) { _ in
            !badge("tag-found").isEmpty && !badge("tag-tlm-reset").isEmpty
        }
        #expect(found != nil, "\(said())")
        #expect(badge("tag-tlm-reset").first?.reason.contains("went back") == true, "\(said())")
        let recovered = await states.first(within: .seconds(60)) { message in
            let state = try? ContractCoding.decode(TagState.self, from: message.payload)
            return state?.battery?.level == .ok && (state?.battery?.milliVolts ?? 0) > 2800 && state?.missing == nil
        }
        #expect(recovered != nil, "states: \(states.messages.suffix(3).map(\.text))")
        // Its adverts heard, counted over whole windows, against the rate its new cell's TLM frames say it sends (one a
        // second and a little jitter), once they span a minute of its uptime.
        let counted = await states.first(within: .seconds(120)) { message in
            guard let adverts = (try? ContractCoding.decode(TagState.self, from: message.payload))?.adverts,
                let expected = adverts.expectedPerMinute
            else { return false }
            return (45...65).contains(expected) && adverts.seenPerMinute > 0 && adverts.seenPerMinute <= expected * 1.2
        }
        #expect(counted != nil, "states: \(states.messages.suffix(3).map(\.text))")
        #expect(badge("tag-battery-low").count == 1 && badge("tag-missing").count == 1, "\(said())")
        #expect(badge("tag-found").count == 1 && badge("tag-tlm-reset").count == 1, "\(said())")
        print("lost-badge alerts: \(alerts.messages.filter { $0.text.contains("lost-badge") }.map(\.text))")

        sim.signal(SIGTERM)
        #expect(await sim.waitForExit(timeout: .seconds(60)) == 0, "\(sim.text.suffix(2000))")
        hub.signal(SIGTERM)
        #expect(await hub.waitForExit(timeout: .seconds(60)) == 0, "\(hub.text.suffix(2000))")
        await hubWatcher.shutdown()
        await alertWatcher.shutdown()
        await stateWatcher.shutdown()
        await broker.stop()
    }
}
