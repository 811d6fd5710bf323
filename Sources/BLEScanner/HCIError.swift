import Foundation

/// Why the HCI adapter cannot be used, with the fix an operator can apply.
public struct HCIError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The failure class.
    public enum Code: String, Sendable, Hashable {
        case noBluetoothInKernel = "no-bluetooth-in-kernel"
        case noAdapter = "no-adapter"
        case adapterDown = "adapter-down"
        case blocked
        case permissionDenied = "permission-denied"
        case busy
        case other
    }

    public let code: Code
    public let message: String

    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    public var description: String { message }

    /// Maps an OS error from the HCI socket calls to the operator's fix.
    public static func fromErrno(_ value: Int32, adapter: String) -> HCIError {
        switch value {
        case EAFNOSUPPORT, EPROTONOSUPPORT:
            return HCIError(
                .noBluetoothInKernel,
                "this kernel has no Bluetooth support (AF_BLUETOOTH): run the agent on a gateway with a Bluetooth "
                    + "adapter, or use `beacon-agent replay` with a capture")
        case ENODEV, ENXIO:
            return HCIError(
                .noAdapter,
                "no Bluetooth adapter \(adapter): check `btmgmt info` or `hciconfig -a` and the `adapter:` setting")
        case ENETDOWN:
            return HCIError(.adapterDown, "adapter \(adapter) is down: run `sudo btmgmt --index \(adapter) power on`")
        case ERFKILL:
            return HCIError(.blocked, "adapter \(adapter) is blocked by rfkill: run `sudo rfkill unblock bluetooth`")
        case EPERM, EACCES:
            return HCIError(
                .permissionDenied,
                "no permission to open \(adapter): run as the service user with CAP_NET_RAW and CAP_NET_ADMIN "
                    + "(the systemd unit grants them) or `sudo setcap cap_net_raw,cap_net_admin+eip beacon-agent`")
        case EBUSY:
            return HCIError(
                .busy, "adapter \(adapter) is busy: another program is scanning (stop it, or check bluetoothd)")
        default:
            return HCIError(.other, "adapter \(adapter): \(String(cString: strerror(value)))")
        }
    }
}
