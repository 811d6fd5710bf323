import BeaconConfig
import BeaconModel
import Simulator
import Testing

@Suite struct VenueSimulationTests {
    static func museum() throws -> Venue {
        try VenueLoader.load(from: VenueLoaderPaths.root.appendingPathComponent("config/venues/museum.yaml").path)
    }

    func simulate(_ venue: Venue, seconds: Double, seed: UInt64 = 7) -> (
        sightings: [SightingLine], truth: [TruthInterval]
    ) {
        var simulation = VenueSimulation(venue: venue, seed: seed, start: 1_000)
        var sightings: [SightingLine] = []
        var truth: [TruthInterval] = []
        simulation.run(until: 1_000 + seconds, sighting: { sightings.append($0) }, truth: { truth.append($0) })
        return (sightings, truth)
    }

    @Test func truthIntervalsTileEveryTagsTime() throws {
        let venue = try Self.museum()
        let (_, truth) = simulate(venue, seconds: 3_600)
        let byTag = Dictionary(grouping: truth, by: \.tag)
        #expect(byTag.count == 24)
        for (tag, intervals) in byTag {
            let sorted = intervals.sorted { $0.enter < $1.enter }
            #expect(sorted.first?.enter == 1_000, "\(tag)")
            #expect(sorted.last?.exit == 4_600, "\(tag)")
            for (a, b) in zip(sorted, sorted.dropFirst()) {
                #expect(a.exit == b.enter, "\(tag): gap or overlap at \(a.exit)")
                #expect(a.zone != b.zone, "\(tag): a change to the same zone at \(a.exit)")
            }
            #expect(sorted.allSatisfy { $0.exit >= $0.enter })
        }
    }

    @Test func walkersMoveOnlyThroughDoors() throws {
        let venue = try Self.museum()
        let (_, truth) = simulate(venue, seconds: 7_200)
        let byTag = Dictionary(grouping: truth, by: \.tag)
        var moves = 0
        for intervals in byTag.values {
            let sorted = intervals.sorted { $0.enter < $1.enter }
            for (a, b) in zip(sorted, sorted.dropFirst()) {
                moves += 1
                switch (a.zone, b.zone) {
                case (let from?, let to?): #expect(venue.neighbours(of: from).contains(to))
                case (let from?, nil): #expect(venue.neighbours(of: from).contains("outside"))
                case (nil, let to?): #expect(venue.neighbours(of: to).contains("outside"))
                case (nil, nil): Issue.record("outside to outside")
                }
            }
        }
        #expect(moves > 100)
        // Still tags never move.
        #expect(byTag["audio-guide-spare"]?.count == 1)
        #expect(byTag["lost-badge"]?.first?.zone == "egypt")
    }

    @Test func sightingsFollowTheContractAndTheClock() throws {
        let venue = try Self.museum()
        let (sightings, _) = simulate(venue, seconds: 120)
        #expect(!sightings.isEmpty)
        #expect(zip(sightings, sightings.dropFirst()).allSatisfy { $0.t <= $1.t })
        let gateways = Set(venue.gateways.map(\.id))
        #expect(sightings.allSatisfy { gateways.contains($0.gateway) && $0.rssi >= -95 && $0.rssi <= 0 })
        #expect(Set(sightings.map(\.beacon)).contains("ibeacon:e2c56db5-dffb-48d2-b060-d0f5a71096e0:1:20"))
        #expect(sightings.contains { $0.kind == .eddystoneUID })
        // 24 tags at ~1 advertisement/s (guides 2/s), 9 gateways, 15 % loss, walls: each advert heard by a few.
        let perAdvert = Double(sightings.count) / (120 * 26)
        #expect((1...9).contains(perAdvert), "\(perAdvert) gateways per advertisement")
    }

    @Test func theSameSeedReplaysTheSameVenue() throws {
        let venue = try Self.museum()
        let one = simulate(venue, seconds: 300, seed: 11)
        let two = simulate(venue, seconds: 300, seed: 11)
        let three = simulate(venue, seconds: 300, seed: 12)
        #expect(one.sightings == two.sightings)
        #expect(one.truth == two.truth)
        #expect(one.sightings != three.sightings)
    }
}
