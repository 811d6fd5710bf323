/// Why a database cannot be used, with what to do about it.
public struct StoreError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The failure class.
    public enum Code: String, Sendable, Hashable {
        case cannotOpen = "cannot-open", newerSchema = "newer-schema", io
    }

    public let code: Code
    public let message: String

    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    public var description: String { message }
}
