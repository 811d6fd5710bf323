import BeaconConfig
import BeaconHub
import BeaconMQTT
import BeaconModel
import BrokerTestSupport
import Foundation
import Logging
import Prometheus
import Synchronization
import Testing
import ZoneInference

/// Home Assistant discovery and webhooks (docs/integrations.md): the exact configs, the core's first states, the
/// running hub against a real mosquitto, and webhook delivery against a live HTTP receiver.
@Suite struct IntegrationsTests {
    static let tagBeacon = "ibeacon:e2c56db5-dffb-48d2-b060-d0f5a71096e0:1:1"
    /// A beacon nobody named, in region `visitors`: tracked under its beacon id.
    static let strayBeacon = "ibeacon:e2c56db5-dffb-48d2-b060-d0f5a71096e0:1:9"
    static let t0 = 1_800_000_000.0
    /// Deleted with the suite's instance, which Swift Testing drops once the test has ended, pass or fail.
    let temporaryDirectory: TemporaryDirectory
    var directory: URL { temporaryDirectory.url }

    init() throws {
        temporaryDirectory = try TemporaryDirectory(prefix: "integrations")
        try TestVenues.row(nameOfA: "Room A").write(
            to: directory.appendingPathComponent("row.yaml"), atomically: true, encoding: .utf8)
    }

    /// hub.yaml for the row venue, with `tag-1` named and region `visitors` covering the stray beacon.
    func configuration(_ extra: String, mqttPort: Int = 1883) throws -> (HubConfiguration, path: String) {
        let path = directory.appendingPathComponent("hub-\(UUID().uuidString.prefix(8)).yaml").path
        try """
        hub: hub-1
        site: row
        venue: row.yaml
        mqtt: { host: 127.0.0.1, port: \(mqttPort), reconnectMinSeconds: 0.1, reconnectMaxSeconds: 0.5 }
        tags: [{ id: tag-1, beacon: "\(Self.tagBeacon)" }]
        regions:
          - { id: visitors, ibeacon: { uuid: e2c56db5-dffb-48d2-b060-d0f5a71096e0, major: 1 } }
          - { id: staff, ibeacon: { uuid: e2c56db5-dffb-48d2-b060-d0f5a71096e0, major: 2 } }
        live: { tickSeconds: 0.2, statusSeconds: 1, heartbeatSeconds: 1, lockKeepAliveSeconds: 5 }
        \(extra)
        """.write(toFile: path, atomically: true, encoding: .utf8)
        return (try HubConfiguration.load(from: path), path)
    }

    static func text(_ message: HubCore.Outgoing) -> String { String(decoding: message.payload, as: UTF8.self) }

    // MARK: Home Assistant discovery, pure

    static let device =
        #""device":{"identifiers":["beacontracker_row"],"manufacturer":"BeaconTracker","model":"beacon-hub","#
        + #""name":"BeaconTracker row","sw_version":"\#(BeaconTrackerVersion.current)"}"#
    static let availability =
        #""availability":[{"payload_available":"online","payload_not_available":"offline","#
        + #""topic":"beacontracker/row/hub/status","value_template":"{{ value_json.state }}"}]"#
    static let origin = #""origin":{"name":"BeaconTracker","sw_version":"\#(BeaconTrackerVersion.current)"}"#

