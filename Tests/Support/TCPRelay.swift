import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// A loopback TCP relay to a port, that a test can cut and restore: one gateway's network path to the broker, while
/// everyone else's stays up. `cut()` closes the listener and every relayed connection (the client sees its connection
/// drop and new connects refused); `restore()` listens again on the same port.
public final class TCPRelay: Sendable {
    public let port: Int
    let target: Int
    let state = Mutex(State())

    struct State {
        var listener: Int32 = -1
        var sockets: Set<Int32> = []
        var generation = 0
    }

    public init(to target: Int) throws {
        self.target = target
        port = try FreePort.find()
        try restore()
    }

    deinit { cut() }

    /// Listens (again) and relays every connection to the target.
    public func restore() throws {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var yes: Int32 = 1
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &yes, socklen_t(MemoryLayout<Int32>.size))
        var address = Self.loopback(port: port)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard bound == 0, listen(fd, 16) == 0 else {
            close(fd)
            throw BrokerError("relay cannot listen on \(port): \(String(cString: strerror(errno)))")
        }
        let generation = state.withLock { state in
            state.listener = fd
            state.generation += 1
            return state.generation
        }
        Thread.detachNewThread { [self] in acceptLoop(fd, generation: generation) }
    }

    /// Drops every relayed connection and stops listening.
    public func cut() {
        let (listener, sockets) = state.withLock { state in
            defer {
                state.listener = -1
                state.sockets = []
                state.generation += 1
            }
            return (state.listener, state.sockets)
        }
        if listener >= 0 {
            shutdown(listener, Int32(SHUT_RDWR))
            close(listener)
        }
        for socket in sockets { shutdown(socket, Int32(SHUT_RDWR)) }
    }

    func acceptLoop(_ listener: Int32, generation: Int) {
        while true {
            let client = accept(listener, nil, nil)
            guard client >= 0 else { return }
            let upstream = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            var address = Self.loopback(port: target)
            let connected = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    connect(upstream, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
                }
            }
            let current = state.withLock { state -> Bool in
                guard state.generation == generation, connected == 0 else { return false }
                state.sockets.insert(client)
                state.sockets.insert(upstream)
                return true
            }
            guard current else {
                close(client)
                close(upstream)
                continue
            }
            let pumps = Mutex(2)
            let finished: @Sendable () -> Void = { [self] in
                // The second pump to end closes both sockets: no descriptor is closed while the other still uses it.
                guard
                    pumps.withLock({ count -> Bool in
                        count -= 1
                        return count == 0
                    })
                else { return }
                state.withLock { state in
                    state.sockets.remove(client)
                    state.sockets.remove(upstream)
                }
                close(client)
                close(upstream)
            }
            Thread.detachNewThread { [self] in
                pump(from: client, to: upstream)
                finished()
            }
            Thread.detachNewThread { [self] in
                pump(from: upstream, to: client)
                finished()
            }
        }
    }

    func pump(from source: Int32, to destination: Int32) {
        var buffer = [UInt8](repeating: 0, count: 16 * 1024)
        while true {
            let count = buffer.withUnsafeMutableBytes { read(source, $0.baseAddress, $0.count) }
            guard count > 0 else { break }
            var sent = 0
            while sent < count {
                let written = buffer.withUnsafeBytes { write(destination, $0.baseAddress! + sent, count - sent) }
                guard written > 0 else { break }
                sent += written
            }
            guard sent == count else { break }
        }
        // Either side ended: end both directions.
        shutdown(destination, Int32(SHUT_RDWR))
        shutdown(source, Int32(SHUT_RDWR))
    }

    static func loopback(port: Int) -> sockaddr_in {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = UInt16(port).bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        return address
    }
}
