import BeaconDecoding
import BeaconModel

/// `beacon-agent replay --dry-run`: a capture through decode and the region filter, printed as sighting lines
/// (docs/mqtt.md) with the capture's own timestamps.
public enum ReplayTool {
    /// Emits one sighting line per sighting; returns the pipeline's counters and the malformed event count.
    public static func dryRun(
        capturePath: String, regions: [BeaconRegion], gateway: GatewayID, speed: Double,
        emit: (String) -> Void
    ) throws -> (counters: SightingPipeline.Counters, malformedEvents: Int) {
        let capture = try AdvertisementSource.openCapture(capturePath)
        var pipeline = SightingPipeline(regions: regions)
        var malformed = 0
        var sightings: [Sighting] = []
        // A command-line tool with nothing else to run: the pacing sleeps on the calling thread.
        try AdvertisementSource.pace(
            capture, speed: speed, keepTimes: true, slice: AdvertisementSource.defaultSlice, isStopped: { false }
        ) { slice in
            for timed in slice {
                if pipeline.process(event: timed.event, at: timed.time, into: &sightings) == .malformed {
                    malformed += 1
                }
            }
            for sighting in sightings {
                if let line = try? ContractCoding.encodeLine(SightingLine(sighting, gateway: gateway)) { emit(line) }
            }
            sightings.removeAll()
        }
        return (pipeline.counters, malformed)
    }
}
