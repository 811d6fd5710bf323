/// Malformed input: an AD structure or HCI event whose lengths do not add up. Says where and what.
public struct DecodeError: Error, Sendable, Hashable, CustomStringConvertible {
    public let message: String

    public init(_ message: String) {
        self.message = message
    }

    public var description: String { message }
}
