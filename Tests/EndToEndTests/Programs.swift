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

    /// A running program with its combined output collected.
    final class Running: @unchecked Sendable {
        // @unchecked: `output` is only touched under `lock`; Process is used from one test at a time.
        let process = Process()
        private let lock = NSLock()
        private var output = Data()

        init(_ name: String, _ arguments: [String]) throws {
            process.executableURL = binDirectory.appendingPathComponent(name)
            process.arguments = arguments
            let pipe = Pipe()
            process.standardOutput = pipe
            process.standardError = pipe
            pipe.fileHandleForReading.readabilityHandler = { [weak self] handle in
                let data = handle.availableData
                guard let self, !data.isEmpty else { return }
                lock.withLock { output.append(data) }
            }
            try process.run()
        }

        var text: String { lock.withLock { String(decoding: output, as: UTF8.self) } }

        func signal(_ signal: Int32) { kill(process.processIdentifier, signal) }

        /// Waits for exit up to `timeout`; returns the exit status, or nil if it is still running.
        func waitForExit(timeout: Duration = .seconds(10)) async -> Int32? {
            let deadline = ContinuousClock.now.advanced(by: timeout)
            while process.isRunning && ContinuousClock.now < deadline {
                try? await Task.sleep(for: .milliseconds(20))
            }
            return process.isRunning ? nil : process.terminationStatus
        }

        deinit {
            if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        }
    }

    /// Runs a program to completion and returns its status and output.
    static func run(_ name: String, _ arguments: [String]) async throws -> (status: Int32, output: String) {
        let running = try Running(name, arguments)
        guard let status = await running.waitForExit(timeout: .seconds(30)) else {
            running.signal(SIGKILL)
            return (-1, running.text)
        }
        try? await Task.sleep(for: .milliseconds(50))  // let the reader drain the pipe
        return (status, running.text)
    }
}
