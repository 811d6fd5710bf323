import BeaconAgent
import BeaconConfig
import BeaconHub
import Foundation
import Testing

@Suite struct ConfigLoaderTests {
    func load(_ yaml: String) throws(ConfigError) -> AgentConfiguration {
        try ConfigLoader.decode(AgentConfiguration.self, from: yaml, file: "agent.yaml")
    }

    func failure(_ yaml: String) -> ConfigError? {
        do {
            _ = try load(yaml)
            return nil
        } catch {
            return error
        }
    }

    /// Calibration files are read by people: no exponent forms, and the same numbers read back.
    @Test func writtenYAMLUsesPlainNumbers() throws {
        struct Sample: Codable, Equatable {
            var mean: Double
            var created: Double
            var small: Double
            var name: String
        }
        let sample = Sample(mean: -59.5, created: 1_795_386_754, small: 0.25, name: "1e+5")
        let text = try ConfigLoader.yaml(sample)
        #expect(text.contains("mean: -59.5") && text.contains("created: 1795386754") && text.contains("small: 0.25"))
        #expect(!text.contains("e+1") && !text.contains("e+9"))
        #expect(try ConfigLoader.decode(Sample.self, from: text, file: "sample.yaml") == sample)
    }

    @Test func minimalFileGetsDefaults() throws {
        let config = try load("gateway: gw-1\nsite: demo\n")
        #expect(config.gateway == "gw-1")
        #expect(config.mqtt.host == "127.0.0.1")
        #expect(config.mqtt.port == 1883)
        #expect(config.mqtt.keepAlive == 30)
        #expect(config.heartbeatSeconds == 30)
    }

    @Test func misspelledNestedKeyNamesFileKeyAndAlternatives() throws {
        let error = try #require(failure("gateway: gw-1\nsite: demo\nmqtt:\n  keepalive: 10\n"))
        #expect(error.code == .unknownKey)
        #expect(error.file == "agent.yaml")
        #expect(error.key == "mqtt.keepalive")
        #expect(error.description.contains("keepAlive"))
    }

