import Foundation

#if canImport(Glibc)
    import Glibc
#endif

extension StoreDatabase {
    /// Why no database can be opened or created at `path`, found without opening anything: its folder is missing or
    /// not writable (SQLite also creates its `-wal` and `-shm` files there), or the file is not a SQLite database.
    /// `nil` when nothing visible is wrong (the disk may still be full, or the file in use).
    ///
    /// Opening calls this first, and `beacon-hub check` / `beacon-agent check` call it instead of opening, so that
    /// both report the same problems.
    public static func locationProblem(_ path: String) -> StoreError? {
        let folder = URL(fileURLWithPath: path).deletingLastPathComponent().path
        var isFolder: ObjCBool = false
        guard FileManager.default.fileExists(atPath: folder, isDirectory: &isFolder) else {
            return StoreError(
                .cannotOpen,
                "the folder \(folder) of database \(path) does not exist: create it, writable by the program's user "
                    + "(the systemd unit's StateDirectory does), or change the path")
        }
        guard isFolder.boolValue else {
            return StoreError(.cannotOpen, "\(folder) is not a folder: change the database path \(path)")
        }
        guard access(folder, W_OK | X_OK) == 0 else {
            return StoreError(
                .cannotOpen,
                "the folder \(folder) is not writable by this user (uid \(getuid())), and SQLite creates files there: "
                    + "give it to the program's user, or change the database path \(path)")
        }
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isFolder) else { return nil }
        guard !isFolder.boolValue else {
            return StoreError(.cannotOpen, "\(path) is a folder: give the database's file name")
        }
        guard access(path, R_OK | W_OK) == 0 else {
            return StoreError(
                .cannotOpen,
                "database \(path) is not readable and writable by this user (uid \(getuid())): give it to the "
                    + "program's user")
        }
        // Every SQLite 3 file starts with this header; an empty file is one SQLite has not written yet.
        let header = FileHandle(forReadingAtPath: path).map { handle in
            defer { try? handle.close() }
            return (try? handle.read(upToCount: 16)) ?? Data()
        }
        if let header, !header.isEmpty, header != Data("SQLite format 3\0".utf8) {
            return StoreError(
                .cannotOpen, "\(path) is not a SQLite database: move it away, or change the database path")
        }
        return nil
    }
}
