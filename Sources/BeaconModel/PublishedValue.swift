/// A message the hub publishes, as the value it encoded: what the hub's own consumers (the dashboard's live board,
/// webhooks, logs) read instead of decoding the payload again on the hub's hot path.
public enum PublishedValue: Sendable, Hashable {
    case tagState(TagState)
    case occupancy(ZoneOccupancy)
    case event(ZoneEvent)
    case hubStatus(HubStatus)

    /// The value of `value` when it is one of the published contract types, else nil.
    public init?(_ value: some Encodable) {
        switch value {
        case let state as TagState: self = .tagState(state)
        case let occupancy as ZoneOccupancy: self = .occupancy(occupancy)
        case let event as ZoneEvent: self = .event(event)
        case let status as HubStatus: self = .hubStatus(status)
        default: return nil
        }
    }
}
