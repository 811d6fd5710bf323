/// A configuration file that cannot be used, naming the file, the key and what was expected.
public struct ConfigError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The failure class.
    public enum Code: String, Sendable, Hashable {
        case unreadable, syntax, unknownKey = "unknown-key", missingKey = "missing-key", invalidValue = "invalid-value"
    }

    public let code: Code
    /// The file as given.
    public let file: String
    /// Dotted key path, e.g. `mqtt.tls.caFile`; empty for the whole file.
    public let key: String
    public let message: String

    public init(_ code: Code, file: String, key: String, _ message: String) {
        self.code = code
        self.file = file
        self.key = key
        self.message = message
    }

    public var description: String {
        key.isEmpty ? "\(file): \(message)" : "\(file): \(key): \(message)"
    }
}
