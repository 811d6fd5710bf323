import CBluetooth
import Glibc

/// An open raw HCI socket on one adapter, with the LE scan commands. Used from one thread (the scanner's).
public final class HCIAdapter: @unchecked Sendable {
    // @unchecked: the descriptor is only used by the scanner thread that opened it.
    public let name: String
    public let deviceID: Int32
    let descriptor: Int32

    private init(name: String, deviceID: Int32, descriptor: Int32) {
        self.name = name
        self.deviceID = deviceID
        self.descriptor = descriptor
    }

    deinit {
        cbt_close_device(descriptor)
    }

    /// Opens `name` (e.g. `hci0`) and checks that it is up.
    public static func open(_ name: String) throws(HCIError) -> HCIAdapter {
        var error: Int32 = 0
        let id = cbt_device_id(name, &error)
        guard id >= 0 else { throw HCIError.fromErrno(error, adapter: name) }
        let fd = cbt_open_device(id, &error)
        guard fd >= 0 else { throw HCIError.fromErrno(error, adapter: name) }
        let adapter = HCIAdapter(name: name, deviceID: id, descriptor: fd)
        var up: Int32 = 0
        let rc = cbt_device_is_up(fd, id, &up)
        guard rc == 0 else { throw HCIError.fromErrno(rc, adapter: name) }
        guard up == 1 else { throw HCIError.fromErrno(ENETDOWN, adapter: name) }
        return adapter
    }

    /// Event filter, scan parameters, then scanning on with duplicate filtering off.
    /// Interval and window are in milliseconds (0.625 ms units on the wire, 2.5 ms to 10.24 s).
    func startScanning(active: Bool, intervalMilliseconds: Double, windowMilliseconds: Double) throws(HCIError) {
        try check(cbt_set_event_filter(descriptor))
        // A controller refuses new parameters while scanning: stop first (an error here only means "was not on").
        _ = cbt_set_scan_enable(descriptor, 0)
        try check(
            cbt_set_scan_parameters(
                descriptor, active ? 1 : 0, Self.units(intervalMilliseconds), Self.units(windowMilliseconds)))
        try check(cbt_set_scan_enable(descriptor, 1))
    }

    /// Sends `command` and returns the controller's answer: its status, and the return parameters after it.
    func send(_ command: HCICommand) throws(HCIError) -> (status: UInt8, returned: [UInt8]) {
        var error: Int32 = 0
        var response = [UInt8](repeating: 0, count: 64)
        var length: Int32 = 0
        error = command.parameters.withUnsafeBufferPointer { parameters in
            response.withUnsafeMutableBufferPointer { buffer in
                cbt_send_command(
                    descriptor, command.ogf, command.ocf, parameters.baseAddress, Int32(parameters.count),
                    buffer.baseAddress, Int32(buffer.count), &length)
            }
        }
        // libbluetooth turns a Command Status with an error into EIO, without the status: the command was refused.
        if error == EIO { return (HCIStatus.refused, []) }
        guard error == 0 else { throw HCIError.fromErrno(error, adapter: name) }
        guard length > 0 else { return (HCIStatus.success, []) }
        return (response[0], Array(response[1..<Int(length)]))
    }

    /// Scanning off, e.g. before closing at shutdown.
    func stopScanning() {
        _ = cbt_set_scan_enable(descriptor, 0)
    }

    /// One HCI packet (with its H4 type byte) read into `buffer`: its length (0 on timeout) and when the kernel
    /// received it (nil when the socket gave no timestamp).
    func readPacket(
        into buffer: inout [UInt8], timeoutMilliseconds: Int32
    ) throws(HCIError) -> (count: Int, received: Double?) {
        var error: Int32 = 0
        var received = 0.0
        let count = buffer.withUnsafeMutableBufferPointer { pointer in
            cbt_read_packet(
                descriptor, pointer.baseAddress, Int32(pointer.count), timeoutMilliseconds, &received, &error)
        }
        guard count >= 0 else { throw HCIError.fromErrno(error, adapter: name) }
        return (Int(count), received > 0 ? received : nil)
    }

    private func check(_ rc: Int32) throws(HCIError) {
        guard rc == 0 else { throw HCIError.fromErrno(rc, adapter: name) }
    }

    /// The kernel's receive time in a `recvmsg` control buffer (what `readPacket` reads), nil when it holds none.
    public static func receiveTime(inControl control: [UInt8]) -> Double? {
        let time = control.withUnsafeBytes { cbt_control_timestamp($0.baseAddress, $0.count) }
        return time > 0 ? time : nil
    }

    static func units(_ milliseconds: Double) -> UInt16 {
        UInt16(clamping: Int((milliseconds / 0.625).rounded()).clamped(to: 0x0004...0x4000))
    }
}

extension Comparable {
    func clamped(to range: ClosedRange<Self>) -> Self { min(max(self, range.lowerBound), range.upperBound) }
}
