import BeaconConfig
import BeaconModel
import ZoneInference

/// Three 20 × 8 m rooms in a row, a — b — c, an entrance into a, one gateway in the middle of each room. a and c
/// share no door: the shortest walk between them is 20 m, door to door through b.
enum TestVenue {
    static let beacon = "ibeacon:e2c56db5-dffb-48d2-b060-d0f5a71096e0:1:1"
    static let tag: TagID = "tag-1"

    static func venue() throws -> Venue {
        try VenueLoader.decode(
            """
            site: row
            zones:
              - { id: a, rect: { x: 0, y: 0, width: 20, height: 8 } }
              - { id: b, rect: { x: 20, y: 0, width: 20, height: 8 } }
              - { id: c, rect: { x: 40, y: 0, width: 20, height: 8 } }
            doors:
              - { between: [outside, a], at: [10, 0] }
              - { between: [a, b], at: [20, 4] }
              - { between: [b, c], at: [40, 4] }
            gateways:
              - { id: gw-a, zone: a, position: [10, 4] }
              - { id: gw-b, zone: b, position: [30, 4] }
              - { id: gw-c, zone: c, position: [50, 4] }
            """, file: "row.yaml")
    }

    /// The zone HMM (`method: hmm`), for the tests of its own timings and priors.
    static var hmm: InferenceSettings {
        var settings = InferenceSettings()
        settings.method = .hmm
        return settings
    }

    static func engine(
        settings: InferenceSettings = InferenceSettings(), regions: [TagRegion] = [],
        named: [(beacon: String, tag: TagID)] = [(beacon, tag)], calibration: Calibration? = nil
    ) throws -> ZoneEngine {
        ZoneEngine(
            venue: try venue(), settings: settings, directory: TagDirectory(named: named, regions: regions),
            calibration: calibration)
    }

    /// Levels a tag in `room` shows: its room's gateway loud, the next room's faint, the far one unheard. A small
    /// fixed wobble keeps the filters honest without randomness.
    static func levels(in room: String, second: Int) -> [(GatewayID, Int)] {
        let wobble = [0, 2, -1, 3, -2, 1, -3][second % 7]
        switch room {
        case "a": return [("gw-a", -70 + wobble), ("gw-b", -88 - wobble)]
        case "b": return [("gw-a", -88 + wobble), ("gw-b", -70 - wobble), ("gw-c", -88 + wobble)]
        case "c": return [("gw-b", -88 - wobble), ("gw-c", -70 + wobble)]
        default: return []
        }
    }
}

/// Drives an engine the way `beacon-hub replay` does: the clock moves to each sighting's time before it is applied.
struct Driver {
    var engine: ZoneEngine
    var events: [ZoneEvent] = []

    /// One advertisement a second in `room` from `from` (inclusive) to `to` (exclusive).
    mutating func stay(
        in room: String, from: Int, to: Int, beacon: String = TestVenue.beacon,
        levels: (String, Int) -> [(GatewayID, Int)] = TestVenue.levels
    ) {
        for second in from..<to {
            let t = Double(second)
            engine.advance(to: t, events: &events)
            for (gateway, rssi) in levels(room, second) {
                engine.ingest(SightingLine(t: t, gateway: gateway, beacon: beacon, rssi: rssi, txPower: -59))
            }
        }
    }

    mutating func advance(to t: Double) { engine.advance(to: t, events: &events) }

    func events(_ type: ZoneEventType) -> [ZoneEvent] { events.filter { $0.type == type } }
}
