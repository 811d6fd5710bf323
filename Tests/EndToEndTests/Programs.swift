import BeaconMQTT
import BrokerTestSupport
import Foundation

/// Finds and runs the built executables (`swift build` puts them beside the test bundle).
enum Programs {
    static let binDirectory: URL = {
        let fromRunner = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath()
            .deletingLastPathComponent()
        for candidate in [fromRunner, fromRunner.deletingLastPathComponent()]
        where FileManager.default.isExecutableFile(atPath: candidate.appendingPathComponent("beacon-agent").path) {
            return candidate
        }
        let packageRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        return packageRoot.appendingPathComponent(".build/debug")
    }()

    /// A running program; its combined output goes to a file of its own.
    final class Running: Sendable {
        let child: ChildProcess

        /// Starts the program `name` with `arguments`; with a `prefix` (such as `Tmpfs.enter`), through that command.
        init(_ name: String, _ arguments: [String], prefix: [String] = []) throws {
            let output = FileManager.default.temporaryDirectory.appendingPathComponent("\(name)-\(UUID()).log").path
            let program = binDirectory.appendingPathComponent(name).path
            if let command = prefix.first {
                child = try ChildProcess.spawn(command, prefix.dropFirst() + [program] + arguments, output: output)
            } else {
                child = try ChildProcess.spawn(program, arguments, output: output)
            }
        }

        var text: String { child.output }

        func signal(_ signal: Int32) { child.signal(signal) }

        /// Waits for exit up to `timeout`; returns the exit status, or nil if it is still running.
        func waitForExit(timeout: Duration = .seconds(10)) async -> Int32? {
            let deadline = ContinuousClock.now.advanced(by: timeout)
            while child.isRunning && ContinuousClock.now < deadline {
                try? await Task.sleep(for: .milliseconds(20))
            }
            return child.status
        }

        deinit {
            if child.isRunning {
                child.signal(SIGKILL)
                while child.isRunning { usleep(1000) }
            }
            try? FileManager.default.removeItem(atPath: child.outputPath)
        }
    }

    /// Runs a program to completion and returns its status and output.
    static func run(_ name: String, _ arguments: [String]) async throws -> (status: Int32, output: String) {
        let running = try Running(name, arguments)
        guard let status = await running.waitForExit(timeout: .seconds(30)) else {
            running.signal(SIGKILL)
            return (-1, running.text)
        }
        return (status, running.text)
    }
}

/// A client subscribed to `filter` on `broker`, collecting what arrives (the tests' eyes on the broker).
func watch(_ broker: MosquittoBroker, _ filter: String) async throws -> (MQTTClient, MessageCollector) {
    let watcher = try MQTTClient(
        configuration: MQTTConfiguration(host: broker.host, port: broker.port, clientID: "watcher-\(UUID())"))
    try await watcher.connect()
    return (watcher, MessageCollector(try await watcher.subscribe(to: filter)))
}
