import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// Loopback TCP port helpers for test brokers.
public enum FreePort {
    /// A port the kernel reports free on 127.0.0.1 (bind to port 0, read it back, close). Free now: another test's
    /// listener may take it later (see `Refused` for a port that must stay unanswered).
    public static func find() throws -> Int {
        let (fd, port) = try bindAnyLoopbackPort()
        close(fd)
        return port
    }

    /// A loopback port held bound but not listening, until `release()` or the end of the value: every connection to
    /// it is refused, and no listener of another test can take it meanwhile (a port from `find()`, freed at once,
    /// can be handed to a webhook receiver or a broker started in parallel).
    public final class Refused: @unchecked Sendable {
        public let port: Int
        private var fd: Int32

        public init() throws { (fd, port) = try FreePort.bindAnyLoopbackPort() }

        public func release() {
            if fd >= 0 { close(fd) }
            fd = -1
        }

        deinit { release() }
    }

    /// A TCP socket bound to a port of the kernel's choice on 127.0.0.1, not listening, and the port.
    static func bindAnyLoopbackPort() throws -> (fd: Int32, port: Int) {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw BrokerError("socket() failed: \(String(cString: strerror(errno)))") }
        var address = loopback(port: 0)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard bound == 0 else {
            let message = String(cString: strerror(errno))
            close(fd)
            throw BrokerError("bind() failed: \(message)")
        }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        return (fd, Int(UInt16(bigEndian: address.sin_port)))
    }

    /// True when something accepts TCP connections on 127.0.0.1:`port`.
    public static func accepts(port: Int) -> Bool {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        var address = loopback(port: port)
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0
            }
        }
    }

    private static func loopback(port: Int) -> sockaddr_in {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = UInt16(port).bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        return address
    }
}
