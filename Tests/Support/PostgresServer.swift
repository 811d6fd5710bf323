import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// A real PostgreSQL server (Debian's postgresql-15) for tests: `initdb` into a temporary directory, listening on a
/// free loopback port, no system service involved. Password (SCRAM) authentication over TCP, as a production hub
/// would use; `trust` on the server's own Unix socket, which only `psql` of this helper uses.
///
/// PostgreSQL refuses to run as root: when the tests run as root, initdb and the server run as the `postgres` user
/// the Debian package creates (`setpriv`, which execs in place, so `pid` is the server's own).
public final class PostgresServer: @unchecked Sendable {
    // @unchecked: the process handle is only touched under `lock`.
    public let port: Int
    public let directory: URL
    public let user = "beacon"
    public let password: String
    public var host: String { "127.0.0.1" }
    /// A file holding `password` (what hub.yaml's `store.postgres.passwordFile` names).
    public let passwordFile: URL
    private let lock = NSLock()
    private var process: ChildProcess?

    var dataDirectory: URL { directory.appendingPathComponent("data") }
    var logFile: URL { directory.appendingPathComponent("server.log") }

    /// The server's binaries (Debian keeps them out of PATH, per major version).
    public static var binaries: URL? {
        let root = URL(fileURLWithPath: "/usr/lib/postgresql")
        let versions = ((try? FileManager.default.contentsOfDirectory(atPath: root.path)) ?? [])
            .compactMap(Int.init).sorted()
        guard let newest = versions.last else { return nil }
        let bin = root.appendingPathComponent("\(newest)/bin")
        return FileManager.default.isExecutableFile(atPath: bin.appendingPathComponent("postgres").path) ? bin : nil
    }

