import CMosquitto
import Synchronization

/// libmosquitto's process-wide initialisation, done once before the first client.
enum MosquittoLibrary {
    private static let initialised = Mutex(false)

    static func initialiseOnce() {
        initialised.withLock { done in
            guard !done else { return }
            mosquitto_lib_init()
            done = true
        }
    }

    /// "major.minor.revision" of the libmosquitto in use.
    static var version: String {
        var major: Int32 = 0
        var minor: Int32 = 0
        var revision: Int32 = 0
        mosquitto_lib_version(&major, &minor, &revision)
        return "\(major).\(minor).\(revision)"
    }
}
