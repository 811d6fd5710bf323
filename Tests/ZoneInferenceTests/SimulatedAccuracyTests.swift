import BeaconConfig
import BeaconModel
import Foundation
import Simulator
import Testing
import ZoneInference

/// The engine on thirty simulated minutes of the shipped museum, scored against the ground truth beside the
/// strongest-gateway baseline on the same sightings: the claim of docs/accuracy.md, in small.
@Suite struct SimulatedAccuracyTests {
    static func repositoryFile(_ path: String) -> String {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent(path).path
    }

    @Test func beatsTheStrongestGatewayBaselineOnTheMuseum() throws {
        let venue = try VenueLoader.load(from: Self.repositoryFile("config/venues/museum.yaml"))
        var settings = InferenceSettings()
        settings.boundaryLossDB = 8.5  // as config/hub.yaml
        let named = venue.namedTags.map { (beacon: $0.beacon, tag: $0.id) }
        var hub = ZoneEngine(venue: venue, settings: settings, directory: TagDirectory(named: named, regions: []))
        var baseline = ZoneEngine(
            venue: venue, settings: .strongestBaseline, directory: TagDirectory(named: named, regions: []))
        var hubEvents: [ZoneEvent] = []
        var baselineEvents: [ZoneEvent] = []
        var truth: [TruthInterval] = []
        var simulation = VenueSimulation(venue: venue, seed: 1, start: 1_763_812_800)
        simulation.run(
            until: 1_763_812_800 + 1800,
            sighting: { sighting in
                hub.ingest(sighting, events: &hubEvents)
                baseline.ingest(sighting, events: &baselineEvents)
            },
            truth: { truth.append($0) })
        let ours = Scorer.score(truth: truth, events: hubEvents).overall
        let theirs = Scorer.score(truth: truth, events: baselineEvents).overall
        #expect(ours.accuracy > theirs.accuracy + 0.05, "hub \(ours) baseline \(theirs)")
        #expect(ours.falseTransitionsPerTagHour < theirs.falseTransitionsPerTagHour)
        #expect((ours.latencyMedian ?? 99) <= (theirs.latencyMedian ?? 0))
        #expect(ours.missedTransitions < theirs.missedTransitions)
    }
}
