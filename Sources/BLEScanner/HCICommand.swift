/// An HCI command: its opcode (OGF and OCF) and parameters, as the Bluetooth Core specification (Vol 4, Part E, 7.8)
/// lays them out. The agent's scan and advertising commands; `packet` is the H4 packet `hcitool cmd` writes.
public struct HCICommand: Sendable, Hashable {
    /// OGF 0x08: LE controller commands.
    public static let leGroup: UInt16 = 0x08

    public let ogf: UInt16
    public let ocf: UInt16
    public let parameters: [UInt8]

    public init(ogf: UInt16, ocf: UInt16, parameters: [UInt8]) {
        self.ogf = ogf
        self.ocf = ocf
        self.parameters = parameters
    }

    /// The 16-bit opcode: OGF in the top 6 bits, OCF in the low 10.
    public var opcode: UInt16 { ogf << 10 | ocf }

    /// The H4 packet: type 0x01, the opcode little-endian, the parameters' length, the parameters.
    public var packet: [UInt8] {
        [0x01, UInt8(opcode & 0xFF), UInt8(opcode >> 8), UInt8(parameters.count)] + parameters
    }

    /// Advertising interval in the controller's 0.625 ms units (20 ms to 10.24 s).
    static func advertisingUnits(_ milliseconds: Double) -> UInt32 {
        UInt32((milliseconds / 0.625).rounded()).clamped(to: 0x0020...0x4000)
    }

    // MARK: Legacy advertising (Bluetooth 4.0 and later)

    /// LE Set Advertising Parameters (0x2006): non-connectable undirected advertising (ADV_NONCONN_IND) from the
    /// public address on all three channels, at `intervalMilliseconds`.
    public static func leSetAdvertisingParameters(intervalMilliseconds: Double) -> HCICommand {
        let units = UInt16(advertisingUnits(intervalMilliseconds))
        let interval = [UInt8(units & 0xFF), UInt8(units >> 8)]
        // Interval min and max, ADV_NONCONN_IND, own address public, peer address type and address (unused), channels
        // 37, 38 and 39, no filter.
        return HCICommand(
            ogf: leGroup, ocf: 0x0006,
            parameters: interval + interval + [0x03, 0x00, 0x00] + [UInt8](repeating: 0, count: 6) + [0x07, 0x00])
    }

    /// LE Read Advertising Physical Channel Tx Power (0x2007): returns the status and the power, dBm (signed).
    public static let leReadAdvertisingChannelTxPower = HCICommand(ogf: leGroup, ocf: 0x0007, parameters: [])

    /// LE Set Advertising Data (0x2008): the length, then the data padded with zeros to 31 bytes. Nil beyond 31 bytes.
    public static func leSetAdvertisingData(_ data: [UInt8]) -> HCICommand? {
        guard data.count <= 31 else { return nil }
        return HCICommand(
            ogf: leGroup, ocf: 0x0008,
            parameters: [UInt8(data.count)] + data + [UInt8](repeating: 0, count: 31 - data.count))
    }

    /// LE Set Advertising Enable (0x200A).
    public static func leSetAdvertisingEnable(_ enable: Bool) -> HCICommand {
        HCICommand(ogf: leGroup, ocf: 0x000A, parameters: [enable ? 0x01 : 0x00])
    }

    // MARK: Extended advertising (Bluetooth 5.0): a controller that has seen extended commands refuses legacy ones

    /// The advertising set the agent uses.
    static let advertisingHandle: UInt8 = 0x00

    /// LE Set Extended Advertising Parameters (0x2036): set 0 sends legacy ADV_NONCONN_IND PDUs (event properties bit
    /// 4 only, so every scanner hears it) on the 1M PHY, at `intervalMilliseconds`, asking for `txPower` dBm (127: no
    /// preference). Returns the status and the power the controller chose.
    public static func leSetExtendedAdvertisingParameters(intervalMilliseconds: Double, txPower: Int?) -> HCICommand {
        let units = advertisingUnits(intervalMilliseconds)
        let interval = [UInt8(units & 0xFF), UInt8(units >> 8 & 0xFF), UInt8(units >> 16 & 0xFF)]
        let power = txPower.map { UInt8(bitPattern: Int8($0.clamped(to: -127...20))) } ?? 0x7F
        var parameters: [UInt8] = [advertisingHandle, 0x10, 0x00]  // handle, event properties: legacy, non-connectable
        parameters += interval + interval
        parameters += [0x07, 0x00, 0x00] + [UInt8](repeating: 0, count: 6)  // channels, own and peer address
        parameters += [0x00, power, 0x01, 0x00, 0x01, 0x00, 0x00]  // filter, power, PHYs, skip, SID, notifications
        return HCICommand(ogf: leGroup, ocf: 0x0036, parameters: parameters)
    }

    /// LE Set Extended Advertising Data (0x2037): the complete data of set 0 in one operation. Nil beyond 31 bytes
    /// (legacy PDUs carry no more).
    public static func leSetExtendedAdvertisingData(_ data: [UInt8]) -> HCICommand? {
        guard data.count <= 31 else { return nil }
        // Handle, operation 0x03 (complete data), fragment preference 0x01 (do not fragment), length, data.
        return HCICommand(
            ogf: leGroup, ocf: 0x0037, parameters: [advertisingHandle, 0x03, 0x01, UInt8(data.count)] + data)
    }

    /// LE Set Extended Advertising Enable (0x2039) for set 0, without a duration or event limit.
    public static func leSetExtendedAdvertisingEnable(_ enable: Bool) -> HCICommand {
        HCICommand(
            ogf: leGroup, ocf: 0x0039,
            parameters: [enable ? 0x01 : 0x00, 0x01, advertisingHandle, 0x00, 0x00, 0x00])
    }

    /// LE Remove Advertising Set (0x203C) for set 0, so that a later start sets it up afresh.
    public static let leRemoveAdvertisingSet = HCICommand(ogf: leGroup, ocf: 0x003C, parameters: [advertisingHandle])
}

/// The status codes of the Bluetooth Core specification (Vol 1, Part F) the advertising start tells apart.
public enum HCIStatus {
    public static let success: UInt8 = 0x00
    public static let unknownCommand: UInt8 = 0x01
    public static let commandDisallowed: UInt8 = 0x0C
    public static let unsupportedParameter: UInt8 = 0x11
    public static let invalidParameters: UInt8 = 0x12
    /// Not a specification code: the controller answered with a failed Command Status, whose status libbluetooth
    /// does not pass on.
    public static let refused: UInt8 = 0xFF

    /// The specification's name for a status, for logs and the heartbeat.
    public static func name(_ status: UInt8) -> String {
        switch status {
        case success: "success"
        case unknownCommand: "unknown HCI command"
        case commandDisallowed: "command disallowed"
        case unsupportedParameter: "unsupported feature or parameter value"
        case invalidParameters: "invalid HCI command parameters"
        case 0x07: "memory capacity exceeded"
        case 0x0D: "connection rejected due to limited resources"
        case refused: "refused (command status)"
        default: "status 0x" + String(status, radix: 16)
        }
    }
}
