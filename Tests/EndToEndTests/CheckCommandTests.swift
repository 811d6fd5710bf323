import Foundation
import Testing

/// `beacon-hub check` and `beacon-agent check` as the systemd units run them (`ExecStartPre`): exit 0 and a summary
/// for a usable file, exit 78 and every problem for a broken one.
@Suite(.timeLimit(.minutes(1)))
struct CheckCommandTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    let directory: URL

    init() throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("check-e2e-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    }

    func write(_ name: String, _ text: String) throws -> String {
        let path = directory.appendingPathComponent(name).path
        try text.write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    /// A shipped file with its state directory (which the unit creates) moved into the test's folder.
    func installed(_ name: String) throws -> String {
        let text = try String(contentsOf: Self.root.appendingPathComponent("config/\(name)"), encoding: .utf8)
        try? FileManager.default.createSymbolicLink(
            atPath: directory.appendingPathComponent("venues").path,
            withDestinationPath: Self.root.appendingPathComponent("config/venues").path)
        return try write(
            name,
            text.replacingOccurrences(of: "/var/lib/beacontracker/", with: directory.path + "/")
                .replacingOccurrences(of: "/var/lib/beacon-agent/", with: directory.path + "/"))
    }

    @Test func shippedHubConfigurationPasses() async throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        let config = try installed("hub.yaml")
        let result = try await Programs.run("beacon-hub", ["check", "--config", config])
        #expect(result.status == 0, "\(result.output)")
        let lines = result.output.split(separator: "\n")
        #expect(lines.first == "\(config): ok")
        #expect(lines.contains("  zones     9: entrance, egypt, greece, cafe, rome, …"))
        #expect(lines.contains("  store     \(directory.path)/hub.db (synchronous normal)"))
        #expect(lines.contains("  http      127.0.0.1:8080 (no token)"))
        #expect(!FileManager.default.fileExists(atPath: directory.appendingPathComponent("hub.db").path))
    }

    @Test func shippedAgentConfigurationPasses() async throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        let config = try installed("agent.yaml")
        let result = try await Programs.run("beacon-agent", ["check", "--config", config])
        #expect(result.status == 0, "\(result.output)")
        #expect(
            result.output == """
                \(config): ok
                  gateway  gw-lobby, site demo
                  broker   127.0.0.1:1883 (plain TCP), root beacontracker, client agent-gw-lobby
                  regions  2: museum-visitors, staff-badges
                  outbox   \(directory.path)/outbox.db (at most 64 MiB and 72 h)
                  scanner  hci0, passive, window 100/100 ms

                """)
        #expect(!FileManager.default.fileExists(atPath: directory.appendingPathComponent("outbox.db").path))
    }

    @Test func brokenHubConfigurationExits78NamingEveryProblem() async throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        let config = try write(
            "hub.yaml",
            """
            site: museum
            venue: \(Self.root.appendingPathComponent("config/venues/museum.yaml").path)
            mqtt: { tls: { caFile: ca.pem } }
            store: { path: missing/hub.db }

            """)
        let result = try await Programs.run("beacon-hub", ["check", "--config", config])
        #expect(result.status == 78)
        #expect(
            result.output == """
                error: \(config): mqtt.tls.caFile: the CA certificate \(directory.path)/ca.pem does not exist: check the path
                error: \(config): store.path: the folder \(directory.path)/missing of database \(directory.path)/missing/hub.db does not exist: create it, writable by the program's user (the systemd unit's StateDirectory does), or change the path
                \(config): 2 problems

                """)
    }

    @Test func brokenAgentConfigurationExits78NamingEveryProblem() async throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        let config = try write(
            "agent.yaml",
            "gateway: gw-1\nsite: demo\nmqtt: { passwordFile: secret }\noutbox: { path: none/outbox.db }\n")
        let result = try await Programs.run("beacon-agent", ["check", "--config", config])
        #expect(result.status == 78)
        #expect(
            result.output.contains("error: \(config): mqtt.passwordFile: the password file \(directory.path)/secret "))
        #expect(result.output.contains("error: \(config): outbox.path: the folder "))
        #expect(result.output.hasSuffix("\(config): 2 problems\n"))
    }

    @Test func unreadableConfigurationExits78() async throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        let result = try await Programs.run("beacon-hub", ["check", "--config", "/nonexistent/hub.yaml"])
        #expect(result.status == 78)
        #expect(result.output.hasPrefix("error: /nonexistent/hub.yaml: cannot read the file"))
    }
}
