/// The hub's retained acknowledgement to one gateway: the payload of `gateways/<gateway>/ack`.
public struct Acknowledgement: Sendable, Hashable, Codable {
    /// For one boot: every batch with `1...seq` has been processed (contiguous, never a gap).
    public struct Entry: Sendable, Hashable, Codable {
        public var boot: String
        public var seq: UInt64

        public init(boot: String, seq: UInt64) {
            self.boot = boot
            self.seq = seq
        }
    }

    /// How many recent boots one acknowledgement names at most.
    public static let maximumBoots = 8

    public var version: Int
    public var gateway: GatewayID
    public var t: Double
    public var acks: [Entry]

    public init(gateway: GatewayID, t: Double, acks: [Entry]) {
        self.version = ContractVersion.current
        self.gateway = gateway
        self.t = t
        self.acks = acks
    }
}
