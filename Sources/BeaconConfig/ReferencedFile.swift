import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// The checks of a file that a configuration names (venue, calibration, TLS files, password and token files), shared
/// by start-up and `check`, so that both say the same.
public enum ReferencedFile {
    /// `file` taken from the folder of `configFile` when relative, as every path a configuration names.
    public static func resolve(_ file: String, relativeTo configFile: String) -> String {
        file.hasPrefix("/")
            ? file : URL(fileURLWithPath: configFile).deletingLastPathComponent().appendingPathComponent(file).path
    }

    /// Why this process cannot read `path` (`what` names it in the message), as a problem of `key` in `configFile`;
    /// `nil` when it can.
    public static func readProblem(_ path: String, what: String, configFile: String, key: String) -> ConfigError? {
        var info = stat()
        guard stat(path, &info) == 0 else {
            let reason = errno == ENOENT ? "does not exist" : "cannot be reached (\(String(cString: strerror(errno))))"
            return ConfigError(.unreadable, file: configFile, key: key, "\(what) \(path) \(reason): check the path")
        }
        guard info.st_mode & S_IFMT != S_IFDIR else {
            return ConfigError(.unreadable, file: configFile, key: key, "\(what) \(path) is a folder: name the file")
        }
        guard access(path, R_OK) == 0 else {
            return ConfigError(
                .unreadable, file: configFile, key: key,
                "\(what) \(path) is not readable by this user (uid \(getuid())): check its owner, group and mode")
        }
        return nil
    }
}
