import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// Loopback TCP port helpers for test brokers.
public enum FreePort {
    /// A port free on 127.0.0.1 now, for a listener started later (a broker, a database, a driver).
    ///
    /// Taken outside the kernel's ephemeral range (`ip_local_port_range`) and never twice in one process. Between
    /// this call and the listener's bind, nothing else may take the port: every server of a test on port 0 and
    /// every outgoing connection gets an ephemeral port. A CI run failed so when the port came from the ephemeral
    /// range: mosquitto's bind found "Address already in use". See `Refused` for a port that must stay unanswered.
    public static func find() throws -> Int {
        let candidates = listenerRange()
        for _ in 0..<1000 {
            let port = Int.random(in: candidates)
            guard handedOut.withLock({ $0.insert(port).inserted }) else { continue }
            if let fd = try? bindLoopback(port: port) {
                close(fd)
                return port
            }
        }
        throw BrokerError(
            "no free loopback port in \(candidates): stop whatever listens there, or widen the system's "
                + "ip_local_port_range")
    }

    /// Ports `find()` returned in this process.
    private static let handedOut = Mutex<Set<Int>>([])

    /// Below the ephemeral range when it starts high enough (Linux's default is 32768–60999), else above it.
    static func listenerRange() -> ClosedRange<Int> {
        let text = (try? String(contentsOfFile: "/proc/sys/net/ipv4/ip_local_port_range", encoding: .utf8)) ?? ""
        let bounds = text.split(whereSeparator: \.isWhitespace).compactMap { Int($0) }
        let (low, high) = bounds.count == 2 ? (bounds[0], bounds[1]) : (32768, 60999)
        if low > 12000 { return 10000...(low - 1) }
        return high < 63000 ? (high + 1)...65535 : 1024...65535
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
        let fd = try bindLoopback(port: 0)
        var address = loopback(port: 0)
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        return (fd, Int(UInt16(bigEndian: address.sin_port)))
    }

    /// A TCP socket bound to 127.0.0.1:`port` (0: the kernel's choice), not listening.
    private static func bindLoopback(port: Int) throws -> Int32 {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw BrokerError("socket() failed: \(String(cString: strerror(errno)))") }
        var address = loopback(port: port)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                Glibc.bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard bound == 0 else {
            let message = String(cString: strerror(errno))
            close(fd)
            throw BrokerError("bind() failed: \(message)")
        }
        return fd
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