    /// Makes a new cluster (initdb); `start()` runs it.
    public init() async throws {
        guard let binaries = Self.binaries else {
            throw BrokerError(
                "PostgreSQL's server is not installed (/usr/lib/postgresql/*/bin/postgres): run scripts/setup.sh, "
                    + "which installs postgresql-15")
        }
        directory = URL(fileURLWithPath: "/tmp").appendingPathComponent("pg-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        password = UUID().uuidString
        passwordFile = directory.appendingPathComponent("password")
        try Data((password + "\n").utf8).write(to: passwordFile)
        port = try FreePort.find()
        try Self.handOver(directory)
        let initdb = try Self.spawn(
            binaries.appendingPathComponent("initdb").path,
            [
                "-D", dataDirectory.path, "-U", user, "--pwfile", passwordFile.path, "--auth-host=scram-sha-256",
                "--auth-local=trust", "-E", "UTF8", "--locale=C", "--no-sync",
            ], output: directory.appendingPathComponent("initdb.log").path)
        guard try await initdb.exit(within: .seconds(120)) == 0 else {
            throw BrokerError("initdb failed:\n\(initdb.output)")
        }
    }

    /// Starts the server and returns once it answers queries (`pg_isready`).
    public func start(timeout: Duration = .seconds(60)) async throws {
        guard let binaries = Self.binaries else { throw BrokerError("PostgreSQL's server is not installed") }
        let process = try Self.spawn(
            binaries.appendingPathComponent("postgres").path,
            [
                "-D", dataDirectory.path, "-p", "\(port)", "-c", "listen_addresses=127.0.0.1",
                "-c", "unix_socket_directories=\(directory.path)", "-c", "max_connections=60",
                "-c", "shared_buffers=32MB", "-c", "logging_collector=off",
            ], output: logFile.path)
        lock.withLock { self.process = process }
        try watch(process.pid)
        let deadline = ContinuousClock.now.advanced(by: timeout)
        while true {
            if !process.isRunning { throw BrokerError("postgres exited at start:\n\(logTail)") }
            let ready = try ChildProcess.spawn(
                "/usr/bin/pg_isready", ["-q", "-h", host, "-p", "\(port)", "-t", "2"],
                output: directory.appendingPathComponent("isready.log").path)
            if try await ready.exit(within: .seconds(30)) == 0 { return }
            if ContinuousClock.now >= deadline { break }
            try await Task.sleep(for: .milliseconds(50))
        }
        process.signal(SIGKILL)
        throw BrokerError("postgres did not answer on port \(port) within \(timeout):\n\(logTail)")
    }

    /// The server's process id while it runs.
    public var pid: pid_t? { lock.withLock { process?.pid } }

    /// A watchdog that outlives this process: once the test process is gone — exited without deinitialising the
    /// server (a shared one is never deinitialised), crashed, or killed — it stops the server at once (SIGQUIT) and
    /// deletes its directory, so that no PostgreSQL outlives a test run.
    func watch(_ server: pid_t) throws {
        let script =
            "while kill -0 \(getpid()) 2>/dev/null; do sleep 1; done; kill -QUIT \(server) 2>/dev/null; sleep 3; "
            + "rm -rf '\(directory.path)'"
        _ = try ChildProcess.spawn("/bin/sh", ["-c", script], output: "/dev/null")
    }

    /// A fast shutdown (SIGINT: open transactions roll back, the server checkpoints and exits), waiting for it.
    public func stop() async {
        await terminate(signal: SIGINT)
    }

    /// SIGKILL of the postmaster: no checkpoint; the next start replays the WAL (crash recovery). Its backends notice
    /// their parent is gone and exit.
    public func kill() async {
        await terminate(signal: SIGKILL)
    }

    /// Stops (fast) and starts again on the same port and data.
    public func restart() async throws {
        await stop()
        try await start()
    }

    /// Creates an empty database and returns its name.
    public func createDatabase(_ name: String = "t\(UUID().uuidString.prefix(8).lowercased())") async throws -> String {
        try await psql("CREATE DATABASE \(name)")
        return name
    }

    /// Runs `sql` through psql on the server's Unix socket (trust), stopping at the first error.
    @discardableResult
    public func psql(_ sql: String, database: String = "postgres") async throws -> String {
        let output = directory.appendingPathComponent("psql-\(UUID().uuidString.prefix(8)).log").path
        let run = try ChildProcess.spawn(
            "/usr/bin/psql",
            [
                "-X", "-q", "-A", "-t", "-v", "ON_ERROR_STOP=1", "-h", directory.path, "-p", "\(port)", "-U", user,
                "-d", database, "-c", sql,
            ], output: output)
        guard try await run.exit(within: .seconds(120)) == 0 else {
            throw BrokerError("psql failed on \(sql):\n\(run.output)")
        }
        return run.output.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// The last lines of the server's log, for failure messages.
    public var logTail: String {
        let text = (try? String(contentsOf: logFile, encoding: .utf8)) ?? ""
        return text.split(separator: "\n").suffix(40).joined(separator: "\n")
    }

    private func terminate(signal: Int32) async {
        guard let process = lock.withLock({ self.process }) else { return }
        process.signal(signal)
        if (try? await process.exit(within: .seconds(30))) == nil {
            process.signal(SIGKILL)
            _ = try? await process.exit(within: .seconds(10))
        }
        if signal == SIGKILL {
            // The backends outlive a killed postmaster for a moment; a new one refuses to start beside them.
            let deadline = ContinuousClock.now.advanced(by: .seconds(30))
            while ContinuousClock.now < deadline, FreePort.accepts(port: port) {
                try? await Task.sleep(for: .milliseconds(50))
            }
        }
        lock.withLock { self.process = nil }
    }

    deinit {
        if let process { process.signal(SIGKILL) }
        try? FileManager.default.removeItem(at: directory)
    }

    /// As root: the directory goes to the `postgres` user, which runs initdb and the server.
    static func handOver(_ directory: URL) throws {
        guard getuid() == 0 else { return }
        guard let account = getpwnam("postgres") else {
            throw BrokerError(
                "running as root, and there is no postgres user to run PostgreSQL as: run scripts/setup.sh")
        }
        for path in [directory.path, directory.appendingPathComponent("password").path] {
            guard chown(path, account.pointee.pw_uid, account.pointee.pw_gid) == 0 else {
                throw BrokerError("chown \(path) failed: \(String(cString: strerror(errno)))")
            }
        }
    }

    static func spawn(_ path: String, _ arguments: [String], output: String) throws -> ChildProcess {
        guard getuid() == 0 else { return try ChildProcess.spawn(path, arguments, output: output) }
        return try ChildProcess.spawn(
            "/usr/bin/setpriv", ["--reuid=postgres", "--regid=postgres", "--init-groups", "--", path] + arguments,
            output: output)
    }
}

extension ChildProcess {
    /// Waits for the process to exit; its status, or nil after `timeout`.
    public func exit(within timeout: Duration) async throws -> Int32? {
        let deadline = ContinuousClock.now.advanced(by: timeout)
        while ContinuousClock.now < deadline {
            if let status { return status }
            try await Task.sleep(for: .milliseconds(20))
        }
        return status
    }
}

/// One PostgreSQL server for a whole test process, started on first use (each test takes a database of its own, so
/// they run side by side); stopped and deleted by its watchdog when the process has gone.
public enum SharedPostgres {
    static let server = Mutex<Task<PostgresServer, any Error>?>(nil)

    /// The shared server, started if needed.
    public static func server() async throws -> PostgresServer {
        let task = Self.server.withLock { task -> Task<PostgresServer, any Error> in
            if let task { return task }
            let made = Task {
                let server = try await PostgresServer()
                try await server.start()
                return server
            }
            task = made
            return made
        }
        return try await task.value
    }
}
