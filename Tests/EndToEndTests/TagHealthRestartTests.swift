import BeaconMQTT
import BeaconModel
import BeaconStore
import BrokerTestSupport
import Foundation
import Testing

/// A hub stopped and started again while its tags are heard: tags' health carries on as it was at the stop, and the
/// restarted hub raises no `tag-missing` (nor `tag-found`) for tags it has not itself found silent. A real mosquitto,
/// the hub as a program on a SQLite history, two hand-played agents sending tags with Eddystone-TLM frames.
@Suite struct TagHealthRestartTests {
    static let tags = (1...4).map { "tag-\($0)" }
    static func beacon(_ index: Int) -> String { "eddystone-uid:00112233445566778899:0000000000\(index)\(index)" }

    let temporaryDirectory: TemporaryDirectory
    var directory: URL { temporaryDirectory.url }

    init() throws {
        temporaryDirectory = try TemporaryDirectory(prefix: "health-restart")
        try TestVenues.row().write(to: directory.appendingPathComponent("row.yaml"), atomically: true, encoding: .utf8)
    }

    /// One batch of every tag from `agent`: tag N at a level of its own, with a TLM frame (its battery, a count that
    /// rises with `round`).
    static func sightings(round: Int, loud: Bool) -> [Sighting] {
        let now = Date().timeIntervalSince1970
        return Self.tags.indices.map { index in
            Sighting(
                t: now - 0.1, beacon: beacon(index + 1), rssi: loud ? -62 - index : -88, txPower: -59,
                kind: .eddystoneUID,
                extras: SightingExtras(
                    tlm: Telemetry(
                        version: 0, batteryMilliVolts: 2900 - 10 * index, temperatureCelsius: 20,
                        advertisingCount: UInt32(1000 + round), secondsSinceBoot: Double(100 + round))))
        }
    }

