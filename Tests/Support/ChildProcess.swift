import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// A child process for tests, started with `posix_spawn`: an empty signal mask, its standard output and error
/// appended to a file that the child itself opens by path, and no other descriptor of the test process.
///
/// Foundation's `Process` fits tests badly in two ways. Started from a Swift concurrency thread it hands the child that
/// thread's signal mask, in which SIGTERM is blocked (mosquitto then ignores a graceful stop). And with tests running
/// in parallel, its pipes can end up in the wrong child, mixing one program's output into another's.
///
/// The child closes every descriptor above standard error: a broker started while another test held a pipe open kept
/// that pipe's write end for its whole life, and the test reading the pipe to its end waited for ever (a live round
/// hung so, with `openssl` long exited).
public final class ChildProcess: @unchecked Sendable {
    // @unchecked: `exitStatus` is only touched under `lock`.
    public let pid: pid_t
    /// Where standard output and error go.
    public let outputPath: String
    private let lock = NSLock()
    private var exitStatus: Int32?

    private init(pid: pid_t, outputPath: String) {
        self.pid = pid
        self.outputPath = outputPath
    }

    /// Starts `path` with `arguments`; standard input is /dev/null.
    public static func spawn(_ path: String, _ arguments: [String], output: String) throws -> ChildProcess {
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var none = sigset_t()
        sigemptyset(&none)
        posix_spawnattr_setsigmask(&attributes, &none)
        var defaults = sigset_t()
        sigemptyset(&defaults)
        for signal in [SIGTERM, SIGINT, SIGHUP, SIGPIPE, SIGUSR1, SIGUSR2] { sigaddset(&defaults, signal) }
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))

        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, output, O_WRONLY | O_CREAT | O_APPEND, 0o644)
        posix_spawn_file_actions_adddup2(&actions, 1, 2)
        closeInheritedDescriptors(&actions)

        let argv = ([path] + arguments).map { strdup($0) } + [nil]
        defer { for pointer in argv { free(pointer) } }
        var pid: pid_t = 0
        let rc = posix_spawn(&pid, path, &actions, &attributes, argv, environ)
        guard rc == 0 else { throw BrokerError("cannot start \(path): \(String(cString: strerror(rc)))") }
        return ChildProcess(pid: pid, outputPath: output)
    }

    /// `posix_spawn_file_actions_addclosefrom_np` (glibc 2.34) does not import into Swift, so it is looked up; without
    /// it, each descriptor open now is closed by number.
    private static func closeInheritedDescriptors(_ actions: inout posix_spawn_file_actions_t) {
        typealias AddCloseFrom = @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32
        if let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "posix_spawn_file_actions_addclosefrom_np") {
            _ = unsafeBitCast(symbol, to: AddCloseFrom.self)(&actions, 3)
            return
        }
        let open = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []
        for descriptor in open.compactMap(Int32.init) where descriptor > 2 {
            posix_spawn_file_actions_addclose(&actions, descriptor)
        }
    }

    /// Reaps the child when it has exited.
    public var isRunning: Bool { lock.withLock { poll() == nil } }

    /// The exit status (128 + signal when killed), or nil while running.
    public var status: Int32? { lock.withLock { poll() } }

    private func poll(blocking: Bool = false) -> Int32? {
        if let exitStatus { return exitStatus }
        var raw: Int32 = 0
        guard waitpid(pid, &raw, blocking ? 0 : WNOHANG) == pid else { return nil }
        // WIFEXITED / WEXITSTATUS / WTERMSIG spelled out: the macros do not import into Swift.
        let signal = raw & 0x7F
        exitStatus = signal == 0 ? (raw >> 8) & 0xFF : 128 + signal
        return exitStatus
    }

    /// Blocks the calling thread until the child exits; returns its status as `status` does. For short tools only,
    /// and off the cooperative pool where a test can.
    public func waitForExit() -> Int32 {
        lock.withLock {
            while true {
                if let status = poll(blocking: true) { return status }
                // Only an interrupted wait returns early; any other failure means the child is not ours to wait for.
                guard errno == EINTR else { return -1 }
            }
        }
    }

    /// Sends `signal`.
    public func signal(_ signal: Int32) { _ = Glibc.kill(pid, signal) }

    /// Everything the child wrote so far.
    public var output: String { (try? String(contentsOfFile: outputPath, encoding: .utf8)) ?? "" }
}
