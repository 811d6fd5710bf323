import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// A real mosquitto broker (Debian's package) on a free loopback port, with a generated configuration, for tests.
///
/// `start()` returns once the broker accepts TCP connections; `restart()` keeps the port and the persistence
/// directory, so retained messages and persistent sessions survive as they would in production.
public final class MosquittoBroker: @unchecked Sendable {
    // @unchecked: the process handle and running flag are only touched under `lock`.

    /// What the generated configuration enables.
    public struct Options: Sendable {
        /// Non-empty: anonymous access off, these users in a password file made by mosquitto_passwd.
        public var users: [String: String] = [:]
        /// Written verbatim to an ACL file when set.
        public var aclLines: [String]? = nil
        /// TLS listener with certificates from `TestCertificates`.
        public var tls = false
        /// With `tls`: clients must present a certificate signed by the test CA.
        public var requireClientCertificate = false
        /// Keep retained messages and sessions in the broker's directory across restarts.
        public var persistence = true
        /// Lines appended to the configuration.
        public var extraConfig: [String] = []
        /// A production configuration to run instead of the test one (deploy/mosquitto/beacontracker.conf): its
        /// listeners moved to `port` (loopback plain) and `tlsPort` (TLS, on loopback here), its certificates, password
        /// file (made from `users`) and ACL file (`productionACL`, copied) put in the broker's directory. Every other
        /// line is kept as shipped.
        public var productionConfig: URL? = nil
        public var productionACL: URL? = nil
        /// With `productionConfig`: the broker's certificate, key and CA and the password file made elsewhere (by
        /// scripts/provision-gateway.sh), instead of the test PKI and `users`.
        public var provisioned: Provisioned? = nil

        public struct Provisioned: Sendable {
            public var caFile: URL
            public var certFile: URL
            public var keyFile: URL
            public var passwordFile: URL

            public init(caFile: URL, certFile: URL, keyFile: URL, passwordFile: URL) {
                self.caFile = caFile
                self.certFile = certFile
                self.keyFile = keyFile
                self.passwordFile = passwordFile
            }
        }

        public init() {}
    }

    public let options: Options
    /// Fixed for the broker's life: `restart()` reuses it.
    public let port: Int
    public let directory: URL
    public let certificates: TestCertificates?
    /// The TLS listener's port of a production configuration.
    public let tlsPort: Int?
    public var host: String { "127.0.0.1" }

    private let lock = NSLock()
    private var process: ChildProcess?

    public init(options: Options = Options()) throws {
        self.options = options
        directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "mosquitto-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        port = try FreePort.find()
        let production = options.productionConfig != nil
        tlsPort = production ? try FreePort.find() : nil
        certificates =
            options.tls || production ? try TestCertificates.shared() : nil
        if let shipped = options.productionConfig {
            try writeProductionConfiguration(shipped)
        } else {
            try writeConfiguration()
        }
    }

    deinit {
        if let process, process.isRunning {
            Glibc.kill(process.pid, SIGKILL)
            while process.isRunning { usleep(1000) }
        }
        try? FileManager.default.removeItem(at: directory)
    }

    private var configFile: URL { directory.appendingPathComponent("mosquitto.conf") }
    private var logFile: URL { directory.appendingPathComponent("mosquitto.log") }

    private func writePasswords() throws -> URL {
        let passwords = directory.appendingPathComponent("passwords")
        var first = true
        for (user, password) in options.users.sorted(by: { $0.key < $1.key }) {
            try Self.runTool(
                "/usr/bin/mosquitto_passwd", (first ? ["-c"] : []) + ["-b", passwords.path, user, password])
            first = false
        }
        chmod(passwords.path, 0o600)
        return passwords
    }

    private func writeProductionConfiguration(_ shipped: URL) throws {
        guard let certificates, let tlsPort else { return }
        let passwords = try options.provisioned?.passwordFile ?? writePasswords()
        let (certFile, keyFile, caFile) =
            options.provisioned.map { ($0.certFile, $0.keyFile, $0.caFile) }
            ?? (certificates.serverCert, certificates.serverKey, certificates.caFile)
        let acl = directory.appendingPathComponent("acl")
        if let shippedACL = options.productionACL {
            try FileManager.default.copyItem(at: shippedACL, to: acl)
        }
        var lines: [String] = []
        for line in try String(contentsOf: shipped, encoding: .utf8).split(
            separator: "\n", omittingEmptySubsequences: false)
        {
            let words = line.split(separator: " ")
            switch words.first {
            case "listener":
                // The loopback listener keeps its address; the TLS one (all interfaces in production) stays on
                // loopback in a test.
                lines.append(words.count > 2 ? "listener \(port) 127.0.0.1" : "listener \(tlsPort) 127.0.0.1")
            case "certfile": lines.append("certfile \(certFile.path)")
            case "keyfile": lines.append("keyfile \(keyFile.path)")
            case "cafile": lines.append("cafile \(caFile.path)")
            case "password_file": lines.append("password_file \(passwords.path)")
            case "acl_file": lines.append("acl_file \(acl.path)")
            default: lines.append(String(line))
            }
        }
        // What Debian's own mosquitto.conf sets around the shipped file, in a directory of ours.
        lines += [
            "persistence_location \(directory.path)/", "log_dest file \(logFile.path)", "log_type all",
        ]
        if geteuid() == 0 { lines.append("user root") }
        lines += options.extraConfig
        try (lines.joined(separator: "\n") + "\n").write(to: configFile, atomically: true, encoding: .utf8)
    }

