import Foundation

/// A new directory in the system's temporary directory, named `<prefix>-<UUID>`, deleted with everything in it when
/// the last reference to it goes.
///
/// A suite keeps one in a stored property: Swift Testing makes a suite instance for each test and drops it once the
/// test has returned, pass or fail — after the brokers, programs and stores the test held in its locals were stopped
/// and released — so each test's files go with it instead of piling up in /tmp.
public final class TemporaryDirectory: Sendable {
    public let url: URL
    public var path: String { url.path }

    public init(prefix: String) throws {
        url = FileManager.default.temporaryDirectory.appendingPathComponent("\(prefix)-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }

    deinit {
        try? FileManager.default.removeItem(at: url)
    }
}
