import ArgumentParser
import BeaconModel
import Foundation
import Simulator

struct FingerprintCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "fingerprint",
        abstract: "The fingerprint reference: zone events from a naive-Bayes model trained on labelled runs alone.",
        discussion: """
            Trains one fingerprint per zone on the --train runs (each a folder of sightings.jsonl and truth.jsonl) \
            and writes the zone events it decides for --sightings, for `beacon-sim score --events`. The reference \
            that real recordings allow where no oracle exists: it knows the venue's zones and doors, not its \
            geometry. docs/simulator.md.
            """)

    @Option(help: "The venue file (zones, doors, the tags' beacons).")
    var venue: String

    @Option(help: "A labelled run to train on: a folder of sightings.jsonl and truth.jsonl (repeat for more).")
    var train: [String] = []

    @Option(help: "The sighting lines to decide zones for.")
    var sightings: String

    @Option(help: "Where to write the event lines.")
    var events: String

    @Option(help: "Seconds per window of readings.")
    var window: Double = 1

    func validate() throws {
        guard !train.isEmpty else { throw ValidationError("--train: give at least one labelled run") }
        guard (0.2...10).contains(window) else { throw ValidationError("--window \(window): give 0.2 to 10 seconds") }
    }

    func run() throws {
        let loaded = try loadVenueFile(venue)
        var skipped: [String] = []
        var settings = FingerprintReference.Settings()
        settings.window = window
        let reference: FingerprintReference
        let decided: [ZoneEvent]
        do {
            let runs = try train.map { try FingerprintReference.labelledRun(directory: $0, skipped: &skipped) }
            reference = FingerprintReference(venue: loaded, runs: runs, settings: settings)
            decided = reference.events(for: try FingerprintReference.sightingLines(sightings, skipped: &skipped))
        } catch {
            printError("\(error.localizedDescription)")
            throw ExitCode(66)
        }
        do {
            let text = try decided.map { try ContractCoding.encodeLine($0) }.joined(separator: "\n")
            try (text + "\n").write(toFile: events, atomically: true, encoding: .utf8)
        } catch {
            printError(
                "cannot write \(events) (\(error.localizedDescription)): check the folder exists and is writable")
            throw ExitCode(73)
        }
        let summary = reference.summary
        let zones = summary.windowsPerZone.keys.sorted().map { "\($0) \(summary.windowsPerZone[$0]!)" }
        print(
            "beacon-sim: fingerprint of \(train.count) runs (windows per zone: \(zones.joined(separator: ", "));"
                + " pooled: \(summary.pooledZones.isEmpty ? "none" : summary.pooledZones.joined(separator: ", "));"
                + String(format: " %.4f zone changes/s)", summary.movesPerSecond)
                + " → \(decided.count) events in \(events)")
        if !skipped.isEmpty {
            printError("skipped \(skipped.count) unreadable lines, first: \(skipped[0])")
        }
    }
}
