import BeaconModel
import BeaconStore
import ZoneInference

extension HubJournal {
    /// Adds a zone change; `key` maps a tag or beacon id to the id stored (itself, or its pseudonym).
    mutating func record(_ move: ZoneMove, key: (String) -> String) {
        moves.append(
            Move(
                key: key(move.tag.rawValue), beaconKey: key(move.beacon), liveTag: move.tag.rawValue,
                beacon: move.beacon, region: move.region, from: move.from?.rawValue, to: move.to?.rawValue,
                t: move.t, confidence: move.confidence))
    }

    /// Adds an event as published.
    mutating func record(_ event: ZoneEvent, key: (String) -> String) {
        events.append(
            Event(
                t: event.t, type: event.type.rawValue, key: event.tag.map { key($0.rawValue) },
                liveTag: event.tag?.rawValue, zone: event.zone?.rawValue, previousZone: event.previousZone?.rawValue,
                confidence: event.confidence, dwell: event.dwellSeconds, region: event.region, code: event.code,
                gateway: event.gateway?.rawValue, reason: event.reason))
    }
}
