import BeaconModel

#if canImport(Glibc)
    import Glibc
#endif

/// The baseline every report shows beside the hub — roughly what ESPresense with Home Assistant's mqtt_room does:
/// per gateway an exponential moving average of RSSI (τ 2 s); the tag's zone is the zone of the strongest gateway,
/// switched to only after another zone has led continuously for 5 s; a tag unheard for 30 s is in no zone.
/// A gateway whose average was last fed more than 10 s ago no longer competes (mqtt_room's stale readings).
public struct StrongestGatewayBaseline: Sendable {
    public let tau = 2.0
    public let switchAfter = 5.0
    public let awayAfter = 30.0
    public let staleAfter = 10.0

    let gatewayZones: [GatewayID: ZoneID]
    var averages: [String: [GatewayID: (rssi: Double, t: Double)]] = [:]
    var state: [String: (zone: ZoneID?, leader: ZoneID?, leaderSince: Double, lastHeard: Double)] = [:]
    /// The reported timelines, by beacon id.
    public private(set) var timelines: [String: ZoneTimeline] = [:]

    public init(venue: Venue) {
        gatewayZones = Dictionary(uniqueKeysWithValues: venue.gateways.compactMap { g in g.zone.map { (g.id, $0) } })
    }

    /// Feeds one sighting (in time order).
    public mutating func process(_ sighting: SightingLine) {
        expire(at: sighting.t)
        var readings = averages[sighting.beacon] ?? [:]
        if let previous = readings[sighting.gateway] {
            let alpha = 1 - exp(-(sighting.t - previous.t) / tau)
            readings[sighting.gateway] = (previous.rssi + alpha * (Double(sighting.rssi) - previous.rssi), sighting.t)
        } else {
            readings[sighting.gateway] = (Double(sighting.rssi), sighting.t)
        }
        averages[sighting.beacon] = readings
        var tag = state[sighting.beacon] ?? (nil, nil, sighting.t, sighting.t)
        tag.lastHeard = sighting.t
        let strongest = readings.filter { sighting.t - $0.value.t <= staleAfter && gatewayZones[$0.key] != nil }
            .max { $0.value.rssi < $1.value.rssi }.flatMap { gatewayZones[$0.key] }
        if strongest != tag.leader {
            tag.leader = strongest
            tag.leaderSince = sighting.t
        }
        // The first zone is taken at once; later ones after leading for `switchAfter`.
        if let leader = tag.leader, leader != tag.zone, tag.zone == nil || sighting.t - tag.leaderSince >= switchAfter {
            tag.zone = leader
            timelines[sighting.beacon, default: ZoneTimeline()].set(leader, at: sighting.t)
        }
        state[sighting.beacon] = tag
    }

    /// Tags unheard for `awayAfter` seconds at `t` leave their zone (reported at the moment the timeout expires).
    public mutating func expire(at t: Double) {
        for (beacon, tag) in state where tag.zone != nil && t - tag.lastHeard >= awayAfter {
            timelines[beacon, default: ZoneTimeline()].set(nil, at: tag.lastHeard + awayAfter)
            state[beacon]?.zone = nil
            state[beacon]?.leader = nil
        }
    }
}
