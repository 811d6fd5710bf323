import CBluetooth
import Glibc

/// An open raw HCI socket on one adapter. Scanning (LE scan parameters, reading advertising reports) is built on
/// this in the agent issue.
public final class HCIAdapter: Sendable {
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
}
