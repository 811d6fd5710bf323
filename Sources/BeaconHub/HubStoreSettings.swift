import BeaconStore
import Foundation

/// hub.yaml's `store:` section: where and how the hub keeps its history (docs/storage.md). Without it the hub keeps
/// nothing and acknowledges batches once applied, as before persistence existed.
public struct HubStoreSettings: Decodable, Sendable, Hashable {
    /// The database file; relative to hub.yaml's folder.
    public var path: String
    /// `normal` (WAL + synchronous=NORMAL: survives a killed hub or broker; a power cut at the hub may lose the last
    /// commits, acknowledged ones included) or `full` (also survives power loss, one fsync per commit).
    /// docs/storage.md, "Durability".
    public var synchronous = StoreDatabase.Durability.normal
    /// At most this long between commits (acknowledgements follow each commit).
    public var commitSeconds = 0.5
    /// Keep every raw sighting (one row each) for `rawRetentionHours`.
    public var rawSightings = false
    public var rawRetentionHours = 24.0
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
        case path, synchronous, commitSeconds, rawSightings, rawRetentionHours, tripGapSeconds, maxBacklogBatches
        case pseudonymise, keyFile
    }

    public init(path: String) { self.path = path }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        path = try container.decode(String.self, forKey: .path)
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
