import BeaconConfig
import BeaconModel
import Foundation
import Simulator
import Testing

#if canImport(Glibc)
    import Glibc
#endif

@Suite struct RandomVenueTests {
    static let seeds = Array(UInt64(1)...60)
    typealias Ranges = RandomVenue.Ranges

    func load(_ drawn: RandomVenue) throws -> Venue {
        try VenueLoader.decode(drawn.yaml, file: "random-\(drawn.family.rawValue)-\(drawn.seed).yaml")
    }

    /// The zone ids on either side of a wall, 5 cm off its middle (nil: no zone there).
    func sides(of wall: Venue.Wall, in venue: Venue) -> (ZoneID?, ZoneID?) {
        let middle = Point((wall.from.x + wall.to.x) / 2, (wall.from.y + wall.to.y) / 2)
        let length = max(wall.segment.length, 1e-9)
        let normal = Point(-(wall.to.y - wall.from.y) / length * 0.05, (wall.to.x - wall.from.x) / length * 0.05)
        return (
            venue.zone(at: Point(middle.x + normal.x, middle.y + normal.y))?.id,
            venue.zone(at: Point(middle.x - normal.x, middle.y - normal.y))?.id
        )
    }

    @Test func theSameSeedGivesTheSameFileAndOtherSeedsOthers() {
        for seed in [UInt64(1), 2, 99, .max] {
            #expect(RandomVenue.generate(seed: seed).yaml == RandomVenue.generate(seed: seed).yaml)
        }
        let texts = Self.seeds.prefix(20).map { RandomVenue.generate(seed: $0).yaml }
        #expect(Set(texts).count == texts.count)
        // Naming the family the seed would choose anyway changes nothing.
        let free = RandomVenue.generate(seed: 5)
        #expect(RandomVenue.generate(seed: 5, family: free.family).yaml == free.yaml)
    }

    @Test func sixtySeedsDrawEveryFamily() {
        let families = Set(Self.seeds.map { RandomVenue.generate(seed: $0).family })
        #expect(families == Set(RandomVenue.Family.allCases))
    }

    @Test(arguments: RandomVenue.Family.allCases)
    func aForcedFamilyGivesItsLayout(family: RandomVenue.Family) throws {
        for seed in UInt64(1)...10 {
            let drawn = RandomVenue.generate(seed: seed, family: family)
            #expect(drawn.family == family)
            #expect(drawn.yaml.hasPrefix("# Random venue, family \(family.rawValue), seed \(seed): "))
            let venue = try load(drawn)
            #expect(venue.zones.count == drawn.zones)
            #expect(venue.gateways.count == drawn.gateways)
            #expect(venue.namedTags.count == drawn.tags)
            let ids = venue.zones.map(\.id.rawValue)
            let walled = venue.walls.map { sides(of: $0, in: venue) }.filter { $0.0 != nil && $0.1 != nil }
            switch family {
            case .museum:
                #expect(ids.allSatisfy { $0.hasPrefix("room-") })
                #expect(!walled.isEmpty)
            case .corridor:
                #expect(ids.contains("corridor-1"))
                #expect(ids.contains { $0.hasPrefix("ward-") || $0.hasPrefix("office-") })
            case .gallery:
                // Rooms in a row: each opens into at most the one before and the one after.
                #expect(venue.zones.allSatisfy { venue.neighbours(of: $0.id).subtracting(["outside"]).count <= 2 })
            case .shop:
                // Open plan: walls only on the outline.
                #expect(walled.isEmpty, "seed \(seed): interior walls \(walled)")
            case .supermarket:
                // Inside, only shelving between aisles.
                #expect(!walled.isEmpty)
                #expect(walled.allSatisfy { $0.0!.rawValue.hasPrefix("aisle-") && $0.1!.rawValue.hasPrefix("aisle-") })
            case .mixed:
                #expect(ids.contains("hall-1"))
                #expect(ids.contains { $0.hasPrefix("room-") })
            }
        }
    }