    private func writeConfiguration() throws {
        var lines = [
            "listener \(port) 127.0.0.1",
            "allow_anonymous \(options.users.isEmpty ? "true" : "false")",
            "persistence \(options.persistence ? "true" : "false")",
            "persistence_location \(directory.path)/",
            "autosave_interval 1",
            // The default 1000 silently drops messages for slow subscribers; tests must see every message.
            "max_queued_messages 100000",
            "max_queued_bytes 0",
            "max_inflight_messages 100",
            "log_dest file \(logFile.path)",
            "log_type all",
            "connection_messages true",
        ]
        // Started as root, mosquitto drops to user "mosquitto", which cannot write our temporary directory.
        if geteuid() == 0 { lines.append("user root") }
        if !options.users.isEmpty {
            lines.append("password_file \(try writePasswords().path)")
        }
        if let aclLines = options.aclLines {
            let acl = directory.appendingPathComponent("acl")
            try (aclLines.joined(separator: "\n") + "\n").write(to: acl, atomically: true, encoding: .utf8)
            chmod(acl.path, 0o600)
            lines.append("acl_file \(acl.path)")
        }
        if let certificates {
            lines += [
                "cafile \(certificates.caFile.path)",
                "certfile \(certificates.serverCert.path)",
                "keyfile \(certificates.serverKey.path)",
                "require_certificate \(options.requireClientCertificate ? "true" : "false")",
                "tls_version tlsv1.2",
            ]
        }
        lines += options.extraConfig
        try (lines.joined(separator: "\n") + "\n").write(to: configFile, atomically: true, encoding: .utf8)
    }

    /// Starts mosquitto and waits until it accepts connections; on failure the error carries the broker's log.
    /// The generous default is for CI: with CPU-bound suites running beside, this wait may not be scheduled for a
    /// while (a run timed out at 10 s with mosquitto up and logging).
    public func start(timeout: Duration = .seconds(60)) async throws {
        let process = try ChildProcess.spawn(
            "/usr/sbin/mosquitto", ["-c", configFile.path], output: directory.appendingPathComponent("stderr.log").path)
        lock.withLock { self.process = process }
        let deadline = ContinuousClock.now.advanced(by: timeout)
        // Probes once more after the deadline: when other suites hold both threads of the cooperative pool, this
        // task may first run again after the whole timeout (a CI run failed so, with mosquitto listening since its
        // first second).
        while true {
            if !process.isRunning {
                throw BrokerError("mosquitto exited at start (port \(port) taken?):\n" + logTail)
            }
            if FreePort.accepts(port: port) { return }
            if ContinuousClock.now >= deadline { break }
            try await Task.sleep(for: .milliseconds(20))
        }
        Glibc.kill(process.pid, SIGKILL)
        throw BrokerError("mosquitto did not accept connections on port \(port) within \(timeout):\n\(logTail)")
    }

    /// SIGTERM (mosquitto saves its persistence file), waiting for exit; SIGKILL after 5 s.
    public func stop() async {
        await terminate(signal: SIGTERM, grace: .seconds(5))
    }

    /// SIGKILL: the broker dies without saving anything.
    public func kill() async {
        await terminate(signal: SIGKILL, grace: .seconds(5))
    }

    /// SIGSTOP: the broker stops answering while its sockets stay open.
    public func pause() {
        if let pid = lock.withLock({ process?.pid }) { Glibc.kill(pid, SIGSTOP) }
    }

    /// SIGCONT after `pause()`.
    public func resume() {
        if let pid = lock.withLock({ process?.pid }) { Glibc.kill(pid, SIGCONT) }
    }

    /// Stops and starts again on the same port with the same persistence directory.
    public func restart() async throws {
        await stop()
        try await start()
    }

    /// The last lines of the broker's log, for failure messages.
    public var logTail: String {
        let text = [logFile, directory.appendingPathComponent("stderr.log")]
            .compactMap { try? String(contentsOf: $0, encoding: .utf8) }.joined(separator: "\n")
        return text.split(separator: "\n").suffix(40).joined(separator: "\n")
    }

    private func terminate(signal: Int32, grace: Duration) async {
        guard let process = lock.withLock({ self.process }), process.isRunning else { return }
        Glibc.kill(process.pid, SIGCONT)
        Glibc.kill(process.pid, signal)
        let deadline = ContinuousClock.now.advanced(by: grace)
        while process.isRunning && ContinuousClock.now < deadline {
            try? await Task.sleep(for: .milliseconds(10))
        }
        if process.isRunning {
            Glibc.kill(process.pid, SIGKILL)
            while process.isRunning { try? await Task.sleep(for: .milliseconds(10)) }
        }
        // The port must be free again before a restart binds it.
        while FreePort.accepts(port: port) { try? await Task.sleep(for: .milliseconds(10)) }
    }

    static func touch(_ url: URL) throws -> URL {
        if !FileManager.default.fileExists(atPath: url.path) {
            _ = FileManager.default.createFile(atPath: url.path, contents: nil)
        }
        return url
    }

    /// Runs a command-line tool to completion; throws with its output when it fails. The output goes to a file, not a
    /// pipe: a pipe read to its end waits as long as any other child holds its write end.
    static func runTool(_ path: String, _ arguments: [String]) throws {
        let output = FileManager.default.temporaryDirectory.appendingPathComponent("tool-\(UUID().uuidString).log").path
        defer { try? FileManager.default.removeItem(atPath: output) }
        let child = try ChildProcess.spawn(path, arguments, output: output)
        guard child.waitForExit() == 0 else {
            throw BrokerError("\(path) \(arguments.joined(separator: " ")) failed: \(child.output)")
        }
    }
}

/// A failure to set up or start the test broker.
public struct BrokerError: Error, CustomStringConvertible {
    public let description: String
    public init(_ description: String) { self.description = description }
}