    @Test func aRestartedHubCarriesOnTagHealthWithoutAFalseMissingOrFound() async throws {
        let broker = try MosquittoBroker()
        try await broker.start()
        let database = directory.appendingPathComponent("hub.db").path
        let config = directory.appendingPathComponent("hub.yaml").path
        let tagLines = Self.tags.indices.map { "  - { id: \(Self.tags[$0]), beacon: \"\(Self.beacon($0 + 1))\" }" }
        try """
        hub: hub-1
        site: row
        venue: row.yaml
        mqtt: { host: 127.0.0.1, port: \(broker.port), reconnectMinSeconds: 0.1, reconnectMaxSeconds: 0.5 }
        tags:
        \(tagLines.joined(separator: "\n"))
        live: { tickSeconds: 0.2, statusSeconds: 1, heartbeatSeconds: 1 }
        tagHealth: { missingAfterSeconds: 60 }
        store: { path: \(database), commitSeconds: 0.5 }
        """.write(toFile: config, atomically: true, encoding: .utf8)
        let (statusWatcher, statuses) = try await watch(broker, "beacontracker/row/hub/status")
        let (alertWatcher, alerts) = try await watch(broker, "beacontracker/row/events/alert")
        let (stateWatcher, states) = try await watch(broker, "beacontracker/row/tags/+/state")
        let near = try await HubServiceTests.FakeAgent(broker, gateway: "gw-a")
        let far = try await HubServiceTests.FakeAgent(broker, gateway: "gw-b")

        // The agents play on, a batch of every tag each second from each, until the test ends.
        let playing = Task {
            var round = 0
            while !Task.isCancelled {
                round += 1
                try? await near.status()
                try? await far.status()
                try? await near.sightings(Self.sightings(round: round, loud: true))
                try? await far.sightings(Self.sightings(round: round, loud: false))
                try? await Task.sleep(for: .seconds(1))
            }
        }
        defer { playing.cancel() }
        func online(after count: Int) async -> Bool {
            await statuses.first(within: .seconds(60)) { message in
                statuses.messages.count > count && message.text.contains("\"online\"")
            } != nil
        }
        var hub = try Programs.Running("beacon-hub", ["run", "--config", config])
        #expect(await online(after: 0), "\(hub.text)")
        // Every tag placed, with its battery, in its retained state.
        @Sendable func latest() -> [String: TagState] {
            var latest: [String: TagState] = [:]
            for message in states.messages {
                guard let state = try? ContractCoding.decode(TagState.self, from: message.payload) else { continue }
                latest[state.tag.rawValue] = state
            }
            return latest
        }
        let placed = await states.first(within: .seconds(60)) { _ in
            let now = latest()
            return Self.tags.allSatisfy { now[$0]?.zone == "a" && now[$0]?.battery != nil }
        }
        #expect(placed != nil, "states: \(latest()) hub: \(hub.text.suffix(2000))")
        // Longer than missingAfterSeconds past each tag's first save and short of TagHealth.saveSeconds: a stop that
        // saved nothing would leave sightings over a minute stale, which a restart would take for silence.
        try await Task.sleep(for: .seconds(65))

        let beforeStop = latest()
        hub.signal(SIGTERM)
        let stoppedAt = Date().timeIntervalSince1970
        #expect(await hub.waitForExit(timeout: .seconds(60)) == 0, "\(hub.text.suffix(2000))")
        // The history holds each tag's health as it was at the stop.
        let store = try HubStore(readingFrom: database)
        for (index, tag) in Self.tags.enumerated() {
            let seen = try await store.integer("SELECT CAST(last_seen AS INTEGER) FROM tag_health WHERE tag = '\(tag)'")
            let stale = stoppedAt - Double(seen ?? 0)
            #expect(stale <= 8, "\(tag)'s last sighting saved \(stale) s stale")
            #expect(
                try await store.integer("SELECT count(*) FROM tag_health WHERE tag = '\(tag)' AND last_zone = 'a'")
                    == 1, "\(tag) saved without its zone")
            #expect(
                try await store.integer("SELECT milli_volts FROM tag_health WHERE tag = '\(tag)'") == 2900 - 10 * index)
            #expect(
                try await store.integer("SELECT count(*) FROM battery_hourly WHERE tag = '\(tag)'") ?? 0 >= 1,
                "\(tag) has no hourly battery reading")
        }
        try store.close()

        // Started again while the tags are heard: no alert about them, and their retained state goes on from where
        // it was (its last sighting does not go back, its battery is the one it had).
        let alertsBefore = alerts.messages.count
        let statesBefore = states.messages.count
        hub = try Programs.Running("beacon-hub", ["run", "--config", config])
        #expect(await online(after: statuses.messages.count), "\(hub.text)")
        // Past the first look for missing tags (a quarter of missingAfterSeconds) and the tags' republished states.
        try await Task.sleep(for: .seconds(20))
        let tagAlerts = alerts.messages.dropFirst(alertsBefore).filter { $0.text.contains("\"tag-") }
        #expect(tagAlerts.isEmpty, "after the restart: \(tagAlerts.map(\.text))")
        for message in states.messages.dropFirst(statesBefore) {
            guard let state = try? ContractCoding.decode(TagState.self, from: message.payload),
                let before = beforeStop[state.tag.rawValue]
            else { continue }
            #expect(
                (state.lastSeen ?? 0) >= (before.lastSeen ?? 0) - 0.001,
                "\(state.tag)'s last sighting went back: \(before.lastSeen ?? 0) → \(state.lastSeen ?? 0)")
            #expect(state.battery?.milliVolts == before.battery?.milliVolts, "\(state.tag): \(state.battery as Any)")
            #expect(state.missing == nil, "\(state.tag) missing after the restart")
        }
        hub.signal(SIGTERM)
        #expect(await hub.waitForExit(timeout: .seconds(60)) == 0, "\(hub.text.suffix(2000))")
        playing.cancel()
        await near.client.shutdown()
        await far.client.shutdown()
        await statusWatcher.shutdown()
        await alertWatcher.shutdown()
        await stateWatcher.shutdown()
        await broker.stop()
    }
}