    @Test func drawnParametersStayInTheirRanges() throws {
        var untold = 0
        var carriers: Set<Venue.Tag.Carrier> = []
        for seed in Self.seeds {
            let venue = try load(RandomVenue.generate(seed: seed))
            #expect(Ranges.zoneCount.contains(venue.zones.count), "seed \(seed)")
            for zone in venue.zones {
                let xs = zone.shape.vertices.map(\.x)
                let ys = zone.shape.vertices.map(\.y)
                let width = (xs.max() ?? 0) - (xs.min() ?? 0)
                let height = (ys.max() ?? 0) - (ys.min() ?? 0)
                #expect(Ranges.zoneSide.contains(width) && Ranges.zoneSide.contains(height), "seed \(seed) \(zone.id)")
            }
            let radio = venue.radio
            #expect(Ranges.pathLossExponent.contains(radio.pathLossExponent))
            #expect(Ranges.shadowingSigma.contains(radio.shadowingSigma))
            #expect(Ranges.shadowingCorrelationMetres.contains(radio.shadowingCorrelationMetres))
            #expect(Ranges.bodyLossDB.contains(radio.bodyLossDB))
            #expect(Ranges.packetLoss.contains(radio.packetLoss))
            #expect(!venue.walls.isEmpty)
            #expect(venue.walls.allSatisfy { Ranges.wallLoss.contains($0.attenuation) }, "seed \(seed)")
            for gateway in venue.gateways {
                let gain = try #require(gateway.gainOffset, "seed \(seed) \(gateway.id)")
                #expect(Ranges.gatewayGain.contains(gain))
                #expect((1...3.3).contains(gateway.height))
            }
            for tag in venue.tags {
                #expect(Ranges.interval.contains(tag.interval), "seed \(seed) \(tag.id)")
                if let txPower = tag.txPower {
                    #expect(Ranges.txPower.contains(txPower))
                } else {
                    untold += 1
                }
                carriers.insert(tag.carrier)
            }
            #expect(venue.tags.contains { $0.carrier == .still })
            #expect(venue.tags.contains { $0.carrier == .staff })
            #expect(venue.tags.contains { $0.carrier == .visitor || $0.carrier == .shopper })
        }
        #expect(untold > 0, "some tags advertise no measured power of their own")
        #expect(carriers == Set(Venue.Tag.Carrier.allCases))
    }

