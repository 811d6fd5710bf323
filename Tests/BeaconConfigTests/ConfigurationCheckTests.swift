import BeaconAgent
import BeaconConfig
import BeaconHub
import Foundation
import Testing

/// `beacon-hub check` and `beacon-agent check` as libraries: the shipped files pass, and each broken file names its
/// problems by key — all of them, not the first only — without anything being created.
@Suite struct ConfigurationCheckTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()
    static let museumVenue = root.appendingPathComponent("config/venues/museum.yaml").path
    static let storeVenue = root.appendingPathComponent("config/venues/store.yaml").path
    static let shipped = [
        "agent.yaml", "hub.yaml", "hub-store.yaml", "hub-museum-harsh.yaml", "hub-flat-kolakowski.yaml",
        "hub-tetam-hall.yaml",
    ]

    let directory: URL

    init() throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("check-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    }

    func path(_ name: String) -> String { directory.appendingPathComponent(name).path }

    @discardableResult
    func write(_ name: String, _ text: String, mode: Int = 0o644) throws -> String {
        try text.write(toFile: path(name), atomically: true, encoding: .utf8)
        try FileManager.default.setAttributes([.posixPermissions: mode], ofItemAtPath: path(name))
        return path(name)
    }

    /// A hub.yaml for the museum venue with `extra` appended; store and everything else as `extra` says.
    func hub(_ extra: String = "") throws -> ConfigCheckReport {
        HubConfigurationCheck.run(
            configFile: try write("hub.yaml", "site: museum\nvenue: \(Self.museumVenue)\n" + extra))
    }

    func agent(_ extra: String = "") throws -> ConfigCheckReport {
        AgentConfigurationCheck.run(
            configFile: try write(
                "agent.yaml", "gateway: gw-1\nsite: museum\noutbox: { path: \(path("outbox.db")) }\n" + extra))
    }

    /// A shipped file as installed: its state directory (`/var/lib/…`, which the systemd unit creates) moved into the
    /// test's folder, its venues beside it as in /etc/beacontracker. Nothing else changed.
    func installed(_ name: String) throws -> String {
        let text = try String(
            contentsOf: Self.root.appendingPathComponent("config").appendingPathComponent(name), encoding: .utf8)
        try FileManager.default.createSymbolicLink(
            atPath: path("venues"), withDestinationPath: Self.root.appendingPathComponent("config/venues").path)
        return try write(
            name,
            text.replacingOccurrences(of: "/var/lib/beacontracker/", with: directory.path + "/")
                .replacingOccurrences(of: "/var/lib/beacon-agent/", with: directory.path + "/"))
    }

    func check(_ path: String) -> ConfigCheckReport {
        path.hasSuffix("agent.yaml")
            ? AgentConfigurationCheck.run(configFile: path) : HubConfigurationCheck.run(configFile: path)
    }

    // MARK: The shipped files

    @Test(arguments: shipped)
    func shippedConfigurationPassesAsInstalled(name: String) throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        let report = check(try installed(name))
        #expect(report.passed, "\(report.text)")
        #expect(report.text.hasPrefix("\(path(name)): ok\n"))
        let labels = report.summary.map(\.label)
        if name == "agent.yaml" {
            #expect(labels == ["gateway", "broker", "regions", "outbox", "scanner"])
            #expect(report.text.contains("outbox   \(path("outbox.db")) (at most 64 MiB and 72 h)"))
        } else {
            #expect(labels.starts(with: ["site", "hub", "zones", "gateways", "tags", "regions"]))
            #expect(labels.contains("store") && labels.contains("http") && labels.contains("broker"))
        }
        // Nothing made: no database, no writer lock.
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path).sorted() == [name, "venues"])
    }

    /// In place, on a machine without the units' state directories, those are all a check can find wrong.
    @Test(arguments: shipped)
    func shippedConfigurationInPlaceLacksAtMostItsStateDirectory(name: String) throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        let report = check(Self.root.appendingPathComponent("config").appendingPathComponent(name).path)
        #expect(Set(report.problems.map(\.key)).isSubset(of: ["store.path", "outbox.path"]), "\(report.text)")
        for problem in report.problems { #expect(problem.message.contains("/var/lib/")) }
    }

    @Test func shippedHubSummaryNamesWhatItSetsUp() throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        let report = check(try installed("hub.yaml"))
        let lines = Dictionary(uniqueKeysWithValues: report.summary.map { ($0.label, $0.value) })
        #expect(lines["site"] == "museum, venue \(path("venues/museum.yaml"))")
        #expect(lines["hub"] == "hub-1")
        #expect(lines["zones"] == "9: entrance, egypt, greece, cafe, rome, …")
        #expect(lines["tags"] == "24 named (24 in the venue, 0 in hub.yaml)")
        #expect(lines["regions"] == "2: visitors, staff")
        #expect(lines["store"] == "\(path("hub.db")) (synchronous normal)")
        #expect(lines["http"] == "127.0.0.1:8080 (no token)")
        #expect(lines["broker"] == "127.0.0.1:1883 (plain TCP), root beacontracker, client hub-hub-1")
    }

    // MARK: One problem each

    @Test func unknownKeyIsNamed() throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        let report = try hub("mqtt:\n  prot: 1883\n")
        #expect(report.problems.map(\.key) == ["mqtt.prot"])
        #expect(report.problems.first?.code == .unknownKey)
        #expect(report.summary.isEmpty)
        #expect(report.text.hasPrefix("error: \(path("hub.yaml")): mqtt.prot: unknown key: expected one of host, "))
        #expect(report.text.hasSuffix("\n\(path("hub.yaml")): 1 problem"))
    }

    @Test func missingVenueFileIsNamed() throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        let report = HubConfigurationCheck.run(
            configFile: try write("hub.yaml", "site: museum\nvenue: venues/x.yaml\n"))
        #expect(report.problems.map(\.key) == ["venue"])
        #expect(
            report.problems.first?.message == "the venue file \(path("venues/x.yaml")) does not exist: check the path")
    }

    @Test func venueOfAnotherSiteIsNamed() throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        let report = HubConfigurationCheck.run(
            configFile: try write("hub.yaml", "site: museum\nvenue: \(Self.storeVenue)\n"))
        #expect(report.problems.map(\.key) == ["venue"])
        #expect(report.problems.first?.message.contains("is the venue of site store") == true)
    }

    @Test func hubWithoutVenueIsNamed() throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        let report = HubConfigurationCheck.run(configFile: try write("hub.yaml", "site: museum\n"))
        #expect(report.problems.map(\.key) == ["venue"])
        #expect(report.problems.first?.code == .missingKey)
        #expect(report.problems.first?.file == path("hub.yaml"))
    }

    /// A calibration's placements (a gateway placed from the dashboard) are read with it; one of a gateway or zone
    /// the venue does not have is named, as a warning (the hub runs; the placement is ignored).
    @Test func placementsOfGatewaysOrZonesTheVenueLacksAreNamed() throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        let placed = "site: museum\ncreated: 0\nreferencePower: -59\ngatewayOffsets: {}\nzones: {}\nplacements:\n"
        try write("cal.yaml", placed + "  gw-egypt: { x: 14, y: 3.5, zone: egypt }\n")
        let report = try hub("calibration: cal.yaml\n")
        #expect(report.problems.isEmpty && report.warnings.isEmpty, "\(report.text)")
        try write("cal.yaml", placed + "  gw-attic: { x: 14, y: 3.5 }\n  gw-egypt: { x: 14, y: 3.5, zone: attic }\n")
        let strange = try hub("calibration: cal.yaml\n")
        #expect(strange.problems.isEmpty, "\(strange.text)")
        #expect(strange.warnings.map(\.key) == ["calibration"], "\(strange.text)")
        #expect(
            strange.warnings.first?.message.contains("calibrates zones attic and gateways gw-attic, which the venue")
                == true, "\(strange.text)")
    }

    @Test func calibrationOfAnotherSiteIsNamed() throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        try write("cal.yaml", "site: store\ncreated: 0\nreferencePower: -59\ngatewayOffsets: {}\nzones: {}\n")
        let report = try hub("calibration: cal.yaml\n")
        #expect(report.problems.map(\.key) == ["calibration"])
        #expect(report.problems.first?.message.contains("calibrates site store") == true)
    }

    /// A radio map (`map:`, as `beacon-sim radio-map` writes) whose levels do not fill its grid is refused, naming the
    /// gateway; one of a gateway the venue does not have is a warning, as any calibration of it.
    @Test func radioMapThatDoesNotFillItsGridIsNamed() throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        let head = "site: museum\ncreated: 0\nreferencePower: -59\ngatewayOffsets: {}\nzones: {}\n"
        let grid = "map: { cellMetres: 1, originX: 0, originY: 0, columns: 2, rows: 2, levels: "
        try write("cal.yaml", head + grid + "{ gw-egypt: [-50, -51, -52] } }\n")
        let report = try hub("calibration: cal.yaml\n")
        #expect(report.problems.map(\.key) == ["map"])
        #expect(report.problems.first?.message == "map.levels.gw-egypt has 3 levels, but columns × rows is 4")
        #expect(report.problems.first?.file == path("cal.yaml"))
        try write("cal.yaml", head + grid + "{ gw-egypt: [-50, -51, -52, -53], gw-old: [-1, -2, -3, -4] } }\n")
        let strange = try hub("calibration: cal.yaml\n")
        #expect(strange.passed, "\(strange.text)")
        #expect(strange.warnings.first?.message.contains("calibrates gateways gw-old, which the venue") == true)
    }

    @Test func calibrationOfOtherZonesIsAWarningOnly() throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        try write(
            "cal.yaml",
            "site: museum\ncreated: 0\nreferencePower: -59\ngatewayOffsets: { gw-egypt: 1, gw-old: 2 }\nzones: {}\n")
        let report = try hub("calibration: cal.yaml\n")
        #expect(report.passed, "\(report.text)")
        #expect(report.warnings.map(\.key) == ["calibration"])
        #expect(report.warnings.first?.message.contains("calibrates gateways gw-old, which the venue") == true)
        #expect(report.text.contains("\nwarning: \(path("hub.yaml")): calibration: "))
    }

    @Test func missingTLSCAFileIsNamedAndTakenFromTheConfigFolder() throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        let report = try hub("mqtt:\n  tls: { caFile: ca.pem }\n")
        #expect(report.problems.map(\.key) == ["mqtt.tls.caFile"])
        #expect(report.problems.first?.message == "the CA certificate \(path("ca.pem")) does not exist: check the path")
    }

    @Test func tlsFilesMustBePEMAndComeInPairs() throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        try write("ca.der", "\u{30}\u{82}binary")
        try write("client.pem", "-----BEGIN CERTIFICATE-----\n")
        let report = try agent("mqtt:\n  tls: { caFile: ca.der, certFile: client.pem }\n")
        #expect(report.problems.map(\.key) == ["mqtt.tls.caFile", "mqtt.tls.keyFile"])
        #expect(report.problems.first?.message.contains("is not PEM") == true)
        #expect(report.problems.last?.code == .missingKey)
    }

    @Test func missingOrEmptyPasswordFileIsNamed() throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        var report = try agent("mqtt:\n  passwordFile: secret\n")
        #expect(report.problems.map(\.key) == ["mqtt.passwordFile"])
        #expect(report.problems.first?.message == "the password file \(path("secret")) does not exist: check the path")
        try write("secret", "\n", mode: 0o600)
        report = try agent("mqtt:\n  passwordFile: secret\n")
        #expect(report.problems.map(\.key) == ["mqtt.passwordFile"])
        #expect(report.problems.first?.message.contains("is empty") == true)
    }

    @Test func missingStoreFolderIsNamed() throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        let report = try hub("store: { path: state/hub.db }\n")
        #expect(report.problems.map(\.key) == ["store.path"])
        #expect(report.problems.first?.message.hasPrefix("the folder \(path("state")) of database ") == true)
    }

    @Test func storeFileThatIsNoDatabaseIsNamed() throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        try write("hub.db", "not a database\n")
        let report = try hub("store: { path: hub.db }\n")
        #expect(report.problems.map(\.key) == ["store.path"])
        #expect(
            report.problems.first?.message
                == "\(path("hub.db")) is not a SQLite database: move it away, or change the database path")
    }

    @Test(arguments: [("0123456789abcdef0123\n", 0o644, "readable by others"), ("short\n", 0o600, "use at least 16")])
    func badTokenFileIsNamed(token: String, mode: Int, expected: String) throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        try write("token", token, mode: mode)
        let report = try hub("http: { host: 0.0.0.0, tokenFile: token }\n")
        #expect(report.problems.map(\.key) == ["http.tokenFile"])
        #expect(report.problems.first?.message.contains(expected) == true, "\(report.text)")
    }

    @Test func missingTokenFileIsNamed() throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        let report = try hub("http: { tokenFile: token }\n")
        #expect(report.problems.map(\.key) == ["http.tokenFile"])
        #expect(report.problems.first?.message.contains("cannot read the API token file \(path("token"))") == true)
    }

    @Test func pseudonymKeyReadableByOthersIsNamed() throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        try write("key", String(repeating: "k", count: 32), mode: 0o644)
        let report = try hub("store: { path: hub.db, pseudonymise: true, keyFile: key }\n")
        #expect(report.problems.map(\.key) == ["store.keyFile"])
        #expect(report.problems.first?.message.contains("readable by others") == true)
    }

    /// The hub creates a missing key and database; the check only sees that it could.
    @Test func checkCreatesNeitherKeyNorDatabase() throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        let report = try hub("store: { path: hub.db, pseudonymise: true, keyFile: key }\n")
        #expect(report.passed, "\(report.text)")
        #expect(
            report.summary.first { $0.label == "store" }?.value
                == "\(path("hub.db")) (synchronous normal, pseudonymised)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path) == ["hub.yaml"])
    }

    @Test func namesTheVenueDoesNotHaveAreNamed() throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        let report = try hub(
            """
            espresense: { rooms: { kitchen: gw-kitchen, hall: gw-entrance } }
            openMQTTGateway: { gateways: { omg-1: gw-cellar } }
            webhooks:
              - { url: "http://127.0.0.1:9/a", zones: [egypt, atrium] }

            """)
        #expect(
            report.problems.map(\.key) == [
                "espresense.rooms.kitchen", "openMQTTGateway.gateways.omg-1", "webhooks[0].zones",
            ])
        #expect(report.problems.first?.message.hasPrefix("gateway gw-kitchen is not in the venue") == true)
        #expect(report.problems.last?.message.hasPrefix("zone atrium is not in the venue") == true)
    }

    @Test func tagsAndRegionsNamedTwiceAreNamed() throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        let report = try hub(
            """
            tags:
              - { id: lost-badge, beacon: "ibeacon:e2c56db5-dffb-48d2-b060-d0f5a71096e0:9:9" }
              - { id: spare, beacon: "ibeacon:E2C56DB5-DFFB-48D2-B060-D0F5A71096E0:3:1" }
              - { id: odd, beacon: "phone-42" }
            regions:
              - { id: visitors, ibeacon: { uuid: e2c56db5-dffb-48d2-b060-d0f5a71096e0, major: 1 } }
              - { id: visitors, ibeacon: { uuid: e2c56db5-dffb-48d2-b060-d0f5a71096e0, major: 2 } }

            """)
        #expect(report.problems.map(\.key) == ["tags[0].id", "tags[1].beacon", "tags[2].beacon", "regions[1].id"])
        #expect(report.problems[1].message.contains("also named by the venue's tag audio-guide-spare"))
    }

    // MARK: Several at once

    @Test func everyProblemOfAHubFileIsReported() throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        try write("token", "short\n", mode: 0o600)
        let report = try hub(
            """
            mqtt: { passwordFile: secret, tls: { caFile: ca.pem } }
            store: { path: state/hub.db }
            http: { tokenFile: token }
            webhooks: [{ url: "http://127.0.0.1:9/a", zones: [atrium] }]

            """)
        #expect(
            report.problems.map(\.key) == [
                "webhooks[0].zones", "mqtt.passwordFile", "mqtt.tls.caFile", "store.path", "http.tokenFile",
            ])
        let lines = report.text.split(separator: "\n")
        #expect(lines.count == 6)
        #expect(lines.dropLast().allSatisfy { $0.hasPrefix("error: \(path("hub.yaml")): ") })
        #expect(lines.last == "\(path("hub.yaml")): 5 problems")
    }

    @Test func everyProblemOfAnAgentFileIsReported() throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        try write("client.pem", "-----BEGIN CERTIFICATE-----\n")
        let report = AgentConfigurationCheck.run(
            configFile: try write(
                "agent.yaml",
                """
                gateway: gw-1
                site: museum
                mqtt: { passwordFile: secret, tls: { caFile: ca.pem, certFile: client.pem } }
                regions:
                  - { id: a, ibeacon: { uuid: e2c56db5-dffb-48d2-b060-d0f5a71096e0 } }
                  - { id: a, eddystone: { namespace: edd1ebeac04e5defa017 } }
                outbox: { path: \(path("state/outbox.db")) }

                """))
        #expect(
            report.problems.map(\.key) == [
                "regions[1].id", "mqtt.passwordFile", "mqtt.tls.caFile", "mqtt.tls.keyFile", "outbox.path",
            ])
    }

    // MARK: The same checks as at start-up

    /// `run` refuses what `check` reports, in the same words: they share the code.
    @Test func startUpRefusesWhatCheckReports() throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        let config = try write("hub.yaml", "site: museum\nvenue: \(Self.museumVenue)\nstore: { path: state/hub.db }\n")
        let problem = HubConfigurationCheck.run(configFile: config).problems.first
        #expect(problem?.key == "store.path")
        do {
            _ = try buildHub(configuration: try HubConfiguration.load(from: config), configFile: config)
            Issue.record("the hub was built")
        } catch {
            #expect("\(error)" == problem?.message)
        }

        let agentConfig = try write("agent.yaml", "gateway: gw-1\nsite: museum\nmqtt: { tls: { caFile: ca.pem } }\n")
        let agentProblem = AgentConfigurationCheck.run(configFile: agentConfig).problems.first
        #expect(agentProblem?.key == "mqtt.tls.caFile")
        do {
            _ = try buildAgent(configuration: try AgentConfiguration.load(from: agentConfig), configFile: agentConfig)
            Issue.record("the agent was built")
        } catch {
            #expect(error as? ConfigError == agentProblem)
        }
    }

    /// Cross-checks are part of loading: `run`, `replay` and `calibrate` refuse them too.
    @Test func loadingThrowsTheFirstCrossCheckProblem() throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        let config = try write(
            "hub.yaml",
            "site: museum\nvenue: \(Self.museumVenue)\nwebhooks: [{ url: \"http://127.0.0.1:9/a\", zones: [atrium] }]\n"
        )
        #expect(throws: ConfigError.self) { _ = try HubConfiguration.load(from: config) }
        let report = HubConfigurationCheck.run(configFile: config)
        do {
            _ = try HubConfiguration.load(from: config)
        } catch {
            #expect(error == report.problems.first)
        }
    }
}
