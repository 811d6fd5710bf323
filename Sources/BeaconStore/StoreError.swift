import GRDB

/// Why a database cannot be used, with what to do about it.
public struct StoreError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The failure class.
    public enum Code: String, Sendable, Hashable {
        case cannotOpen = "cannot-open", newerSchema = "newer-schema", olderSchema = "older-schema", io
        /// SQLITE_FULL: the disk (or the file system's quota) is full.
        case diskFull = "disk-full"
        /// Another process writes the file.
        case locked
        /// The database belongs to another site, or was written with another pseudonymisation.
        case mismatch
    }

    public let code: Code
    public let message: String

    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    public var description: String { message }
}

extension StoreError {
    /// SQLite's error with its extended result code, and what to do.
    init(_ error: DatabaseError, path: String) {
        let detail = "\(error.message ?? "\(error.resultCode)") (SQLite code \(error.extendedResultCode.rawValue))"
        if error.resultCode == .SQLITE_FULL {
            self.init(.diskFull, "\(path): disk full — \(detail): free space; nothing already stored is lost")
        } else {
            self.init(.io, "\(path): \(detail)")
        }
    }
}
