import BeaconConfig
import BeaconModel
import Foundation
import ZoneInference

/// `beacon-hub calibrate`: reads a calibration walk and its plan, writes the calibration file hub.yaml points at.
public enum CalibrateTool {
    /// The plan file: which beacon was carried and where it stood when.
    public struct Plan: Decodable, Sendable {
        public var beacon: String
        public var stops: [Calibrator.Stop]

        enum CodingKeys: String, CodingKey, CaseIterable { case beacon, stops }
    }

    public struct Result: Sendable {
        public var calibration: Calibration
        public var report: String
    }

    public static func run(
        configuration: HubConfiguration, inputPath: String, planPath: String, outputPath: String
    ) throws -> Result {
        let plan = try ConfigLoader.load(Plan.self, from: planPath)
        let venue = try configuration.venueFile()
        // Offsets are measured against the uncalibrated geometry.
        let model = VenueModel(venue: venue, settings: configuration.inference)
        var calibrator = Calibrator(model: model, beacon: plan.beacon, stops: plan.stops)
        let input = try SightingInput.read(inputPath) { calibrator.add($0) }
        let (calibration, warnings) = calibrator.result(
            site: configuration.site, created: Date().timeIntervalSince1970.rounded())
        let header = """
            # Calibration of site \(configuration.site) by beacon-hub calibrate (docs/inference.md, "Calibration").
            # Point hub.yaml's `calibration:` at this file. Input: \(inputPath), plan: \(planPath).

            """
        try (header + ConfigLoader.yaml(calibration)).write(toFile: outputPath, atomically: true, encoding: .utf8)
        var lines = [
            "beacon-hub calibrate: \(calibrator.used) sightings of the tag in \(plan.stops.count) stops "
                + "(\(input.sightings) read, \(input.skipped.count) lines skipped) → \(outputPath)",
            "  zones profiled: \(calibration.zones.count) of \(venue.zones.count); gateway offsets (dB): "
                + calibration.gatewayOffsets.sorted { $0.key < $1.key }.map {
                    "\($0.key) \(String(format: "%+.1f", $0.value))"
                }.joined(separator: ", "),
        ]
        lines += warnings.map { "  warning: \($0)" }
        return Result(calibration: calibration, report: lines.joined(separator: "\n"))
    }
}
