import CBluetooth
import Glibc
import Synchronization

/// The CBluetooth shim's test seam, for tests on machines without Bluetooth: inject OS errors into the shim's calls,
/// or make "the adapter" a pipe that carries recorded HCI packets through the scanner's real read path.
/// Process-wide: tests using it must not run in parallel with each other.
public enum HCITestSeam {
    /// The shim's operations.
    public enum Operation: Sendable {
        case deviceID, open, deviceInfo, filter, scanParameters, scanEnable, read, command

        var op: cbt_op {
            switch self {
            case .deviceID: CBT_OP_DEVICE_ID
            case .open: CBT_OP_OPEN
            case .deviceInfo: CBT_OP_DEVICE_INFO
            case .filter: CBT_OP_FILTER
            case .scanParameters: CBT_OP_SCAN_PARAMETERS
            case .scanEnable: CBT_OP_SCAN_ENABLE
            case .read: CBT_OP_READ
            case .command: CBT_OP_COMMAND
            }
        }
    }

    /// The write end of the socket pair that stands in for the adapter. SOCK_SEQPACKET keeps packet boundaries, as
    /// an HCI socket does: one write is one read.
    public final class Pipe: Sendable {
        let writeEnd: Int32
        let readEnd: Int32

        init(readEnd: Int32, writeEnd: Int32) {
            self.readEnd = readEnd
            self.writeEnd = writeEnd
        }

        /// The packets the scanner sent since the last call (its HCI commands, H4 type byte first), read from the
        /// controller's end without waiting.
        public func sentPackets() -> [[UInt8]] {
            var packets: [[UInt8]] = []
            var buffer = [UInt8](repeating: 0, count: 300)
            while true {
                let count = buffer.withUnsafeMutableBytes { recv(writeEnd, $0.baseAddress, 300, Int32(MSG_DONTWAIT)) }
                guard count > 0 else { return packets }
                packets.append(Array(buffer[0..<count]))
            }
        }

        /// Writes one packet (H4 type byte first), as the kernel would deliver it.
        public func write(_ packet: [UInt8]) {
            _ = packet.withUnsafeBytes { Glibc.write(writeEnd, $0.baseAddress, $0.count) }
        }

        deinit {
            close(writeEnd)
            close(readEnd)
        }
    }

    /// Makes the adapter a socket pair (device lookup, open and scan commands succeed); returns its write end.
    public static func pipe() throws -> Pipe {
        reset()
        var ends: [Int32] = [0, 0]
        guard socketpair(AF_UNIX, Int32(SOCK_SEQPACKET.rawValue), 0, &ends) == 0 else {
            throw HCIError.fromErrno(errno, adapter: "test socket pair")
        }
        // Stamped when written, as the HCI socket stamps packets when the kernel receives them (a unix socket stamps
        // at send only when the receiving end already asked for timestamps, so it asks before any packet is written).
        var one: Int32 = 1
        setsockopt(ends[0], SOL_SOCKET, SO_TIMESTAMP, &one, socklen_t(MemoryLayout<Int32>.size))
        cbt_inject_descriptor(ends[0])
        return Pipe(readEnd: ends[0], writeEnd: ends[1])
    }

    /// Runs `body` with the seam to itself. The seam is process-wide, and suites run side by side (those of different
    /// test modules too, in one process): every test that touches it goes through here, one at a time, and finds it
    /// reset. Reset again afterwards.
    public static func exclusive<T>(_ body: () async throws -> T) async rethrows -> T {
        await gate.acquire()
        reset()
        do {
            let result = try await body()
            reset()
            gate.release()
            return result
        } catch {
            reset()
            gate.release()
            throw error
        }
    }

    /// `exclusive` with the adapter made a socket pair (`pipe()`), kept open while `body` runs.
    public static func withPipe<T>(_ body: (Pipe) async throws -> T) async throws -> T {
        try await exclusive {
            let pipe = try Self.pipe()
            defer { withExtendedLifetime(pipe) {} }
            return try await body(pipe)
        }
    }

    private static let gate = Gate()

    /// One holder at a time; the others wait in order.
    private final class Gate: Sendable {
        private let state = Mutex<(held: Bool, waiting: [CheckedContinuation<Void, Never>])>((false, []))

        func acquire() async {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let now = state.withLock { state -> Bool in
                    guard state.held else {
                        state.held = true
                        return true
                    }
                    state.waiting.append(continuation)
                    return false
                }
                if now { continuation.resume() }
            }
        }

        func release() {
            let next = state.withLock { state -> CheckedContinuation<Void, Never>? in
                guard !state.waiting.isEmpty else {
                    state.held = false
                    return nil
                }
                return state.waiting.removeFirst()
            }
            next?.resume()
        }
    }

    /// The next `count` calls of `operation` fail with the errno value `error`.
    public static func inject(_ operation: Operation, _ error: Int32, count: Int32) {
        cbt_inject_error(operation.op, error, count)
    }

    /// Commands with `opcode` answer with the HCI status `status` (0: success again), as a controller that refuses
    /// them would.
    public static func answer(_ opcode: UInt16, status: UInt8) {
        cbt_inject_command_status(opcode, status)
    }

    /// Calls of `operation` since the last reset.
    public static func calls(_ operation: Operation) -> Int { Int(cbt_call_count(operation.op)) }

    /// Back to the real OS calls.
    public static func reset() { cbt_reset_injection() }
}
