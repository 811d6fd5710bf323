import BeaconStore
import Foundation

/// hub.yaml's `store:` section: where and how the hub keeps its history (docs/storage.md). Without it the hub keeps
/// nothing and acknowledges batches once applied, as before persistence existed.
public struct HubStoreSettings: Decodable, Sendable, Hashable {
    /// Which database keeps the history.
    public enum Backend: String, Sendable, Hashable, CaseIterable {
        /// A SQLite file beside the hub (`path`): one venue, one hub.
        case sqlite
        /// A PostgreSQL server (`postgres`): standby hubs and many sites in one history.
        case postgres
    }

    public var backend = Backend.sqlite
    /// The database file (SQLite); relative to hub.yaml's folder. Empty with `backend: postgres`.
    public var path: String
    /// The server, with `backend: postgres`.
    public var postgres: PostgresStoreSettings?
    /// `normal` (WAL + synchronous=NORMAL: survives a killed hub or broker; a power cut at the hub may lose the last
    /// commits, acknowledged ones included) or `full` (also survives power loss, one fsync per commit).
    /// docs/storage.md, "Durability".
    public var synchronous = StoreDatabase.Durability.normal
    /// At most this long between commits (acknowledgements follow each commit).
    public var commitSeconds = 0.5
    /// Keep every raw sighting (one row each) for `rawRetentionHours`.
    public var rawSightings = false
    public var rawRetentionHours = 24.0
    /// Tags' hourly battery readings (one per tag and hour) are kept this long.
    public var batteryRetentionDays = 400.0
    /// A visit starting within this long of the tag's previous exit continues its trip (transitions, routes).
    public var tripGapSeconds = 600.0
    /// Batches taken in but not yet committed (the disk is full, or slow) beyond which new batches are refused
    /// unacknowledged: the agents keep them and resend later.
    public var maxBacklogBatches = 10_000
    /// Store keyed pseudonyms (HMAC-SHA256 under `keyFile`) instead of tag and beacon ids in the history tables.
    public var pseudonymise = false
    /// The pseudonymisation key (created with 32 random bytes if missing; must be readable by the hub only).
    public var keyFile: String?

    enum CodingKeys: String, CodingKey, CaseIterable {
        case backend, postgres, path, synchronous, commitSeconds, rawSightings, rawRetentionHours, tripGapSeconds,
            maxBacklogBatches
        case pseudonymise, keyFile, batteryRetentionDays
    }

    public init(path: String) { self.path = path }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        if let name = try container.decodeIfPresent(String.self, forKey: .backend) {
            guard let backend = Backend(rawValue: name) else {
                throw DecodingError.dataCorruptedError(
                    forKey: .backend, in: container, debugDescription: "must be sqlite or postgres, found \(name)")
            }
            self.backend = backend
        }
        switch backend {
        case .sqlite:
            path = try container.decode(String.self, forKey: .path)
            if container.contains(.postgres) {
                throw DecodingError.dataCorruptedError(
                    forKey: .postgres, in: container,
                    debugDescription: "store.postgres needs backend: postgres (the default backend is sqlite)")
            }
        case .postgres:
            path = ""
            if container.contains(.path) {
                throw DecodingError.dataCorruptedError(
                    forKey: .path, in: container,
                    debugDescription: "backend: postgres keeps no file: remove store.path, or use backend: sqlite")
            }
            guard let postgres = try container.decodeIfPresent(PostgresStoreSettings.self, forKey: .postgres) else {
                throw DecodingError.keyNotFound(
                    CodingKeys.postgres,
                    DecodingError.Context(
                        codingPath: container.codingPath,
                        debugDescription: "backend: postgres needs a postgres: section with url and passwordFile"))
            }
            self.postgres = postgres
        }
        if let mode = try container.decodeIfPresent(String.self, forKey: .synchronous) {
            guard let durability = StoreDatabase.Durability(rawValue: mode) else {
                throw DecodingError.dataCorruptedError(
                    forKey: .synchronous, in: container, debugDescription: "must be normal or full, found \(mode)")
            }
            synchronous = durability
        }
        commitSeconds = try container.setting(.commitSeconds, commitSeconds, in: 0.05...5)
        rawSightings = try container.decodeIfPresent(Bool.self, forKey: .rawSightings) ?? false
        rawRetentionHours = try container.setting(.rawRetentionHours, rawRetentionHours, in: 0.01...87_600)
        tripGapSeconds = try container.setting(.tripGapSeconds, tripGapSeconds, in: 0...86_400)
        batteryRetentionDays = try container.setting(.batteryRetentionDays, batteryRetentionDays, in: 1...36_500)
        maxBacklogBatches = Int(
            try container.setting(.maxBacklogBatches, Double(maxBacklogBatches), in: 100...10_000_000))
        pseudonymise = try container.decodeIfPresent(Bool.self, forKey: .pseudonymise) ?? false
        keyFile = try container.decodeIfPresent(String.self, forKey: .keyFile)
        if pseudonymise && keyFile == nil {
            throw DecodingError.dataCorruptedError(
                forKey: .pseudonymise, in: container,
                debugDescription: "pseudonymise: true needs keyFile (a path readable by the hub only)")
        }
    }
}

/// hub.yaml's `store.postgres`: the server keeping a shared history (docs/storage.md, "PostgreSQL").
public struct PostgresStoreSettings: Decodable, Sendable, Hashable {
    /// `postgres://USER@HOST[:PORT]/DATABASE[?sslmode=disable|prefer|require|verify-full]`, without a password.
    public var url: String
    /// A file holding the password (first line), readable by the hub only; relative to hub.yaml's folder.
    public var passwordFile: String?
    /// `disable`, `prefer`, `require` or `verify-full` (default; `sslmode` in the URL wins).
    public var tls = "verify-full"
    /// The CA that signed the server's certificate (`verify-full`); the system's roots without it.
    public var caFile: String?
    /// A client certificate and its key, for servers that authenticate by certificate.
    public var certFile: String?
    public var keyFile: String?

    enum CodingKeys: String, CodingKey, CaseIterable {
        case url, passwordFile, tls, caFile, certFile, keyFile
    }

    public init(url: String, passwordFile: String?, tls: String = "verify-full") {
        self.url = url
        self.passwordFile = passwordFile
        self.tls = tls
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        url = try container.decode(String.self, forKey: .url)
        passwordFile = try container.decodeIfPresent(String.self, forKey: .passwordFile)
        tls = try container.decodeIfPresent(String.self, forKey: .tls) ?? "verify-full"
        guard ["disable", "prefer", "require", "verify-full"].contains(tls) else {
            throw DecodingError.dataCorruptedError(
                forKey: .tls, in: container,
                debugDescription: "must be disable, prefer, require or verify-full, found \(tls)")
        }
        caFile = try container.decodeIfPresent(String.self, forKey: .caFile)
        certFile = try container.decodeIfPresent(String.self, forKey: .certFile)
        keyFile = try container.decodeIfPresent(String.self, forKey: .keyFile)
        if (certFile == nil) != (keyFile == nil) {
            throw DecodingError.dataCorruptedError(
                forKey: certFile == nil ? .keyFile : .certFile, in: container,
                debugDescription: "certFile and keyFile go together")
        }
    }
}
