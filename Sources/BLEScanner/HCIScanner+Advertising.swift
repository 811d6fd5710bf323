/// The gateway's own beacon (agent.yaml `selfBeacon:`): advertised through the scanning socket, interleaved with
/// scanning by the controller.
extension HCIScanner {
    /// What to advertise.
    public struct Advertising: Sendable, Hashable {
        /// The advertising data (flags and the beacon frame), at most 31 bytes.
        public var data: [UInt8]
        public var intervalMilliseconds: Double
        /// The power asked of the controller, dBm; only extended advertising can ask (legacy controllers use their
        /// own, which is read back). Nil: no preference.
        public var txPower: Int?

        public init(data: [UInt8], intervalMilliseconds: Double, txPower: Int? = nil) {
            self.data = data
            self.intervalMilliseconds = intervalMilliseconds
            self.txPower = txPower
        }
    }

    /// How the controller was told to advertise.
    public enum AdvertisingMode: String, Sendable, Hashable {
        /// LE Set Advertising Parameters / Data / Enable (Bluetooth 4.0).
        case legacy
        /// The extended commands (Bluetooth 5.0), sending legacy PDUs: for a controller that refuses the legacy
        /// commands because the kernel or another program used the extended ones.
        case extended
    }

    /// The advertising's state, for the heartbeat.
    public enum AdvertisingState: Sendable, Hashable {
        /// Advertising, with the power the controller reported (dBm), if it did.
        case on(AdvertisingMode, txPower: Int?)
        /// The controller refused; the message names the command and its status.
        case failed(String)
    }

    /// Tells the controller to advertise: legacy commands first, which every LE controller has; the extended ones when
    /// the legacy ones are refused as unknown or disallowed. Advertising is switched off first (parameters cannot
    /// change while it is on).
    static func startAdvertising(
        _ advertising: Advertising, on adapter: HCIAdapter
    ) throws(HCIError) -> AdvertisingState {
        guard let legacyData = HCICommand.leSetAdvertisingData(advertising.data),
            let extendedData = HCICommand.leSetExtendedAdvertisingData(advertising.data)
        else { return .failed("the advertising data is longer than 31 bytes") }
        _ = try adapter.send(.leSetAdvertisingEnable(false))
        let parameters = try adapter.send(
            .leSetAdvertisingParameters(intervalMilliseconds: advertising.intervalMilliseconds))
        if parameters.status == HCIStatus.success {
            if let failure = try refusal(of: legacyData, "LE Set Advertising Data", on: adapter) { return failure }
            let power = try adapter.send(.leReadAdvertisingChannelTxPower)
            if let failure = try refusal(of: .leSetAdvertisingEnable(true), "LE Set Advertising Enable", on: adapter) {
                return failure
            }
            let txPower =
                power.status == HCIStatus.success ? power.returned.first.map { Int(Int8(bitPattern: $0)) } : nil
            return .on(.legacy, txPower: txPower)
        }
        let switchable = [HCIStatus.unknownCommand, HCIStatus.commandDisallowed, HCIStatus.refused]
        guard switchable.contains(parameters.status) else {
            return .failed("LE Set Advertising Parameters: \(HCIStatus.name(parameters.status))")
        }
        // A fresh set: switched off and removed (both refused harmlessly when there is none).
        _ = try adapter.send(.leSetExtendedAdvertisingEnable(false))
        _ = try adapter.send(.leRemoveAdvertisingSet)
        let extended = try adapter.send(
            .leSetExtendedAdvertisingParameters(
                intervalMilliseconds: advertising.intervalMilliseconds, txPower: advertising.txPower))
        guard extended.status == HCIStatus.success else {
            return .failed(
                "LE Set Advertising Parameters: \(HCIStatus.name(parameters.status)); "
                    + "LE Set Extended Advertising Parameters: \(HCIStatus.name(extended.status))")
        }
        if let failure = try refusal(of: extendedData, "LE Set Extended Advertising Data", on: adapter) {
            return failure
        }
        if let failure = try refusal(
            of: .leSetExtendedAdvertisingEnable(true), "LE Set Extended Advertising Enable", on: adapter)
        {
            return failure
        }
        return .on(.extended, txPower: extended.returned.first.map { Int(Int8(bitPattern: $0)) })
    }

    /// Switches advertising off (at shutdown): the controller would otherwise go on advertising for a stopped agent.
    static func stopAdvertising(_ mode: AdvertisingMode, on adapter: HCIAdapter) {
        switch mode {
        case .legacy: _ = try? adapter.send(.leSetAdvertisingEnable(false))
        case .extended:
            _ = try? adapter.send(.leSetExtendedAdvertisingEnable(false))
            _ = try? adapter.send(.leRemoveAdvertisingSet)
        }
    }

    /// Sends `command`; nil when the controller took it, else the failure naming it.
    private static func refusal(
        of command: HCICommand, _ name: String, on adapter: HCIAdapter
    ) throws(HCIError) -> AdvertisingState? {
        let answer = try adapter.send(command)
        return answer.status == HCIStatus.success ? nil : .failed("\(name): \(HCIStatus.name(answer.status))")
    }
}
