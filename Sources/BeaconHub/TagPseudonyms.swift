import Crypto
import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// Maps tag and beacon ids to the ids the history tables hold: the ids themselves, or keyed pseudonyms
/// (`p-` + the first 16 hex digits of HMAC-SHA256(key, id)) when `store.pseudonymise` is on. The same id always gets
/// the same pseudonym under one key, so visits, routes and dwell per tag still work; without the key, a pseudonym
/// cannot be tied back to a beacon.
public struct TagPseudonyms: Sendable {
    /// The key's bytes (`SymmetricKey` itself is not `Sendable` in swift-crypto 3).
    let keyBytes: [UInt8]?
    /// A fingerprint of the key (recorded in the database so that a changed key is noticed), `nil` without one.
    public let keyID: String?

    /// Ids kept as they are.
    public static let none = TagPseudonyms(key: nil)

    init(key: [UInt8]?) {
        keyBytes = key
        keyID = key.map { key in
            SHA256.hash(data: Data("beacontracker-key-id".utf8) + Data(key)).prefix(4)
                .map { String(format: "%02x", $0) }.joined()
        }
    }

    /// The id stored for `id`.
    public func key(for id: String) -> String {
        guard let keyBytes else { return id }
        let code = HMAC<SHA256>.authenticationCode(for: Data(id.utf8), using: SymmetricKey(data: keyBytes))
        return "p-" + code.prefix(8).map { String(format: "%02x", $0) }.joined()
    }

    /// The pseudonyms of the store settings: none, or the key in `keyFile`, created (32 random bytes, mode 0600) when
    /// missing. A key file others can read is refused: the pseudonyms would protect nothing.
    public static func load(_ settings: HubStoreSettings?) throws(HubSetupError) -> TagPseudonyms {
        guard let settings, settings.pseudonymise, let path = settings.keyFile else { return .none }
        let manager = FileManager.default
        if !manager.fileExists(atPath: path) {
            var generator = SystemRandomNumberGenerator()
            let bytes = (0..<32).map { _ in UInt8.random(in: 0...255, using: &generator) }
            guard manager.createFile(atPath: path, contents: Data(bytes), attributes: [.posixPermissions: 0o600])
            else {
                throw cannotCreate(path)
            }
        }
        return TagPseudonyms(key: try readKey(at: path))
    }

    /// What `load` would refuse, found without creating the key: a missing key whose folder is not writable, or a key
    /// that others can read, that cannot be read or is too short. For `beacon-hub check`.
    public static func problem(_ settings: HubStoreSettings?) -> HubSetupError? {
        guard let settings, settings.pseudonymise, let path = settings.keyFile else { return nil }
        guard FileManager.default.fileExists(atPath: path) else {
            let folder = URL(fileURLWithPath: path).deletingLastPathComponent().path
            return access(folder, W_OK | X_OK) == 0 ? nil : cannotCreate(path)
        }
        do {
            _ = try readKey(at: path)
            return nil
        } catch {
            return error
        }
    }

    private static func cannotCreate(_ path: String) -> HubSetupError {
        HubSetupError("cannot create the pseudonymisation key \(path): check its folder is writable")
    }

    /// The key in `path`, refused when others can read it or it holds fewer than 16 bytes.
    static func readKey(at path: String) throws(HubSetupError) -> [UInt8] {
        let manager = FileManager.default
        guard let attributes = try? manager.attributesOfItem(atPath: path),
            let mode = attributes[.posixPermissions] as? Int, let data = manager.contents(atPath: path)
        else {
            throw HubSetupError("cannot read the pseudonymisation key \(path): run the hub as the key's owner")
        }
        guard mode & 0o077 == 0 else {
            throw HubSetupError(
                "the pseudonymisation key \(path) is readable by others (mode \(String(mode, radix: 8))): "
                    + "chmod 600 \(path)")
        }
        guard data.count >= 16 else {
            throw HubSetupError(
                "the pseudonymisation key \(path) holds \(data.count) bytes; at least 16 are needed: delete it to "
                    + "have a new one made (pseudonyms then change: use a new database)")
        }
        return [UInt8](data)
    }
}

/// A hub that cannot start as configured, and what to do.
public struct HubSetupError: Error, Sendable, CustomStringConvertible {
    public let description: String
    public init(_ description: String) { self.description = description }
}