    /// Over 300 seeds every radio feature is drawn somewhere, and within its range: two slopes, antenna patterns
    /// (on wall-mounted and outside gateways only), interference, tags that advertise no power; clocks everywhere.
    @Test func radioFeaturesAreDrawnWithinTheirRanges() throws {
        var (twoSlopes, antennas, interfered, silent) = (0, 0, 0, 0)
        for seed in UInt64(1)...300 {
            let venue = try load(RandomVenue.generate(seed: seed))
            let radio = venue.radio
            if let breakpoint = radio.breakpointMetres {
                twoSlopes += 1
                let far = try #require(radio.farPathLossExponent)
                #expect(Ranges.breakpointMetres.contains(breakpoint), "seed \(seed)")
                let steeper = far - radio.pathLossExponent
                #expect(
                    Ranges.farExponentIncrease.lowerBound - 1e-9 <= steeper
                        && steeper <= Ranges.farExponentIncrease.upperBound + 1e-9, "seed \(seed)")
            } else {
                #expect(radio.farPathLossExponent == nil)
            }
            if radio.interferenceBurstsPerHour > 0 {
                interfered += 1
                #expect(Ranges.interferenceBurstsPerHour.contains(radio.interferenceBurstsPerHour))
                #expect(Ranges.interferenceBurstSeconds.contains(radio.interferenceBurstSeconds))
                #expect(Ranges.interferencePacketLoss.contains(radio.interferencePacketLoss))
                #expect(Ranges.interferenceNoiseDB.contains(radio.interferenceNoiseDB))
            }
            #expect(Ranges.clockOffsetSigmaSeconds.contains(radio.clockOffsetSigmaSeconds), "seed \(seed)")
            #expect(Ranges.clockJitterSeconds.contains(radio.clockJitterSeconds), "seed \(seed)")
            for gateway in venue.gateways {
                guard let antenna = gateway.antenna else { continue }
                antennas += 1
                #expect(Ranges.antennaFrontToBackDB.contains(antenna.frontToBackDB))
                // Not on the ceiling: on a wall of its zone, or outside every zone.
                #expect(gateway.zone == nil || Ranges.wallMountHeight.contains(gateway.height), "seed \(seed)")
                // Facing into its room (or at the building): 3 m ahead is within the venue's bounds (give or take the
                // ±20° it may be off).
                let facing = antenna.facing * Double.pi / 180
                let xs = venue.zones.flatMap { $0.shape.vertices.map(\.x) }
                let ys = venue.zones.flatMap { $0.shape.vertices.map(\.y) }
                let ahead = Point(gateway.position.x + 3 * cos(facing), gateway.position.y + 3 * sin(facing))
                let inside =
                    ahead.x >= (xs.min() ?? 0) - 1.5 && ahead.x <= (xs.max() ?? 0) + 1.5
                    && ahead.y >= (ys.min() ?? 0) - 1.5 && ahead.y <= (ys.max() ?? 0) + 1.5
                #expect(inside, "seed \(seed) \(gateway.id) faces \(antenna.facing)°")
            }
            silent += venue.tags.filter { !$0.advertisesPower }.count
        }
        #expect(twoSlopes > 50 && twoSlopes < 250, "\(twoSlopes) venues with two slopes")
        #expect(interfered > 50 && interfered < 250, "\(interfered) venues with interference")
        #expect(antennas > 100, "\(antennas) gateways with an antenna pattern")
        #expect(silent > 50, "\(silent) tag groups advertise no power")
    }

    @Test func everyZoneIsReachableFromOutsideThroughDoorsOnItsEdge() throws {
        for seed in Self.seeds {
            let venue = try load(RandomVenue.generate(seed: seed))
            let graph = ZoneGraph(venue: venue)
            for zone in venue.zones {
                #expect(graph.route(from: nil, to: zone.id) != nil, "seed \(seed): \(zone.id) unreachable")
            }
            #expect(graph.outsidePoint.map { venue.zone(at: $0) == nil } ?? false, "seed \(seed)")
            for door in venue.doors {
                for side in door.between where side != "outside" {
                    let shape = try #require(venue.zones.first { $0.id.rawValue == side }?.shape)
                    #expect(shape.contains(door.at), "seed \(seed): door \(door.between) not on \(side)")
                }
            }
        }
    }

    @Test func gatewaysAreInsideOrOutsideTheirZonesAsDrawn() throws {
        var (outside, ceiling, wall, twice, none) = (0, 0, 0, 0, 0)
        for seed in Self.seeds {
            let venue = try load(RandomVenue.generate(seed: seed))
            for gateway in venue.gateways {
                if let zone = gateway.zone {
                    let shape = try #require(venue.zones.first { $0.id == zone }?.shape)
                    #expect(shape.contains(gateway.position), "seed \(seed): \(gateway.id) not in \(zone)")
                    if Ranges.ceilingHeight.contains(gateway.height) { ceiling += 1 } else { wall += 1 }
                } else {
                    #expect(venue.zone(at: gateway.position) == nil, "seed \(seed): \(gateway.id) inside a zone")
                    outside += 1
                }
            }
            let perZone = Dictionary(grouping: venue.gateways.compactMap(\.zone), by: { $0 }).mapValues(\.count)
            twice += perZone.values.filter { $0 == 2 }.count
            none += venue.zones.filter { perZone[$0.id] == nil }.count
            #expect(venue.gateways.contains { $0.zone == nil }, "seed \(seed): no gateway outside every zone")
        }
        #expect(outside >= Self.seeds.count && ceiling > 0 && wall > 0 && twice > 0 && none > 0)
    }

    @Test(arguments: RandomVenue.Family.allCases)
    func aMinuteOfEachFamilyGivesSightingsAndTruth(family: RandomVenue.Family) throws {
        let venue = try load(RandomVenue.generate(seed: 3, family: family))
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("random-\(UUID())").path
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let summary = try SimulationRun.writeFiles(
            venue: venue, seed: 1, start: 1_700_000_000, duration: 60, directory: directory, gzip: false)
        #expect(summary.sightings > 0)
        #expect(summary.tags == venue.namedTags.count)
        #expect(summary.truthIntervals >= summary.tags)
        let zones = Set(venue.zones.map(\.id))
        let truth = try String(contentsOfFile: directory + "/truth.jsonl", encoding: .utf8).split(separator: "\n")
        for line in truth {
            let interval = try JSONDecoder().decode(TruthInterval.self, from: Data(line.utf8))
            #expect(interval.zone.map(zones.contains) ?? true)
        }
        let gateways = Set(venue.gateways.map(\.id.rawValue))
        let sightings = try String(contentsOfFile: directory + "/sightings.jsonl", encoding: .utf8)
        for line in sightings.split(separator: "\n").prefix(500) {
            let sighting = try ContractCoding.decodeLine(SightingLine.self, from: String(line))
            #expect(gateways.contains(sighting.gateway.rawValue))
        }
    }
}
