/// Why `beacon-sim bench` cannot go on: what failed and what to write instead.
public struct BenchError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The kind of failure.
    public enum Code: Sendable, Hashable {
        /// `--seeds` is not a range `A..B`.
        case badSeedRange
        /// `--venues` asks for more venues than the range holds (or none).
        case badVenueCount
        /// A child program failed or wrote what could not be read.
        case stepFailed
    }

    public var code: Code
    public var message: String

    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    public var description: String { message }
}
