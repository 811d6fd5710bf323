import BeaconConfig
import BeaconHub
import BeaconModel
import Foundation
import Simulator
import Testing
import ZoneInference

/// `beacon-hub calibrate` on a simulated walk: the calibration file is written and readable, and the report ends with
/// the expected accuracy per zone, before → after, one row a zone and one for the whole walk.
@Suite struct CalibrateToolTests {
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("calibrate-\(UUID())")

    func file(_ name: String) -> String { directory.appendingPathComponent(name).path }

    @Test func theReportGivesTheExpectedAccuracyPerZone() throws {
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        try HubPersistenceTests.rowVenue.write(toFile: file("venue.yaml"), atomically: true, encoding: .utf8)
        try """
        site: row
        venue: venue.yaml
        inference: { method: position }
        """.write(toFile: file("hub.yaml"), atomically: true, encoding: .utf8)
        let configuration = try HubConfiguration.load(from: file("hub.yaml"))
        _ = try CalibrationWalk.writeFiles(
            venue: try configuration.venueFile(), seed: 3, start: 1_763_800_000, dwell: 30, strolling: true,
            directory: file("walk"))
        let result = try CalibrateTool.run(
            configuration: configuration, inputPath: file("walk/sightings.jsonl"), planPath: file("walk/plan.yaml"),
            outputPath: file("calibration.yaml"))
        _ = try ConfigLoader.load(Calibration.self, from: file("calibration.yaml"))
        let check = try #require(result.check)
        #expect(check.zones.map(\.zone.rawValue) == ["a", "b", "c", "d"])
        let lines = result.report.split(separator: "\n").map(String.init)
        let header = try #require(lines.firstIndex { $0.contains("expected accuracy per zone") })
        // "    a        23 s    87 % →  91 %"
        let rows = lines[(header + 1)...(header + 5)].map { $0.split(separator: " ").map(String.init) }
        #expect(rows.map { $0[0] } == ["a", "b", "c", "d", "all"])
        for (row, zone) in zip(rows, check.zones) {
            #expect(row[1] == String(zone.seconds) && row[3] == String(format: "%.0f", zone.before * 100))
            #expect(row[6] == String(format: "%.0f", zone.after * 100))
        }
        #expect(rows[4][1] == String(check.seconds))
    }

    /// hub.yaml's calibration placed a gateway elsewhere (from the dashboard): the new calibration keeps it there, as a
    /// walk on the calibration page does, and its offsets and check are made with the gateway where it stands.
    @Test func aCalibrationKeepsTheGatewaysWhereTheyWerePlaced() throws {
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        try HubPersistenceTests.rowVenue.write(toFile: file("venue.yaml"), atomically: true, encoding: .utf8)
        let venue = try VenueLoader.load(from: file("venue.yaml"))
        _ = try CalibrationWalk.writeFiles(
            venue: venue, seed: 3, start: 1_763_800_000, dwell: 30, strolling: true, directory: file("walk"))
        try """
        site: row
        created: 0
        referencePower: -59
        gatewayOffsets: {}
        zones: {}
        placements: { gw-d: { x: 75, y: 6, zone: d } }
        """.write(toFile: file("placed.yaml"), atomically: true, encoding: .utf8)
        func calibrate(_ hub: String) throws -> CalibrateTool.Result {
            try hub.write(toFile: file("hub.yaml"), atomically: true, encoding: .utf8)
            return try CalibrateTool.run(
                configuration: try HubConfiguration.load(from: file("hub.yaml")),
                inputPath: file("walk/sightings.jsonl"), planPath: file("walk/plan.yaml"),
                outputPath: file("calibration.yaml"))
        }
        let plain = try calibrate("site: row\nvenue: venue.yaml\ninference: { method: position }\n")
        #expect(plain.calibration.placements == nil)
        let placed = try calibrate(
            "site: row\nvenue: venue.yaml\ncalibration: placed.yaml\ninference: { method: position }\n")
        let placement = Calibration.Placement(x: 75, y: 6, zone: ZoneID(unchecked: "d"))
        #expect(placed.calibration.placements == ["gw-d": placement])
        let written = try ConfigLoader.load(Calibration.self, from: file("calibration.yaml"))
        #expect(written.placements?["gw-d"] == placement)
        // gw-d's offset is measured against its placed geometry (5.4 m from the walk's radio): not the plain one.
        #expect(placed.calibration.gatewayOffsets["gw-d"] != plain.calibration.gatewayOffsets["gw-d"])
        #expect(placed.calibration.gatewayOffsets["gw-a"] == plain.calibration.gatewayOffsets["gw-a"])
    }
}
