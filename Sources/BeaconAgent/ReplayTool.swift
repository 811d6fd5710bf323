import BeaconDecoding
import BeaconModel

/// `beacon-agent replay --dry-run`: a capture through decode and the region filter, printed as sighting lines
/// (docs/mqtt.md) with the capture's own timestamps.
public enum ReplayTool {
    /// Emits one sighting line per sighting; returns the pipeline's counters and the malformed event count.
    public static func dryRun(
        capturePath: String, regions: [BeaconRegion], gateway: GatewayID, speed: Double,
        emit: (String) -> Void
    ) async throws -> (counters: SightingPipeline.Counters, malformedEvents: Int) {
        let capture = try AdvertisementSource.loadCapture(capturePath)
        var pipeline = SightingPipeline(regions: regions)
        var lines: [String] = []
        let malformed = await AdvertisementSource.replay(capture, speed: speed, keepTimes: true) { slice in
            for timed in slice {
                for sighting in pipeline.process(timed.report, at: timed.time) {
                    if let line = try? ContractCoding.encodeLine(SightingLine(sighting, gateway: gateway)) {
                        lines.append(line)
                    }
                }
            }
            for line in lines { emit(line) }
            lines.removeAll()
        }
        return (pipeline.counters, malformed)
    }
}
