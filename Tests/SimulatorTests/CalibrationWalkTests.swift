import BeaconConfig
import BeaconModel
import Foundation
import Testing

@testable import Simulator

@Suite struct CalibrationWalkTests {
    /// What a walk's plan.yaml holds.
    struct Plan: Decodable {
        struct Stop: Decodable { var zone: String, from: Double, to: Double }
        struct RoutePoint: Decodable { var t: Double, x: Double, y: Double }
        var beacon: String
        var stops: [Stop]
        var route: [RoutePoint]
    }

    func walk(_ venue: Venue, seed: UInt64 = 1, strolling: Bool = true) throws -> (text: Data, lines: [SightingLine]) {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("walk-\(UUID())").path
        defer { try? FileManager.default.removeItem(atPath: folder) }
        _ = try CalibrationWalk.writeFiles(
            venue: venue, seed: seed, start: 1_763_800_000, dwell: 30, strolling: strolling, directory: folder)
        let text = try Data(contentsOf: URL(fileURLWithPath: folder + "/sightings.jsonl"))
        let lines = String(decoding: text, as: UTF8.self).split(separator: "\n").map {
            try! ContractCoding.decodeLine(SightingLine.self, from: String($0))
        }
        return (text, lines)
    }

    /// The museum's standing walk, seed 1, hashed (FNV-1a over the file's bytes): a venue without interference or
    /// clocks must walk as it always did. (The strolling walk's hash was pinned here, unchanged since before bursts
    /// and clocks, until the strolling walker turned to face the way they walk; this value is the standing walk's of
    /// that version, e28f5be's `beacon-sim calibration-walk config/venues/museum.yaml --seed 1 --start 1763800000`.)
    @Test func aVenueWithoutBurstsOrClocksWalksAsItAlwaysDid() throws {
        let museum = try VenueLoader.load(
            from: VenueLoaderPaths.root.appendingPathComponent("config/venues/museum.yaml").path)
        let (text, lines) = try walk(museum, strolling: false)
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in text { hash = (hash ^ UInt64(byte)) &* 0x100_0000_01b3 }
        #expect(lines.count == 2_037)
        #expect(hash == 0xdfd6_29f7_11da_fcb3)
    }

    /// A strolling walker faces the way they walk round the stroll's ellipse (anticlockwise): never towards or away
    /// from the zone's middle, where its gateway often hangs, so their body does not stand between the two.
    @Test func aStrollerFacesAlongTheEllipse() throws {
        let zone = Polygon([Point(0, 0), Point(8, 0), Point(8, 6), Point(0, 6)])
        for step in 0..<40 {
            let turn = Double(step) / 40
            let point = CalibrationWalk.strollPoint(in: zone, turn: turn)
            let heading = CalibrationWalk.strollHeading(in: zone, turn: turn)
            let out = (x: point.x - zone.centroid.x, y: point.y - zone.centroid.y)
            // Across the way out from the middle (an ellipse's tangent, with axes of 2 and 1.5 m: not exactly).
            let along = (x: cos(heading), y: sin(heading))
            let radial = (out.x * along.x + out.y * along.y) / (out.x * out.x + out.y * out.y).squareRoot()
            #expect(abs(radial) < 0.35, "turn \(turn): \(radial)")
            // And the way the walk goes: the next point lies ahead.
            let next = CalibrationWalk.strollPoint(in: zone, turn: turn + 0.01)
            #expect((next.x - point.x) * along.x + (next.y - point.y) * along.y > 0, "turn \(turn)")
        }
    }

