/// A batch of sightings from one gateway: the payload of `gateways/<gateway>/sightings`.
///
/// `(gateway, boot, seq)` identifies a batch for deduplication and acknowledgement; resends reuse it.
public struct SightingBatch: Sendable, Hashable, Codable {
    public var version: Int
    public var gateway: GatewayID
    /// Made anew each time the agent's outbox starts a boot.
    public var boot: String
    /// 1, 2, 3, … within one (gateway, boot), without gaps.
    public var seq: UInt64
    /// When the agent closed and stored the batch, unix seconds; resends carry the stored payload unchanged.
    public var sent: Double
    /// False when the gateway's clock was not synchronised while these sightings were scanned.
    public var clockSynced: Bool
    public var sightings: [Sighting]

    public init(
        gateway: GatewayID, boot: String, seq: UInt64, sent: Double, clockSynced: Bool, sightings: [Sighting]
    ) {
        self.version = ContractVersion.current
        self.gateway = gateway
        self.boot = boot
        self.seq = seq
        self.sent = sent
        self.clockSynced = clockSynced
        self.sightings = sightings
    }
}
