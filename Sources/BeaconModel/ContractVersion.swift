/// The `version` field every MQTT payload and line format carries (docs/mqtt.md, "Common rules").
public enum ContractVersion {
    /// The version this build writes and the highest it reads.
    public static let current = 1
}