    /// The plan's route (docs/inference.md, "Calibration") is where the walker was: every 5 s of each stop and at its
    /// end, inside the stop's zone, on the stroll's ellipse; a standing walk's route stays on one spot per stop.
    @Test func thePlansRouteIsWhereTheWalkerWas() throws {
        let museum = try VenueLoader.load(
            from: VenueLoaderPaths.root.appendingPathComponent("config/venues/museum.yaml").path)
        for strolling in [true, false] {
            let folder = FileManager.default.temporaryDirectory.appendingPathComponent("walk-\(UUID())").path
            defer { try? FileManager.default.removeItem(atPath: folder) }
            _ = try CalibrationWalk.writeFiles(
                venue: museum, seed: 1, start: 1_763_800_000, dwell: 30, strolling: strolling, directory: folder)
            let plan = try ConfigLoader.load(Plan.self, from: folder + "/plan.yaml")
            #expect(plan.stops.count == museum.zones.count)
            // Per stop: 0, 5, …, 25 s and its end.
            #expect(plan.route.count == plan.stops.count * 7)
            for stop in plan.stops {
                let points = plan.route.filter { $0.t >= stop.from && $0.t <= stop.to }
                let zone = try #require(museum.zones.first { $0.id.rawValue == stop.zone })
                #expect(points.count == 7 && points.first?.t == stop.from && points.last?.t == stop.to)
                #expect(points.allSatisfy { zone.shape.contains(Point($0.x, $0.y)) }, "\(stop.zone)")
                let spots = Set(points.map { "\($0.x) \($0.y)" })
                #expect(strolling ? spots.count >= 5 : spots.count == 1, "\(stop.zone): \(spots)")
            }
        }
    }

    /// The walk is in the run's radio: the gateways' clocks stamp it with the run's offsets, and bursts take packets.
    @Test func theWalkHasTheRunsClocksAndBursts() throws {
        let plain = try VenueSimulationTests.lab(radio: ["packetLoss: 0"])
        let noisy = try VenueSimulationTests.lab(radio: [
            "packetLoss: 0", "clockOffsetSigmaSeconds: 0.1", "interferenceBurstsPerHour: 120",
            "interferenceBurstSeconds: 20", "interferencePacketLoss: 1",
        ])
        let reference = try walk(plain).lines
        let stamped = try walk(noisy).lines
        // Every advertisement of the plain walk reaches both gateways; bursts that drop every packet take some.
        #expect(stamped.count < reference.count)
        let offsets = VenueSimulation(venue: noisy, seed: 1, start: 0).radio.clockOffsets
        #expect(offsets.values.allSatisfy { $0 != 0 })
        // Each stamped sighting is a plain one moved by its gateway's offset: the walk's times are half-seconds, and
        // the file keeps milliseconds.
        let plainTimes = Set(reference.map { "\($0.gateway.rawValue) \(Int(($0.t * 2).rounded()))" })
        for sighting in stamped {
            let t = sighting.t - (offsets[sighting.gateway] ?? .nan)
            #expect(abs(t * 2 - (t * 2).rounded()) < 0.002, "\(sighting)")
            #expect(plainTimes.contains("\(sighting.gateway.rawValue) \(Int((t * 2).rounded()))"), "\(sighting)")
        }
    }

    /// A walk that skips zones never enters them: no stop and no route point in them, and the zones it does walk
    /// each get their stop. `everyOther(3)` picks the third, sixth, … zones of the venue's order.
    @Test func aWalkThatSkipsZonesNeverEntersThem() throws {
        let museum = try VenueLoader.load(
            from: VenueLoaderPaths.root.appendingPathComponent("config/venues/museum.yaml").path)
        let skipping = CalibrationWalk.everyOther(3, of: museum)
        #expect(skipping.map(\.rawValue).sorted() == ["greece", "medieval", "renaissance"])
        #expect(CalibrationWalk.everyOther(1, of: museum).isEmpty)
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("walk-\(UUID())").path
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let summary = try CalibrationWalk.writeFiles(
            venue: museum, seed: 1, start: 1_763_800_000, dwell: 30, strolling: true, skipping: skipping,
            directory: folder)
        let plan = try ConfigLoader.load(Plan.self, from: folder + "/plan.yaml")
        #expect(summary.stops == museum.zones.count - skipping.count)
        #expect(plan.stops.map(\.zone) == museum.zones.filter { !skipping.contains($0.id) }.map(\.id.rawValue))
        let skipped = museum.zones.filter { skipping.contains($0.id) }
        #expect(!plan.route.isEmpty)
        #expect(!plan.route.contains { point in skipped.contains { $0.shape.contains(Point(point.x, point.y)) } })
    }
}
