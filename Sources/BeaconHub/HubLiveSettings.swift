import Foundation

/// hub.yaml's `live:` section: how `beacon-hub run` ingests, publishes, watches gateways and shares the site with a
/// standby hub (docs/configuration.md, "live").
public struct HubLiveSettings: Decodable, Sendable, Hashable {
    /// How often the engine's clock moves on, acknowledgements go out and changed state is published.
    public var tickSeconds = 0.5
    /// A tag still heard in the same zone has its retained state refreshed at most this often; a change of state or
    /// zone is published at once.
    public var tagStateSeconds = 5.0
    /// A batch from a gateway whose clock is synchronised, dated further than this ahead of the hub's clock, is
    /// rejected as `future-dated` (and a `clock-skew` alert raised).
    public var maxFutureSeconds = 10.0
    /// A gateway with an unsynchronised clock that is off by more than this raises a `clock-skew` alert (its scan
    /// times are re-based on arrival either way).
    public var skewAlertSeconds = 2.0
    /// A gap in a gateway's sequence that no resend fills within this time is given up: the agent no longer has
    /// those batches (its outbox dropped them when full). Counted, logged and alerted; later batches are then
    /// acknowledged.
    public var gapTimeoutSeconds = 60.0
    /// The heartbeat assumed for a gateway until its status says otherwise; a gateway silent for 3 × its heartbeat
    /// is offline.
    public var heartbeatSeconds = 30.0
    /// Keep-alive of the connection holding the standby lock: after a network loss, the broker releases the lock
    /// (and a standby takes over) within about 1.5 × this. 5 s is the least libmosquitto accepts.
    public var lockKeepAliveSeconds = 5
    /// How often the active hub republishes its status with its ingest counts (`hub/status`, field `ingest`).
    public var statusSeconds = 30.0
    /// How long a new claim must stand before the hub starts ingesting (two hubs claiming at once settle first).
    public var claimSettleSeconds = 1.0
    /// How long a starting active period keeps asking the history database for what to carry on from while it is
    /// locked by the hub taken over from or unreachable (a shared PostgreSQL history), before it starts without it.
    public var recoverSeconds = 30.0
    /// How far the engine's clock may be held back behind the hub's while sightings arrive late (`DeliveryLag`):
    /// decisions wait for the evidence instead of judging it stale. Lag beyond this (a hub that cannot keep up) is
    /// judged on the hub's clock again, and shows in `hub/status` as `ingest.lagSeconds`. 0: never held back.
    public var maxLagSeconds = 30.0
    /// How long a starting active period (a start, a restart, a standby taking over) waits at most for every gateway
    /// it expects to deliver a batch of the present before its engine decides anything: until then sightings are
    /// gathered, not judged, so that no tag is placed on the few gateways whose batches happened to come first.
    /// 0: decide at once.
    public var catchUpSeconds = 5.0

    enum CodingKeys: String, CodingKey, CaseIterable {
        case tickSeconds, tagStateSeconds, maxFutureSeconds, skewAlertSeconds, gapTimeoutSeconds, heartbeatSeconds
        case lockKeepAliveSeconds, claimSettleSeconds, statusSeconds, recoverSeconds, maxLagSeconds, catchUpSeconds
    }

    public init() {}

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        tickSeconds = try container.setting(.tickSeconds, tickSeconds, in: 0.05...10)
        tagStateSeconds = try container.setting(.tagStateSeconds, tagStateSeconds, in: 0...3600)
        maxFutureSeconds = try container.setting(.maxFutureSeconds, maxFutureSeconds, in: 0.5...86_400)
        skewAlertSeconds = try container.setting(.skewAlertSeconds, skewAlertSeconds, in: 0...86_400)
        gapTimeoutSeconds = try container.setting(.gapTimeoutSeconds, gapTimeoutSeconds, in: 1...86_400)
        heartbeatSeconds = try container.setting(.heartbeatSeconds, heartbeatSeconds, in: 1...3600)
        lockKeepAliveSeconds = Int(
            try container.setting(.lockKeepAliveSeconds, Double(lockKeepAliveSeconds), in: 5...600))
        claimSettleSeconds = try container.setting(.claimSettleSeconds, claimSettleSeconds, in: 0...60)
        statusSeconds = try container.setting(.statusSeconds, statusSeconds, in: 1...3600)
        recoverSeconds = try container.setting(.recoverSeconds, recoverSeconds, in: 0...3600)
        maxLagSeconds = try container.setting(.maxLagSeconds, maxLagSeconds, in: 0...600)
        catchUpSeconds = try container.setting(.catchUpSeconds, catchUpSeconds, in: 0...120)
    }
}
