import BeaconModel
import BeaconStore
import ZoneInference

extension HubJournal {
    /// Adds a zone change, its ids as `pseudonyms` store them (moves and events are few: no memoising needed).
    mutating func record(_ move: ZoneMove, pseudonyms: TagPseudonyms) {
        let key = pseudonyms.key(for:)
        moves.append(
            Move(
                key: key(move.tag.rawValue), beaconKey: key(move.beacon), liveTag: move.tag.rawValue,
                beacon: move.beacon, region: move.region, from: move.from?.rawValue, to: move.to?.rawValue,
                t: move.t, confidence: move.confidence))
    }

    /// Adds an event as published.
    mutating func record(_ event: ZoneEvent, pseudonyms: TagPseudonyms) {
        let key = pseudonyms.key(for:)
        events.append(
            Event(
                t: event.t, type: event.type.rawValue, key: event.tag.map { key($0.rawValue) },
                liveTag: event.tag?.rawValue, zone: event.zone?.rawValue, previousZone: event.previousZone?.rawValue,
                confidence: event.confidence, dwell: event.dwellSeconds, region: event.region, code: event.code,
                gateway: event.gateway?.rawValue, reason: event.reason))
    }
}
