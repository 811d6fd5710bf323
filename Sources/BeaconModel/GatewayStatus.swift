/// Retained status of one gateway: the payload of `gateways/<gateway>/status`, and its last-will.
public struct GatewayStatus: Sendable, Hashable, Codable {
    /// Whether the gateway's agent is connected.
    public enum State: String, Sendable, Hashable, Codable {
        case online, offline
    }

    /// What an agent's outbox holds, so operators see a backlog building.
    public struct Outbox: Sendable, Hashable, Codable {
        public var pendingBatches: Int
        public var pendingBytes: Int
        /// When the oldest pending batch was stored, unix seconds.
        public var oldest: Double?
        /// Per boot (the current one, and earlier ones with batches still pending): the lowest sequence the outbox
        /// still holds, or the next sequence when it holds none. What the hub has not received below it will never
        /// come (acknowledged batches are deleted, the rest were dropped when the outbox was full or too old): the
        /// hub records those as lost at once instead of waiting `live.gapTimeoutSeconds`.
        public var resendFrom: [String: UInt64]?

        public init(pendingBatches: Int, pendingBytes: Int, oldest: Double? = nil) {
            self.pendingBatches = pendingBatches
            self.pendingBytes = pendingBytes
            self.oldest = oldest
        }
    }

    /// The gateway's own beacon (agent.yaml `selfBeacon:`), so that the hub knows which beacon is which gateway.
    public struct SelfBeacon: Sendable, Hashable, Codable {
        /// The beacon id it advertises (docs/mqtt.md).
        public var beacon: String
        /// `advertising`, `starting`, `failed` (see `error`), `simulated` (`beacon-sim run --gateway-beacons`), or
        /// `off` while the agent does not scan (replay, `--no-scan`).
        public var state: String
        /// While advertising: `legacy` or `extended` (the Bluetooth 5.0 commands, for a controller that refuses the
        /// legacy ones).
        public var mode: String?
        /// Power at 1 m in the frame, dBm.
        public var measuredPower: Int
        /// The controller's advertising power, dBm, when it reported one.
        public var txPower: Int?
        public var intervalMs: Double
        /// Why it does not advertise: the refused command and the controller's status.
        public var error: String?

        public init(beacon: String, state: String, measuredPower: Int, intervalMs: Double) {
            self.beacon = beacon
            self.state = state
            self.measuredPower = measuredPower
            self.intervalMs = intervalMs
        }
    }

    public var version: Int
    public var gateway: GatewayID
    public var state: State
    public var boot: String
    /// Absent in the last-will, which is fixed when the agent connects.
    public var t: Double?
    public var agentVersion: String?
    public var clockSynced: Bool?
    public var outbox: Outbox?
    /// The agent republishes its status at this interval; silence for 3 × heartbeat means offline.
    public var heartbeatSeconds: Double?
    /// Why it went offline: `shutdown` or `connection lost`.
    public var reason: String?
    /// Seconds since the agent started.
    public var uptimeSeconds: Double?
    /// Advertising reports received per second since the previous status.
    public var advertsPerSecond: Double?
    /// Cumulative drops by reason: `outbox-overflow`, `malformed`, `outside-regions`, …
    public var dropped: [String: Int]?
    /// The BLE source: `scanning`, `replay`, `none`, or the adapter's error code.
    public var adapter: String?
    /// The gateway's own beacon, when it has one.
    public var selfBeacon: SelfBeacon?

    public init(
        gateway: GatewayID, state: State, boot: String, t: Double? = nil, agentVersion: String? = nil,
        clockSynced: Bool? = nil, outbox: Outbox? = nil, heartbeatSeconds: Double? = nil, reason: String? = nil
    ) {
        self.version = ContractVersion.current
        self.gateway = gateway
        self.state = state
        self.boot = boot
        self.t = t
        self.agentVersion = agentVersion
        self.clockSynced = clockSynced
        self.outbox = outbox
        self.heartbeatSeconds = heartbeatSeconds
        self.reason = reason
    }

    /// The `reason` of the offline status an agent publishes when it stops cleanly: its boot has ended, and nothing
    /// more of it means the gateway is alive.
    public static let shutdownReason = "shutdown"

    /// The last-will an agent leaves with the broker when it connects.
    public static func lastWill(gateway: GatewayID, boot: String) -> GatewayStatus {
        GatewayStatus(gateway: gateway, state: .offline, boot: boot, reason: "connection lost")
    }
}
