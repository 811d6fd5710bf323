import BeaconConfig
import BeaconModel
import Foundation
import Simulator
import ZoneInference

/// A strolling calibration walk as `beacon-sim calibration-walk --stroll` writes it, read back: its plan and sightings.
struct SimulatedWalk {
    struct Plan: Decodable {
        var beacon: String
        var stops: [Calibrator.Stop]
        var route: [Calibrator.RoutePoint]
    }

    var plan: Plan
    var sightings: [SightingLine]

    init(venue: Venue, seed: UInt64, dwell: Double, skipping: Set<ZoneID> = []) throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("walk-\(UUID())").path
        defer { try? FileManager.default.removeItem(atPath: folder) }
        _ = try CalibrationWalk.writeFiles(
            venue: venue, seed: seed, start: 1_763_800_000, dwell: dwell, strolling: true, skipping: skipping,
            directory: folder)
        plan = try ConfigLoader.load(Plan.self, from: folder + "/plan.yaml")
        let text = try String(contentsOfFile: folder + "/sightings.jsonl", encoding: .utf8)
        sightings = try text.split(separator: "\n").map {
            try ContractCoding.decodeLine(SightingLine.self, from: String($0))
        }
    }
}