    /// `selfBeacon:` gives the advertising data of the beacon id, as the decoder reads it back; a beacon the agent
    /// cannot advertise, or a setting out of range, is named with its key.
    @Test func selfBeaconIsCheckedAndEncoded() throws {
        let id = "ibeacon:e2c56db5-dffb-48d2-b060-d0f5a71096e0:100:7"
        let config = try load(
            "gateway: gw-1\nsite: demo\nselfBeacon:\n  beacon: \(id)\n  measuredPower: -62\n  intervalMs: 300\n")
        let beacon = try #require(config.selfBeacon)
        #expect(beacon.intervalMs == 300 && beacon.txPower == nil)
        #expect(beacon.advertisingData.count == 30)
        #expect(try load("gateway: gw-1\nsite: demo\n").selfBeacon == nil)
        // Typed in capitals, kept as the decoders of the other gateways write it.
        let capitals = try load("gateway: gw-1\nsite: demo\nselfBeacon:\n  beacon: \(id.uppercased())\n")
        #expect(capitals.selfBeacon?.beacon == id)

        let url = try #require(
            failure("gateway: gw-1\nsite: demo\nselfBeacon:\n  beacon: eddystone-url:https://example.com\n"))
        #expect(url.key == "selfBeacon.beacon")
        #expect(url.message.contains("ibeacon:UUID:MAJOR:MINOR"))
        let fast = try #require(failure("gateway: gw-1\nsite: demo\nselfBeacon:\n  beacon: \(id)\n  intervalMs: 20\n"))
        #expect(fast.key == "selfBeacon.intervalMs" && fast.message.contains("100 to 10240"))
        let loud = try #require(failure("gateway: gw-1\nsite: demo\nselfBeacon:\n  beacon: \(id)\n  txPower: 30\n"))
        #expect(loud.key == "selfBeacon.txPower")
        let missing = try #require(failure("gateway: gw-1\nsite: demo\nselfBeacon:\n  intervalMs: 300\n"))
        #expect(missing.code == .missingKey && missing.key == "selfBeacon.beacon")
    }

    @Test func missingRequiredKeyIsNamed() throws {
        let error = try #require(failure("site: demo\n"))
        #expect(error.code == .missingKey)
        #expect(error.key == "gateway")
    }

    @Test func wrongTypeSaysWhatIsExpected() throws {
        let error = try #require(failure("gateway: gw-1\nsite: demo\nmqtt:\n  port: lots\n"))
        #expect(error.code == .invalidValue)
        #expect(error.key == "mqtt.port")
        #expect(error.message.contains("integer"))
    }

    @Test func outOfRangeValueSaysTheRange() throws {
        let error = try #require(failure("gateway: gw-1\nsite: demo\nmqtt:\n  port: 70000\n"))
        #expect(error.key == "mqtt.port")
        #expect(error.message.contains("1...65535"))
    }

    @Test func enumValueListsTheChoices() throws {
        let error = try #require(
            failure("gateway: gw-1\nsite: demo\nmqtt:\n  tls:\n    caFile: /ca.pem\n    version: tlsv9\n"))
        #expect(error.key == "mqtt.tls.version")
        #expect(error.message.contains("\"tlsv1.2\""))
    }

    @Test func invalidIdExplainsTheRule() throws {
        let error = try #require(failure("gateway: gw/1\nsite: demo\n"))
        #expect(error.key == "gateway")
        #expect(error.message.contains("A-Z a-z 0-9"))
    }

    @Test func syntaxErrorIsReported() throws {
        let error = try #require(failure("gateway: [unclosed\n"))
        #expect(error.code == .syntax)
    }

    @Test func unreadableFileIsNamed() {
        do {
            _ = try AgentConfiguration.load(from: "/nonexistent/agent.yaml")
            Issue.record("loaded a missing file")
        } catch {
            #expect(error.code == .unreadable)
            #expect(error.description.contains("/nonexistent/agent.yaml"))
        }
    }

    @Test func passwordFileIsReadAtBuildTime() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("cfg-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let secret = directory.appendingPathComponent("secret").path
        try "s3cret\n".write(toFile: secret, atomically: true, encoding: .utf8)
        let config = try load("gateway: gw-1\nsite: demo\nmqtt:\n  username: gw-1\n  passwordFile: \(secret)\n")
        let client = try config.mqtt.clientConfiguration(
            defaultClientID: "agent-gw-1", cleanSession: true, will: nil, configFile: "agent.yaml")
        #expect(client.password == "s3cret")
        #expect(client.clientID == "agent-gw-1")

        let missing = try load("gateway: gw-1\nsite: demo\nmqtt:\n  passwordFile: \(directory.path)/nope\n")
        #expect(throws: ConfigError.self) {
            _ = try missing.mqtt.clientConfiguration(
                defaultClientID: "x", cleanSession: true, will: nil, configFile: "agent.yaml")
        }
    }

    @Test func hubVenueMustBeTheHubsSite() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("hubcfg-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        let store = root.appendingPathComponent("config/venues/store.yaml").path
        let path = directory.appendingPathComponent("hub.yaml").path
        try "site: museum\nvenue: \(store)\n".write(toFile: path, atomically: true, encoding: .utf8)
        do {
            _ = try HubConfiguration.load(from: path)
            Issue.record("accepted another site's venue")
        } catch {
            #expect(error.key == "venue")
            #expect(error.message.contains("site store"))
        }
    }

    /// The example files shipped in config/ must load: they are what operators copy.
    @Test(arguments: [
        "agent.yaml", "hub.yaml", "hub-store.yaml", "hub-museum-harsh.yaml", "hub-flat-kolakowski.yaml",
        "hub-tetam-hall.yaml",
    ])
    func shippedExamplesLoad(name: String) throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        let path = root.appendingPathComponent("config").appendingPathComponent(name).path
        if name == "agent.yaml" {
            _ = try AgentConfiguration.load(from: path)
        } else {
            // A hub configuration must also build its zone engine (venue, tags, regions, calibration).
            _ = try HubConfiguration.load(from: path).makeEngine()
        }
    }
}
