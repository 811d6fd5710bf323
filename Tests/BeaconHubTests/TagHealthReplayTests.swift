import BeaconConfig
import BeaconModel
import BrokerTestSupport
import Foundation
import Simulator
import Testing

@testable import BeaconHub

/// Issue 23: `beacon-hub replay` raises the live hub's tag alerts on the recording's clock, from the TLM frames the
/// recording keeps (`extras.tlm` of its sighting lines).
@Suite struct TagHealthReplayTests {
    /// Four simulated hours of a two-gateway room: the badge's cell drains 100 mV an hour from 2700 mV (low after an
    /// hour), goes flat at 2500 mV (silent after two), and is replaced at 3.5 h; the iBeacon tag beside it sends no
    /// telemetry and raises nothing.
    @Test func fourHoursOfADrainingBadgeGiveEachAlertOnce() async throws {
        try await onOwnThread {
            let directory = FileManager.default.temporaryDirectory.appendingPathComponent("tlm-replay-\(UUID())").path
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(atPath: directory) }
            try """
            site: lab
            zones:
              - { id: room, rect: { x: 0, y: 0, width: 10, height: 10 } }
            gateways:
              - { id: gw-1, zone: room, position: [2, 5], height: 2 }
              - { id: gw-2, zone: room, position: [8, 5], height: 2 }
            tags:
              - { id: badge, beacon: "eddystone-uid:edd1ebeac04e5defa017:0123456789ab", carrier: still, interval: 2,
                  battery: { milliVolts: 2700, drainPerHour: 100, deadBelowMilliVolts: 2500,
                             replacedAfterSeconds: 12600 } }
              - { id: keys, beacon: "ibeacon:e2c56db5-dffb-48d2-b060-d0f5a71096e0:1:1", carrier: still, interval: 2 }
            """.write(toFile: "\(directory)/venue.yaml", atomically: true, encoding: .utf8)
            try """
            hub: lab
            site: lab
            venue: venue.yaml
            tagHealth: { batteryLowMilliVolts: 2600, missingAfterSeconds: 3600 }
            """.write(toFile: "\(directory)/hub.yaml", atomically: true, encoding: .utf8)
            let venue = try VenueLoader.load(from: "\(directory)/venue.yaml")
            let start = 1_764_000_000.0
            _ = try SimulationRun.writeFiles(
                venue: venue, seed: 5, start: start, duration: 4 * 3600, directory: directory, gzip: false)
            let replay = try ReplayTool.run(
                configuration: try HubConfiguration.load(from: "\(directory)/hub.yaml"),
                inputPath: "\(directory)/sightings.jsonl", eventsPath: "\(directory)/events.jsonl")
            let alerts = try String(contentsOfFile: "\(directory)/events.jsonl", encoding: .utf8)
                .split(separator: "\n").map { try ContractCoding.decodeLine(ZoneEvent.self, from: String($0)) }
                .filter { $0.code?.hasPrefix("tag-") == true }
            let said = alerts.map { "\($0.code!) \(Int(($0.t - start) / 60)) min: \($0.reason)" }
            print(said.joined(separator: "\n"))
            #expect(alerts.allSatisfy { $0.tag == "badge" && $0.type == .alert }, "\(said)")
            #expect(
                alerts.map { $0.code! } == ["tag-battery-low", "tag-missing", "tag-found", "tag-tlm-reset"], "\(said)")
            #expect(replay.tagAlerts == ["tag-battery-low": 1, "tag-missing": 1, "tag-found": 1, "tag-tlm-reset": 1])
            func minutes(_ code: String) -> Double { (alerts.first { $0.code == code }!.t - start) / 60 }
            guard alerts.count == 4 else { return }
            // Low at 1 h (give or take the TLM frames' spacing), missing an hour after it fell silent at 2 h (looked for
            // every 15 min), found and reset when the new cell goes in at 3.5 h.
            #expect(abs(minutes("tag-battery-low") - 60) < 3)
            #expect(minutes("tag-missing") >= 180 && minutes("tag-missing") < 196)
            #expect(abs(minutes("tag-found") - 210) < 2 && abs(minutes("tag-tlm-reset") - 210) < 2)
            #expect(ReplayTool.report(replay).contains("tag alerts: tag-battery-low 1, tag-found 1"))
        }
    }
}
