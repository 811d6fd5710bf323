import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// A small, real file system that the tests can fill up: a tmpfs mounted on `mountPoint` in a mount namespace of its
/// own (`unshare -rm`: nothing stays mounted if the test dies, and mounting needs no root), held open by a sleeping process. Programs run
/// inside it through `nsenter`; the test reaches its files through `/proc/<holder>/root`.
///
/// SQLite resolves symbolic links in a database's path, and `/proc/<pid>/root` reads as one to `/`: a database in the
/// tmpfs must be opened from inside the namespace, or copied out first (`copy(_:to:)`).
public final class Tmpfs: @unchecked Sendable {
    // @unchecked: immutable after init; the holder process is only signalled.
    public let mountPoint: String
    private let holder: ChildProcess

    /// Mounts a tmpfs of `megabytes` on `mountPoint` (an existing, empty directory).
    public init(megabytes: Int, at mountPoint: String) async throws {
        self.mountPoint = mountPoint
        let log = FileManager.default.temporaryDirectory.appendingPathComponent("tmpfs-\(UUID()).log").path
        holder = try ChildProcess.spawn(
            "/usr/bin/unshare",
            [
                "-rm", "sh", "-c",
                "mount -t tmpfs -o size=\(megabytes)m tmpfs \"$0\" && echo mounted && exec sleep 86400",
                mountPoint,
            ], output: log)
        let deadline = ContinuousClock.now.advanced(by: .seconds(10))
        while !holder.output.contains("mounted") {
            guard holder.isRunning, ContinuousClock.now < deadline else {
                let output = holder.output
                holder.signal(SIGKILL)
                throw BrokerError(
                    "cannot mount a tmpfs in a namespace of its own (unshare -rm): \(output). "
                        + "The kernel must allow user namespaces (sysctl kernel.unprivileged_userns_clone=1)")
            }
            try await Task.sleep(for: .milliseconds(20))
        }
        try? FileManager.default.removeItem(atPath: log)
    }

    deinit {
        holder.signal(SIGKILL)
        while holder.isRunning { usleep(1000) }
    }

    /// The command prefix that runs a program inside the namespace, where `mountPoint` is the tmpfs.
    public var enter: [String] {
        ["/usr/bin/nsenter", "-t", "\(holder.pid)", "-U", "-m", "--preserve-credentials"]
    }

    /// A file in the tmpfs, as seen from outside the namespace (plain file operations only: see above).
    public func path(_ name: String) -> String { "/proc/\(holder.pid)/root\(mountPoint)/\(name)" }

    /// Fills the file system with `name` until a write fails for want of space; returns the bytes written.
    @discardableResult
    public func fill(with name: String = "filler") throws -> Int {
        let file = path(name)
        let descriptor = open(file, O_WRONLY | O_CREAT | O_APPEND, 0o644)
        guard descriptor >= 0 else { throw BrokerError("cannot create \(file): \(String(cString: strerror(errno)))") }
        defer { close(descriptor) }
        let chunk = [UInt8](repeating: 0xA5, count: 64 * 1024)
        var written = 0
        while true {
            let n = chunk.withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
            if n > 0 {
                written += n
                continue
            }
            if n < 0 && errno == EINTR { continue }
            guard errno == ENOSPC else {
                throw BrokerError("cannot fill \(file): \(String(cString: strerror(errno)))")
            }
            return written
        }
    }

    /// Gives the space back.
    public func free(_ name: String = "filler") throws {
        try FileManager.default.removeItem(atPath: path(name))
    }

    /// Copies the files `names` that exist (a database and its WAL) out of the tmpfs into `directory`.
    public func copy(_ names: [String], to directory: String) throws {
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        for name in names where FileManager.default.fileExists(atPath: path(name)) {
            let target = "\(directory)/\(name)"
            try? FileManager.default.removeItem(atPath: target)
            try FileManager.default.copyItem(atPath: path(name), toPath: target)
        }
    }
}
