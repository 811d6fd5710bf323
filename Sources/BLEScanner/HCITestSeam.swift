import CBluetooth
import Glibc

/// The CBluetooth shim's test seam, for tests on machines without Bluetooth: inject OS errors into the shim's calls,
/// or make "the adapter" a pipe that carries recorded HCI packets through the scanner's real read path.
/// Process-wide: tests using it must not run in parallel with each other.
public enum HCITestSeam {
    /// The shim's operations.
    public enum Operation: Sendable {
        case deviceID, open, deviceInfo, filter, scanParameters, scanEnable, read

        var op: cbt_op {
            switch self {
            case .deviceID: CBT_OP_DEVICE_ID
            case .open: CBT_OP_OPEN
            case .deviceInfo: CBT_OP_DEVICE_INFO
            case .filter: CBT_OP_FILTER
            case .scanParameters: CBT_OP_SCAN_PARAMETERS
            case .scanEnable: CBT_OP_SCAN_ENABLE
            case .read: CBT_OP_READ
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
        // at send only when the receiving end already asked for timestamps; the shim asks again when it opens it).
        var one: Int32 = 1
        setsockopt(ends[0], SOL_SOCKET, SO_TIMESTAMP, &one, socklen_t(MemoryLayout<Int32>.size))
        cbt_inject_descriptor(ends[0])
        return Pipe(readEnd: ends[0], writeEnd: ends[1])
    }

    /// The next `count` calls of `operation` fail with the errno value `error`.
    public static func inject(_ operation: Operation, _ error: Int32, count: Int32) {
        cbt_inject_error(operation.op, error, count)
    }

    /// Calls of `operation` since the last reset.
    public static func calls(_ operation: Operation) -> Int { Int(cbt_call_count(operation.op)) }

    /// Back to the real OS calls.
    public static func reset() { cbt_reset_injection() }
}