    @Test func discoveryAnnouncesEveryZoneAndNamedTagWithExactConfigs() throws {
        var discovery = HomeAssistantDiscovery(configuration: try configuration("homeAssistant: {}").0)
        let configs = discovery.announceAll()
        #expect(
            configs.map(\.topic) == [
                "homeassistant/sensor/beacontracker_row/a_occupancy/config",
                "homeassistant/sensor/beacontracker_row/b_occupancy/config",
                "homeassistant/sensor/beacontracker_row/c_occupancy/config",
                "homeassistant/sensor/beacontracker_row/tag-1_zone/config",
            ])
        #expect(configs.allSatisfy { $0.retain })
        #expect(
            Self.text(configs[0])
                == "{\(Self.availability),\(Self.device),"
                + #""icon":"mdi:account-group","json_attributes_topic":"beacontracker/row/zones/a/occupancy","#
                + #""name":"Room A occupancy",\#(Self.origin),"qos":1,"state_class":"measurement","#
                + #""state_topic":"beacontracker/row/zones/a/occupancy","unique_id":"beacontracker_row_a_occupancy","#
                + #""value_template":"{{ value_json.count }}"}"#)
        #expect(
            Self.text(configs[3])
                == "{\(Self.availability),\(Self.device),"
                + #""icon":"mdi:map-marker-radius","json_attributes_template":"{{ {'state': value_json.state, "#
                + #"'zone': value_json.get('zone'), 'since': value_json.since, 'confidence': value_json.confidence, "#
                + #"'last_seen': value_json.get('lastSeen')} | tojson }}","#
                + #""json_attributes_topic":"beacontracker/row/tags/tag-1/state","name":"tag-1 zone",\#(Self.origin),"#
                + #""qos":1,"state_topic":"beacontracker/row/tags/tag-1/state","#
                + #""unique_id":"beacontracker_row_tag-1_zone","#
                + #""value_template":"{{ value_json.zone if value_json.state == 'inside' else value_json.state }}"}"#)
    }

    @Test func aTagTheCorePublishesForTheFirstTimeIsAnnouncedOnceBeforeItsState() throws {
        let configuration = try configuration("homeAssistant: { prefix: ha/discovery, nodeID: museum_hub }").0
        var discovery = HomeAssistantDiscovery(configuration: configuration)
        var core = HubCore(configuration: configuration, engine: try configuration.makeEngine(), now: Self.t0)
        core.startPublishing()
        var seq: UInt64 = 0
        func hear(_ beacons: [String], seconds: Int, from start: Double) -> [HubCore.Outgoing] {
            var out: [HubCore.Outgoing] = []
            for second in 0..<seconds {
                let t = start + Double(second)
                seq += 1
                let sightings = beacons.map { Sighting(t: t, beacon: $0, rssi: -60, txPower: -59) }
                core.apply(
                    .batch(
                        SightingBatch(
                            gateway: "gw-a", boot: "boot-1", seq: seq, sent: t, clockSynced: true,
                            sightings: sightings)), at: t)
                core.tick(at: t + 0.5, connected: true)
                out += core.takeOutgoing()
            }
            return out
        }
        let stray = TagID(rawValue: Self.strayBeacon)!
        let strayConfig =
            "ha/discovery/sensor/museum_hub/ibeacon_3ae2c56db5-dffb-48d2-b060-d0f5a71096e0_3a1_3a9_zone/config"
        #expect(discovery.configTopic(tag: stray) == strayConfig)

        // Before the hub said online, first states are only remembered.
        let early = hear([Self.tagBeacon, Self.strayBeacon], seconds: 15, from: Self.t0)
        let strayState = try #require(
            early.last { $0.topic == "beacontracker/row/tags/\(Self.strayBeacon)/state" }, "the core published it")
        #expect(try ContractCoding.decode(TagState.self, from: strayState.payload).zone == "a")
        #expect(discovery.configs(for: early).isEmpty)

        // Online: zones, the named tag, and the stray one seen before.
        let announced = discovery.announceAll().map(\.topic)
        #expect(announced.count == 5 && announced.last == strayConfig)
        #expect(announced.first == "ha/discovery/sensor/museum_hub/a_occupancy/config")

        // A new beacon of the region: announced in the batch that first publishes its state, and only then.
        let newcomer = "ibeacon:e2c56db5-dffb-48d2-b060-d0f5a71096e0:1:10"
        var announcedNew: [[String]] = []
        for second in 0..<15 {
            let out = hear(
                [Self.tagBeacon, Self.strayBeacon, newcomer], seconds: 1, from: Self.t0 + 15 + Double(second))
            let configs = discovery.configs(for: out)
            if !configs.isEmpty || !announcedNew.isEmpty {
                announcedNew.append(configs.map(\.topic))
            }
            if !configs.isEmpty {
                #expect(out.contains { $0.topic == "beacontracker/row/tags/\(newcomer)/state" })
                let config = try JSONSerialization.jsonObject(with: Data(configs[0].payload)) as? [String: Any]
                #expect(config?["state_topic"] as? String == "beacontracker/row/tags/\(newcomer)/state")
                #expect(
                    config?["unique_id"] as? String
                        == "museum_hub_ibeacon_3ae2c56db5-dffb-48d2-b060-d0f5a71096e0_3a1_3a10_zone")
            }
        }
        #expect(announcedNew.first == [discovery.configTopic(tag: TagID(rawValue: newcomer)!)])
        #expect(announcedNew.dropFirst().allSatisfy { $0.isEmpty }, "announced once")
        // A reconnect announces everything again, the newcomer included.
        #expect(discovery.announceAll().count == 6)
    }

    /// Issue 23: a tag whose state carries a battery (its TLM frames) gets a voltage sensor, once, after its zone
    /// sensor; tags without telemetry get none; a reconnect announces it again.
    @Test func aTagReportingABatteryGetsABatterySensorOnce() throws {
        let configuration = try configuration("homeAssistant: { prefix: ha/discovery, nodeID: museum_hub }").0
        var discovery = HomeAssistantDiscovery(configuration: configuration)
        let zones = discovery.announceAll().count
        func state(_ tag: TagID, battery: Int?) throws -> HubCore.Outgoing {
            var state = TagState(
                tag: tag, beacon: "b", state: .inside, zone: "a", since: Self.t0, confidence: 0.9, lastSeen: Self.t0,
                gateways: [])
            state.battery = battery.map { TagState.Battery(milliVolts: $0, level: $0 < 2600 ? .low : .ok, t: Self.t0) }
            return HubCore.Outgoing(
                topic: "beacontracker/row/tags/\(tag)/state", payload: state.fastEncoded()!, retain: true)
        }
        let first = discovery.configs(for: [try state("tag-1", battery: nil), try state("guide-7", battery: 2950)])
        #expect(
            first.map(\.topic) == [
                "ha/discovery/sensor/museum_hub/guide-7_zone/config", discovery.configTopic(batteryOf: "guide-7"),
            ])
        #expect(discovery.configTopic(batteryOf: "guide-7") == "ha/discovery/sensor/museum_hub/guide-7_battery/config")
        let config = try #require(
            try JSONSerialization.jsonObject(with: Data(first[1].payload)) as? [String: Any])
        #expect(config["device_class"] as? String == "voltage" && config["unit_of_measurement"] as? String == "mV")
        #expect(
            config["state_class"] as? String == "measurement" && config["entity_category"] as? String == "diagnostic")
        #expect(config["state_topic"] as? String == "beacontracker/row/tags/guide-7/state")
        #expect((config["value_template"] as? String)?.contains("value_json.battery.milliVolts") == true)
        #expect(config["unique_id"] as? String == "museum_hub_guide-7_battery")
        // Once; a tag that never reports one never gets one.
        #expect(
            discovery.configs(for: [try state("guide-7", battery: 2940), try state("tag-1", battery: nil)]).isEmpty)
        let again = discovery.announceAll().map(\.topic)
        #expect(again.count == zones + 1 + 1 && again.last == discovery.configTopic(batteryOf: "guide-7"))
    }

    @Test(arguments: ["", "homeAssistant: { enabled: false, prefix: ha }"])
    func discoveryTurnedOffAnnouncesNothing(section: String) throws {
        let configuration = try configuration(section).0
        var discovery = HomeAssistantDiscovery(configuration: configuration)
        #expect(discovery.announceAll().isEmpty)
        // A restored state of the stray tag: the core publishes it when it starts publishing.
        let state = TagState(
            tag: TagID(rawValue: Self.strayBeacon)!, beacon: Self.strayBeacon, state: .inside, zone: "a",
            since: Self.t0, confidence: 0.9,
            lastSeen: Self.t0, gateways: [])
        var core = HubCore(configuration: configuration, engine: try configuration.makeEngine(), now: Self.t0)
        core.apply(.tagState(state), at: Self.t0)
        core.startPublishing()
        core.tick(at: Self.t0 + 1, connected: true)
        let out = core.takeOutgoing()
        #expect(out.contains { $0.topic.hasSuffix("/tags/\(Self.strayBeacon)/state") }, "the state is published")
        #expect(discovery.configs(for: out).isEmpty)
    }

    @Test func tagSensorsCanBeLeftOutForLargeVenues() throws {
        var discovery = HomeAssistantDiscovery(
            configuration: try configuration("homeAssistant: { tagSensors: false }").0)
        #expect(discovery.announceAll().map(\.topic).allSatisfy { $0.hasSuffix("_occupancy/config") })
    }

    @Test func idsAreEscapedOneToOneIntoDiscoveryIds() {
        let ids = ["a_b", "a.b", "a:b", "a__b", "a_5fb", "A-b"]
        let escaped = ids.map(HomeAssistantDiscovery.escape)
        #expect(escaped == ["a__b", "a_2eb", "a_3ab", "a____b", "a__5fb", "A-b"])
        #expect(Set(escaped).count == ids.count)
    }

    // MARK: Configuration

    @Test(arguments: [
        ("homeAssistant: { prefix: home/# }", "homeAssistant.prefix", "without +, #"),
        ("homeAssistant: { prefix: /ha }", "homeAssistant.prefix", "empty levels"),
        ("homeAssistant: { nodeID: hub.1 }", "homeAssistant.nodeID", "A-Z a-z 0-9 _ -"),
        ("homeAssistant: { enable: true }", "homeAssistant.enable", "unknown key"),
        ("webhooks: [{ url: 'ftp://example.com/x' }]", "webhooks[0].url", "http:// or https://"),
        ("webhooks: [{ url: 'http://example.com', events: [enter, leave] }]", "webhooks[0].events", "\"leave\""),
        ("webhooks: [{ url: 'http://example.com', events: [] }]", "webhooks[0].events", "omit the key"),
        ("webhooks: [{ url: 'http://example.com', regions: [staff, guides] }]", "webhooks", "region \"guides\""),
        ("webhooks: [{ url: 'http://example.com', zones: [a/b] }]", "webhooks[0].zones[0]", "expected an id"),
        (
            "webhooks: [{ url: 'http://example.com', headers: { Content-Type: text/plain } }]", "webhooks[0].headers",
            "set by the hub"
        ),
        ("webhooks: [{ url: 'http://example.com', maxAttempts: 0 }]", "webhooks[0].maxAttempts", "between 1"),
        (
            "webhooks: [{ url: 'http://example.com', retryInitialSeconds: 5, retryMaxSeconds: 2 }]",
            "webhooks[0].retryMaxSeconds", "between 5"
        ),
        ("webhooks: [{ url: 'http://example.com', maxQueue: 5 }]", "webhooks[0].maxQueue", "unknown key"),
    ])
    func aWrongIntegrationSettingIsRefusedNamingTheKey(setting: String, key: String, message: String) throws {
        #expect {
            _ = try configuration(setting)
        } throws: { error in
            let error = error as? ConfigError
            return error?.key == key && error?.message.contains(message) == true
        }
    }

    @Test(arguments: [
        ("http: { host: 0.0.0.0 }", "http.host", "needs tokenFile"),
        ("http: { port: 70000 }", "http.port", "between 0"),
        ("http: { corsOrigins: ['https://intranet.example/'] }", "http.corsOrigins", "no path or trailing slash"),
        ("http: { corsOrigins: [intranet.example] }", "http.corsOrigins", "scheme://host[:port]"),
        ("http: { cors: ['*'] }", "http.cors", "unknown key"),
    ])
    func aWrongHTTPSettingIsRefusedNamingTheKey(setting: String, key: String, message: String) throws {
        #expect {
            _ = try configuration(setting)
        } throws: { error in
            let error = error as? ConfigError
            return error?.key == key && error?.message.contains(message) == true
        }
    }

    @Test func corsOriginsAreReadAsWritten() throws {
        let (configuration, _) = try configuration("http: { corsOrigins: ['https://intranet.example:8443', '*'] }")
        #expect(configuration.http?.corsOrigins == ["https://intranet.example:8443", "*"])
    }

    @Test func integrationDefaultsWhenSectionsAreAbsentOrEmpty() throws {
        let absent = try configuration("").0
        #expect(!absent.homeAssistant.enabled && absent.webhooks.isEmpty)
        let present = try configuration("homeAssistant: {}\nwebhooks: [{ url: \"https://example.com/hook\" }]").0
        #expect(present.homeAssistant.enabled && present.homeAssistant.prefix == "homeassistant")
        let webhook = try #require(present.webhooks.first)
        #expect(webhook.events == Set(ZoneEventType.allCases) && webhook.regions == nil && webhook.zones == nil)
        #expect(webhook.maxAttempts == 6 && webhook.retryInitialSeconds == 1 && webhook.retryMaxSeconds == 60)
        #expect(webhook.timeoutSeconds == 10 && webhook.maxQueued == 1000)
    }

    @Test func theShippedHubYamlExamplesLoadOnceUncommented() throws {
        let file = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("config/hub.yaml")
        let lines = try String(contentsOf: file, encoding: .utf8).split(
            separator: "\n", omittingEmptySubsequences: false)
        let uncommented = lines.map { line -> Substring in
            let rest = line.dropFirst(2)
            let example = rest.hasPrefix("homeAssistant:") || rest.hasPrefix("webhooks:") || rest.hasPrefix(" ")
            return line.hasPrefix("# ") && example ? rest : line
        }
        let configuration = try ConfigLoader.decode(
            HubConfiguration.self, from: uncommented.joined(separator: "\n"), file: file.path)
        #expect(configuration.homeAssistant.enabled && configuration.homeAssistant.prefix == "homeassistant")
        #expect(configuration.webhooks.map(\.events.count) == [2, 3])
        #expect(configuration.webhooks[1].regions == ["visitors"])
        #expect(configuration.webhooks[0].headers["Authorization"] == "Bearer CHANGE-ME")
    }

    // MARK: Webhooks, pure

    @Test(arguments: [
        (200, WebhookPolicy.Verdict.delivered), (204, .delivered), (400, .refused), (401, .refused), (404, .refused),
        (408, .retry), (429, .retry), (500, .retry), (503, .retry), (302, .retry),
    ])
    func aStatusDecidesWhetherToRetry(status: Int, verdict: WebhookPolicy.Verdict) {
        #expect(WebhookPolicy.verdict(status: status) == verdict)
    }

    @Test func retryWaitsDoubleUpToTheMaximumWithJitterBetweenHalfAndAll() {
        let waits = (1...8).map { WebhookPolicy.delay(after: $0, initial: 1, maximum: 60, jitter: 1) }
        #expect(waits == [1, 2, 4, 8, 16, 32, 60, 60])
        #expect(WebhookPolicy.delay(after: 3, initial: 1, maximum: 60, jitter: 0) == 2)
        #expect(WebhookPolicy.delay(after: 200, initial: 1, maximum: 60, jitter: 0.5) == 45)
    }

    // MARK: Webhooks against a live receiver

    static func event(
        _ type: ZoneEventType, zone: ZoneID? = "a", region: String? = "visitors", reason: String = "test"
    ) -> ZoneEvent {
        ZoneEvent(
            type: type, tag: type == .alert ? nil : "tag-1", zone: zone, t: t0, confidence: 0.9, reason: reason,
            region: region, code: type == .alert ? "gateway-offline" : nil)
    }

    /// A dispatcher for the webhooks of `yaml` (a `webhooks:` list), running until the test ends it.
    func dispatcher(_ yaml: String) throws -> (WebhookDispatcher, Task<Void, Never>) {
        var logger = Logger(label: "test.webhooks")
        logger.logLevel = .debug
        let dispatcher = WebhookDispatcher(
            try configuration(yaml).0.webhooks, topics: Topics(site: "row"), logger: logger)
        return (dispatcher, Task { await dispatcher.run() })
    }

    /// Waits until `done` holds for the dispatcher's counts (or 20 s passed); returns them.
    @discardableResult
    static func settle(
        _ dispatcher: WebhookDispatcher, _ done: ([WebhookDispatcher.Counts]) -> Bool
    ) async -> [WebhookDispatcher.Counts] {
        // Generous: it returns as soon as `done` holds. A CI run whose test process was starved for about 20 s (a
        // build beside it on both cores) saw no verdict within the 20 s this used to wait.
        let deadline = ContinuousClock.now.advanced(by: .seconds(60))
        while ContinuousClock.now < deadline, !done(dispatcher.counts) {
            try? await Task.sleep(for: .milliseconds(10))
        }
        return dispatcher.counts
    }

    @Test func webhooksGetOnlyTheTypesRegionsAndZonesTheyAskForAsPublished() async throws {
        let receiver = WebhookReceiver()
        let base = try await receiver.start()
        defer { receiver.stop() }
        let (dispatcher, running) = try dispatcher(
            """
            webhooks:
              - { url: "\(base)/enter", events: [enter], regions: [visitors], headers: { Authorization: Bearer s3cret } }
              - { url: "\(base)/b", zones: [b] }
            """)
        defer { running.cancel() }
        let events = [
            Self.event(.enter, reason: "1"), Self.event(.exit, reason: "2"),
            Self.event(.enter, zone: "b", region: "staff", reason: "3"), Self.event(.alert, zone: nil, region: nil),
            Self.event(.stayed, zone: "b", region: nil, reason: "5"),
        ]
        for event in events { dispatcher.enqueue(event) }
        let counts = await Self.settle(dispatcher) { $0.map(\.delivered) == [1, 2] }
        #expect(counts.map(\.delivered) == [1, 2] && counts.map(\.failed) == [0, 0])
        let requests = await receiver.wait(for: 3)
        let enter = requests.filter { $0.path == "/enter" }
        #expect(enter.map(\.body) == [try ContractCoding.encode(events[0])])
        #expect(enter.first?.headers["authorization"] == "Bearer s3cret")
        #expect(enter.first?.headers["content-type"] == "application/json")
        #expect(enter.first?.headers["x-beacontracker-event"] == "enter")
        let zoneB = requests.filter { $0.path == "/b" }
        #expect(zoneB.map(\.body) == [try ContractCoding.encode(events[2]), try ContractCoding.encode(events[4])])
        #expect(zoneB.map { $0.headers["x-beacontracker-event"] } == ["enter", "stayed"])
        #expect(zoneB.allSatisfy { $0.headers["authorization"] == nil })
    }

    @Test func aFailingWebhookIsRetriedWithGrowingWaitsUntilItAnswers2xx() async throws {
        let receiver = WebhookReceiver(answers: [500, 500, 503])
        let base = try await receiver.start()
        defer { receiver.stop() }
        let (dispatcher, running) = try dispatcher(
            "webhooks: [{ url: \"\(base)/hook\", retryInitialSeconds: 0.2, retryMaxSeconds: 10 }]")
        defer { running.cancel() }
        let event = Self.event(.exit)
        dispatcher.enqueue(event)
        let counts = await Self.settle(dispatcher) { $0[0].delivered == 1 }
        #expect(counts[0].delivered == 1 && counts[0].attempts == 4 && counts[0].failed == 0)
        let requests = receiver.requests
        #expect(requests.count == 4)
        #expect(requests.allSatisfy { $0.body == (try? ContractCoding.encode(event)) })
        // Waits of 0.2, 0.4 and 0.8 s, each drawn between half and all of it.
        let gaps = zip(requests.dropFirst(), requests).map { ($0.at - $1.at) / .seconds(1) }
        #expect(gaps.count == 3)
        for (gap, least) in zip(gaps, [0.1, 0.2, 0.4]) { #expect(gap >= least - 0.002, "gaps \(gaps)") }
    }

    @Test(arguments: [
        ([400], 1, 0, 1), ([404], 1, 0, 1), ([408], 2, 1, 0), ([429], 2, 1, 0), ([500, 502, 500], 3, 0, 1),
    ])
    func aRefusalIsNotRetriedWhileTimeoutsThrottlingAndServerErrorsAre(
        answers: [Int], attempts: Int, delivered: Int, failed: Int
    ) async throws {
        let receiver = WebhookReceiver(answers: answers)
        let base = try await receiver.start()
        defer { receiver.stop() }
        let (dispatcher, running) = try dispatcher(
            "webhooks: [{ url: \"\(base)/hook\", maxAttempts: 3, retryInitialSeconds: 0.01 }]")
        defer { running.cancel() }
        dispatcher.enqueue(Self.event(.enter))
        let counts = await Self.settle(dispatcher) { $0[0].delivered + $0[0].failed == 1 }
        #expect(counts[0].attempts == attempts && counts[0].delivered == delivered && counts[0].failed == failed)
        // Nothing more comes after the verdict.
        try await Task.sleep(for: .milliseconds(200))
        #expect(receiver.requests.count == attempts)
    }

    /// A receiver that is down refuses the connection: each attempt fails at once. The port is held, not found free
    /// and let go (a receiver of a test beside it could take it). When CI runs saw no verdict within the 20 s this
    /// test waits, the cause was CalibrateToolTests holding a thread of the cooperative pool for ~40 s beside it:
    /// it now runs in the first round, and this one among the live suites (scripts/test.sh).
    @Test func aReceiverThatIsDownFailsAfterMaxAttempts() async throws {
        let down = try FreePort.Refused()
        defer { down.release() }
        let (dispatcher, running) = try dispatcher(
            "webhooks: [{ url: \"http://127.0.0.1:\(down.port)/hook\", maxAttempts: 3, retryInitialSeconds: 0.01 }]")
        defer { running.cancel() }
        dispatcher.enqueue(Self.event(.enter))
        let counts = await Self.settle(dispatcher) { $0[0].failed == 1 }
        #expect(counts[0].failed == 1 && counts[0].attempts == 3 && counts[0].delivered == 0)
    }

    @Test func webhookLogsNameTheHostButNeverThePathOrQuery() async throws {
        let down = try FreePort.Refused()
        defer { down.release() }
        let port = down.port
        let records = RecordingLogHandler.Records()
        let logger = Logger(label: "test.webhooks") { _ in RecordingLogHandler(records: records) }
        let (loaded, _) = try configuration(
            "webhooks: [{ url: \"http://127.0.0.1:\(port)/s3cret-path?token=s3cret\", maxAttempts: 2, "
                + "retryInitialSeconds: 0.01 }]")
        let dispatcher = WebhookDispatcher(loaded.webhooks, topics: Topics(site: "row"), logger: logger)
        let running = Task { await dispatcher.run() }
        dispatcher.enqueue(Self.event(.enter))
        await Self.settle(dispatcher) { $0[0].failed == 1 }
        running.cancel()
        await running.value
        let lines = records.lines.withLock { $0 }
        #expect(lines.contains { $0.contains("webhook attempt failed: retrying") && $0.contains("host=127.0.0.1") })
        #expect(lines.contains { $0.contains("webhook delivery failed: attempts exhausted") })
        #expect(lines.contains { $0.contains("webhook counts") && $0.contains("failed=1") })
        #expect(!lines.contains { $0.contains("s3cret") }, "\(lines)")
    }

    @Test func anUnansweredAttemptTimesOutAndIsRetried() async throws {
        let receiver = WebhookReceiver(holdFirst: 1, holdLimit: .seconds(40))
        let base = try await receiver.start()
        defer {
            receiver.release()
            receiver.stop()
        }
        let (dispatcher, running) = try dispatcher(
            "webhooks: [{ url: \"\(base)/hook\", timeoutSeconds: 2, retryInitialSeconds: 0.01 }]")
        defer { running.cancel() }
        let start = ContinuousClock.now
        dispatcher.enqueue(Self.event(.enter))
        let counts = await Self.settle(dispatcher) { $0[0].delivered == 1 }
        // At least two attempts: the held one was given up. A busy machine may also time out a later attempt (a CI
        // run with both cores busy took over 0.5 s to answer one), so the count is a floor, not an exact number.
        #expect(counts[0].delivered == 1 && counts[0].attempts >= 2)
        let elapsed = ContinuousClock.now - start
        // Well before the receiver would have answered the held attempt (40 s), even when a busy machine times out a
        // retry or two as well.
        #expect(elapsed >= .seconds(2) && elapsed < .seconds(30), "gave up the held attempt at its deadline")
    }

    @Test func aFullQueueDropsTheOldestWaitingEventsAndCountsThem() async throws {
        let receiver = WebhookReceiver(holdFirst: 1)
        let base = try await receiver.start()
        defer {
            receiver.release()
            receiver.stop()
        }
        let (dispatcher, running) = try dispatcher("webhooks: [{ url: \"\(base)/hook\", maxQueued: 2 }]")
        defer { running.cancel() }
        let events = (1...5).map { Self.event(.enter, reason: "event \($0)") }
        dispatcher.enqueue(events[0])
        #expect(await receiver.wait(for: 1).count == 1, "the first is being delivered (held)")
        for event in events.dropFirst() { dispatcher.enqueue(event) }
        #expect(dispatcher.counts[0].dropped == 2 && dispatcher.counts[0].queued == 2)
        receiver.release()
        let counts = await Self.settle(dispatcher) { $0[0].delivered == 3 }
        #expect(counts[0].delivered == 3 && counts[0].dropped == 2 && counts[0].queued == 0)
        let reasons = receiver.requests.compactMap { try? ContractCoding.decode(ZoneEvent.self, from: $0.body).reason }
        #expect(reasons == ["event 1", "event 4", "event 5"])
    }

    // MARK: The running hub against a real mosquitto

    /// Plays gateway gw-a: its status, then batches hearing `beacons` loudly, twice a second, until cancelled.
    static func feedGatewayA(_ broker: MosquittoBroker, beacons: [String]) async throws -> Task<Void, Never> {
        let client = try MQTTClient(
            configuration: MQTTConfiguration(host: broker.host, port: broker.port, clientID: "fake-gw-a"))
        try await client.connect()
        let topics = Topics(site: "row")
        let boot = UUID().uuidString.lowercased()
        let status = GatewayStatus(
            gateway: "gw-a", state: .online, boot: boot, t: Date().timeIntervalSince1970, agentVersion: "test",
            clockSynced: true, heartbeatSeconds: 30)
        try await client.publish(try ContractCoding.encode(status), to: topics.gatewayStatus("gw-a"), retain: true)
        return Task {
            var seq: UInt64 = 0
            while !Task.isCancelled {
                seq += 1
                let now = Date().timeIntervalSince1970
                let batch = SightingBatch(
                    gateway: "gw-a", boot: boot, seq: seq, sent: now, clockSynced: true,
                    sightings: beacons.map { Sighting(t: now - 0.1, beacon: $0, rssi: -60, txPower: -59) })
                if let payload = try? ContractCoding.encode(batch) {
                    try? await client.publish(payload, to: topics.sightings("gw-a"))
                }
                try? await Task.sleep(for: .milliseconds(500))
            }
            await client.shutdown()
        }
    }

    static func collect(_ broker: MosquittoBroker, _ filter: String, id: String) async throws -> (
        MQTTClient, MessageCollector
    ) {
        let client = try MQTTClient(
            configuration: MQTTConfiguration(host: broker.host, port: broker.port, clientID: id))
        try await client.connect()
        return (client, MessageCollector(try await client.subscribe(to: filter)))
    }

    /// The hub built on a thread of its own: building its engine's maps is synchronous work, which a stack dump caught
    /// holding a thread of the cooperative pool while the live tests beside this one waited to be scheduled.
    func runHub(_ extra: String, broker: MosquittoBroker) async throws -> (Hub, Task<Void, Never>) {
        let (configuration, path) = try configuration(extra, mqttPort: broker.port)
        var logger = Logger(label: "test.hub")
        logger.logLevel = .warning
        let hub = try await onOwnThread { try buildHub(configuration: configuration, configFile: path, logger: logger) }
        return (hub, Task { try? await hub.run() })
    }

    @Test func theRunningHubAnnouncesToHomeAssistantPostsEventsAndAnnouncesAgainAfterABrokerRestart() async throws {
        var options = MosquittoBroker.Options()
        options.persistence = false
        let broker = try MosquittoBroker(options: options)
        try await broker.start()
        let receiver = WebhookReceiver()
        let base = try await receiver.start()
        defer { receiver.stop() }
        let (watcher, everything) = try await Self.collect(broker, "#", id: "watch-all")
        let (running, hub) = try await runHub(
            """
            homeAssistant: { enabled: true }
            webhooks: [{ url: "\(base)/events", events: [enter], regions: [visitors] }]
            """, broker: broker)
        let prefix = "homeassistant/sensor/beacontracker_row/"
        let named = ["a_occupancy", "b_occupancy", "c_occupancy", "tag-1_zone"].map { prefix + $0 + "/config" }
        let stray = prefix + "ibeacon_3ae2c56db5-dffb-48d2-b060-d0f5a71096e0_3a1_3a9_zone/config"

        // Online, then every zone and the named tag.
        let lastNamed = await everything.first(within: .seconds(30)) { $0.topic == named[3] }
        #expect(lastNamed != nil, "announced")
        var topics = everything.messages.map(\.topic)
        let online = topics.firstIndex(of: "beacontracker/row/hub/status")
        #expect(online != nil && online! < topics.firstIndex(of: named[0])!, "after the hub said online")
        #expect(Set(topics.filter { $0.hasPrefix("homeassistant/") }) == Set(named))

        // A stray beacon of region visitors shows up: its config goes out before its first state, and its enter
        // reaches the webhook exactly as published.
        let feeding = try await Self.feedGatewayA(broker, beacons: [Self.tagBeacon, Self.strayBeacon])
        let strayState = "beacontracker/row/tags/\(Self.strayBeacon)/state"
        _ = await everything.first(within: .seconds(30)) { $0.topic == strayState }
        topics = everything.messages.map(\.topic)
        let configAt = try #require(topics.firstIndex(of: stray), "the stray tag is announced")
        #expect(configAt < topics.firstIndex(of: strayState)!)
        let requests = await receiver.wait(for: 1, within: .seconds(30))
        let posted = try #require(requests.first)
        let body = posted.body
        let published = await everything.first(within: .seconds(5)) { message in
            message.topic == "beacontracker/row/events/enter" && message.payload == body
        }
        #expect(published != nil, "posted exactly as published")
        #expect(try ContractCoding.decode(ZoneEvent.self, from: posted.body).region == "visitors")
        #expect(posted.headers["x-beacontracker-event"] == "enter")
        // /metrics counts the delivery by the webhook's place in the list (its URL may hold a secret).
        var metrics = ""
        for _ in 0..<20 where !metrics.contains("beacontracker_webhook_events_total") {
            try await Task.sleep(for: .milliseconds(250))
            metrics = String(decoding: running.metrics.registry.emitToBuffer(), as: UTF8.self)
        }
        let delivered = metrics.firstMatch(
            of: /beacontracker_webhook_events_total\{webhook="0",outcome="delivered"\} ([0-9]+)/)
        #expect(delivered.flatMap { Int($0.1) } ?? 0 >= 1, "\(metrics)")
        #expect(metrics.contains("beacontracker_webhook_attempts_total{webhook=\"0\"}"))
        #expect(!metrics.contains(base.absoluteString), "no URL in the metrics")
        feeding.cancel()
        await feeding.value

        // The broker restarts without its retained messages; once the hub is back, the configs are there again.
        await watcher.shutdown()
        await broker.stop()
        try await broker.start()
        var again: Set<String> = []
        let deadline = ContinuousClock.now.advanced(by: .seconds(30))
        while ContinuousClock.now < deadline, again != Set(named + [stray]) {
            try await Task.sleep(for: .milliseconds(500))
            guard let (client, retained) = try? await Self.collect(broker, "homeassistant/#", id: "watch-ha") else {
                continue
            }
            let messages = await retained.wait(for: 5, within: .seconds(1))
            again = Set(messages.filter(\.retained).map(\.topic))
            await client.shutdown()
        }
        #expect(again == Set(named + [stray]), "republished and retained")
        hub.cancel()
        await hub.value
        await broker.stop()
    }

    @Test func theRunningHubWithoutTheSectionPublishesNothingForHomeAssistant() async throws {
        let broker = try MosquittoBroker()
        try await broker.start()
        let (watcher, everything) = try await Self.collect(broker, "#", id: "watch-all")
        let (_, hub) = try await runHub("", broker: broker)
        let online = await everything.first(within: .seconds(30)) { message in
            message.topic == "beacontracker/row/hub/status"
                && (try? ContractCoding.decode(HubStatus.self, from: message.payload))?.state == .online
        }
        #expect(online != nil)
        // The periodic status (every second here) comes after the moment announcements would have gone out.
        let count = everything.messages.count
        _ = await everything.wait(for: count + 2, within: .seconds(5))
        #expect(everything.messages.contains { $0.topic == "beacontracker/row/zones/a/occupancy" })
        #expect(!everything.messages.contains { $0.topic.hasPrefix("homeassistant/") })
        hub.cancel()
        await hub.value
        await watcher.shutdown()
        await broker.stop()
    }
}
