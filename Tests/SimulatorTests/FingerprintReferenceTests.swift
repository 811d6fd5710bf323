import BeaconConfig
import BeaconModel
import Foundation
import Simulator
import Testing

@Suite struct FingerprintReferenceTests {
    /// Three rooms in a row (west, middle, east), doors west–middle and middle–east, a gateway in west and east only.
    static let venueYAML = """
        site: fingerprint-test
        zones:
          - { id: west, polygon: [[0, 0], [5, 0], [5, 5], [0, 5]] }
          - { id: middle, polygon: [[5, 0], [10, 0], [10, 5], [5, 5]] }
          - { id: east, polygon: [[10, 0], [15, 0], [15, 5], [10, 5]] }
        doors:
          - { between: [west, middle], at: [5, 2.5], width: 1 }
          - { between: [middle, east], at: [10, 2.5], width: 1 }
        gateways:
          - { id: gw-west, zone: west, position: [1, 2.5] }
          - { id: gw-east, zone: east, position: [14, 2.5] }
        tags:
          - { id: tag-1, beacon: "ibeacon:00000000-0000-4000-8000-000000000001:1:1", carrier: still, start: west }
        """
    static let beacon = "ibeacon:00000000-0000-4000-8000-000000000001:1:1"

    static func venue() throws -> Venue {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("fingerprint-\(UUID()).yaml").path
        try venueYAML.write(toFile: path, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(atPath: path) }
        return try VenueLoader.load(from: path)
    }

    /// Per zone what each gateway reads, every level about −66 dBm: in west gw-west alone hears the tag, in east
    /// gw-east alone, in middle both, each every other reading. Only whether a gateway hears tells the zones apart.
    /// `jitter` varies the level per reading, the same for each run of the same seconds.
    static func run(_ stays: [(zone: String, seconds: Int)], start: Double) -> FingerprintReference.LabelledRun {
        var sightings: [SightingLine] = []
        var truth: [TruthInterval] = []
        var t = start
        for (number, stay) in stays.enumerated() {
            truth.append(
                TruthInterval(
                    tag: "tag-1", zone: ZoneID(unchecked: stay.zone), enter: t, exit: t + Double(stay.seconds)))
            for second in 0..<stay.seconds {
                for tick in 0..<4 {
                    let time = t + Double(second) + Double(tick) * 0.25
                    let jitter = (second * 7 + tick * 3 + number) % 5 - 2
                    let levels: [(String, Int)] =
                        switch stay.zone {
                        case "west": [("gw-west", -66 + jitter)]
                        case "east": [("gw-east", -66 + jitter)]
                        default: tick % 2 == 0 ? [("gw-west", -66 + jitter), ("gw-east", -66 + jitter)] : []
                        }
                    for (gateway, rssi) in levels {
                        sightings.append(
                            SightingLine(t: time, gateway: GatewayID(unchecked: gateway), beacon: beacon, rssi: rssi))
                    }
                }
            }
            t += Double(stay.seconds)
        }
        return FingerprintReference.LabelledRun(sightings: sightings, truth: truth)
    }

    static func accuracy(_ events: [ZoneEvent], truth: [TruthInterval]) -> Double {
        var timelines: [TagID: ZoneTimeline] = [:]
        for event in events { ZoneTimeline.apply(event, to: &timelines) }
        return Scorer.score(truth: truth, reported: timelines, nearBoundary: nil).overall.accuracy
    }

    /// Trained on one walk through every room, the reference places another walk nearly right, following the doors:
    /// from west to east it passes through middle.
    @Test func placesAWalkItWasTrainedForAndMovesThroughDoors() throws {
        let venue = try Self.venue()
        let training = Self.run([("west", 40), ("middle", 40), ("east", 40), ("middle", 30)], start: 1_000)
        let reference = FingerprintReference(venue: venue, runs: [training])
        #expect(reference.summary.pooledZones.isEmpty)
        // Each window is labelled with the zone at its end: the first ends a second after the first reading.
        #expect(reference.summary.windowsPerZone == ["west": 39, "middle": 70, "east": 40])
        let test = Self.run([("east", 30), ("middle", 30), ("west", 30)], start: 5_000)
        let events = reference.events(for: test.sightings)
        #expect(Self.accuracy(events, truth: test.truth) > 0.9)
        let entered = events.filter { $0.type == .enter }.compactMap(\.zone?.rawValue)
        #expect(entered == ["east", "middle", "west"])
        #expect(events.allSatisfy { $0.tag == "tag-1" })
    }

    /// A zone the training never saw takes the pooled model: the reference cannot tell it from the others by its
    /// levels, so a walk through it is placed in the trained zones, and the summary says which zone was pooled.
    @Test func anUnwalkedZoneTakesThePooledModel() throws {
        let venue = try Self.venue()
        let training = Self.run([("west", 40), ("east", 40), ("west", 20)], start: 1_000)
        let reference = FingerprintReference(venue: venue, runs: [training])
        #expect(reference.summary.pooledZones == ["middle"])
        #expect(reference.summary.windowsPerZone["middle"] == 0)
        let test = Self.run([("west", 30), ("east", 30)], start: 5_000)
        #expect(Self.accuracy(reference.events(for: test.sightings), truth: test.truth) > 0.85)
    }

    /// Sightings of beacons the venue does not name are left out; no sightings, no events.
    @Test func unnamedBeaconsAreLeftOut() throws {
        let venue = try Self.venue()
        let reference = FingerprintReference(venue: venue, runs: [Self.run([("west", 20), ("east", 20)], start: 0)])
        let stranger = SightingLine(
            t: 10, gateway: "gw-west", beacon: "ibeacon:ffffffff-0000-4000-8000-000000000009:1:1", rssi: -50)
        #expect(reference.events(for: [stranger]).isEmpty)
        #expect(reference.events(for: []).isEmpty)
    }
}
