import BeaconConfig
import BeaconModel
import Foundation
import Simulator
import Testing
import ZoneInference

/// Real signal: M. Kolakowski's recordings in a furnished flat (Sensors 21(18):6270, 2021, doi 10.3390/s21186270;
/// data doi 10.5281/zenodo.5457591, CC BY 4.0), in data/recorded/flat_ble_uwb_kolakowski. The rows become sighting
/// lines and truth by the rules of scripts/kolakowski-to-sightings.py; the venue is config/venues/flat-kolakowski.yaml.
/// The robot's test run is scored, uncalibrated and calibrated from the robot's separate calibration run, beside the
/// strongest-gateway baseline (docs/accuracy.md has the figures).
@Suite struct RecordedFlatTests {
    static let beacon = "ibeacon:4b6f6c61-6b6f-7773-6b69-000000000001:1:1"
    static let tag: TagID = "robot-tag"

    struct Recording {
        var sightings: [SightingLine] = []
        var truth: [TruthInterval] = []
        /// Where the robot was at each row (the recording's UWB-measured x, y): a calibration plan's route.
        var route: [Calibrator.RoutePoint] = []
    }

    static func venue() throws -> Venue {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        return try VenueLoader.load(from: root.appendingPathComponent("config/venues/flat-kolakowski.yaml").path)
    }

    static func dataURL(_ name: String) -> URL {
        let root =
            ProcessInfo.processInfo.environment["BEACONTRACKER_RECORDED_DATA"].map { URL(fileURLWithPath: $0) }
            ?? URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("data/recorded")
        return root.appendingPathComponent("flat_ble_uwb_kolakowski/\(name)")
    }

    /// Rows → sightings (rx-1 … rx-6, RSSI rounded, pauses over 60 s closed) and truth (the zone holding x, y; a
    /// point on a wall takes the nearest zone).
    static func load(_ name: String, venue: Venue) throws -> Recording {
        let text = try String(contentsOf: dataURL(name), encoding: .utf8)
        var lines = text.split(whereSeparator: \.isNewline).map {
            $0.split(separator: ",", omittingEmptySubsequences: false)
        }
        let header = lines.removeFirst().map(String.init)
        func column(_ name: String) throws -> Int { try #require(header.firstIndex(of: name), "no column \(name)") }
        let ts = try column("ts")
        let x = try column("x")
        let y = try column("y")
        let rssi = try (1...6).map { try column("rssi_\($0)") }
        var recording = Recording()
        var shift = 0.0
        var previous: Double?
        for fields in lines {
            let raw = try #require(Double(fields[ts])) / 1e9
            if let previous, raw - previous > 60 { shift += raw - previous - 1.0 / 3 }
            previous = raw
            let t = ((raw - shift) * 1000).rounded() / 1000
            for (n, index) in rssi.enumerated() {
                guard let value = Double(fields[index]) else { continue }
                recording.sightings.append(
                    SightingLine(
                        t: t, gateway: GatewayID(unchecked: "rx-\(n + 1)"), beacon: beacon,
                        rssi: Int(value.rounded()), kind: .iBeacon))
            }
            let point = Point(try #require(Double(fields[x])), try #require(Double(fields[y])))
            recording.route.append(Calibrator.RoutePoint(t: t, x: point.x, y: point.y))
            let zone = (venue.zone(at: point) ?? nearestZone(to: point, in: venue)).id
            if let last = recording.truth.last, last.zone == zone {
                recording.truth[recording.truth.count - 1].exit = t
            } else {
                if !recording.truth.isEmpty { recording.truth[recording.truth.count - 1].exit = t }
                recording.truth.append(TruthInterval(tag: tag, zone: zone, enter: t, exit: t))
            }
        }
        return recording
    }

    static func nearestZone(to point: Point, in venue: Venue) -> Venue.Zone {
        func distance(_ zone: Venue.Zone) -> Double {
            let vertices = zone.shape.vertices
            return zip(vertices, vertices.dropFirst() + [vertices[0]]).map { a, b in
                let dx = b.x - a.x
                let dy = b.y - a.y
                let u = max(0, min(1, ((point.x - a.x) * dx + (point.y - a.y) * dy) / (dx * dx + dy * dy)))
                return point.distance(to: Point(a.x + u * dx, a.y + u * dy))
            }.min() ?? .infinity
        }
        return venue.zones.min { distance($0) < distance($1) }!
    }

    static func score(_ engine: ZoneEngine, on recording: Recording) -> ZoneScore {
        var engine = engine
        var events: [ZoneEvent] = []
        for sighting in recording.sightings { engine.ingest(sighting, events: &events) }
        engine.advance(to: recording.truth.last!.exit, events: &events)
        return Scorer.score(truth: recording.truth, events: events).overall
    }

    /// The zone HMM (`method: hmm`, kept one release for comparison) on the robot run, uncalibrated and calibrated
    /// from the robot's calibration run (the `position` method's:
    /// PositionEngineTests.beatsTheBaselineOnTheRecordedFlat).
    @Test func hubBeatsTheBaselineOnTheRobotRun() throws {
        let venue = try Self.venue()
        let directory = TagDirectory(named: [(Self.beacon, Self.tag)], regions: [])
        let test = try Self.load("test_robot_df.csv", venue: venue)
        #expect(test.sightings.count == 4314)
        #expect(test.truth.count == 7)

        let baseline = Self.score(
            ZoneEngine(venue: venue, settings: .strongestBaseline, directory: directory), on: test)
        let hmm = TestVenue.hmm
        let hub = Self.score(ZoneEngine(venue: venue, settings: hmm, directory: directory), on: test)
        // The tag advertises no measured power and is ~17 dB louder than −59 dBm: with the usual 2 dB prior on its
        // offset, the hub took the zone with most gateways near (the living room) for the whole run.
        var narrow = hmm
        narrow.unknownPowerSigmaDB = narrow.tagOffsetSigmaDB
        let narrowPrior = Self.score(ZoneEngine(venue: venue, settings: narrow, directory: directory), on: test)

        // Calibrated from the robot's own, separate calibration run: its stays of 20 s or more in one zone.
        let calibrationRun = try Self.load("calibration_df.csv", venue: venue)
        let stops = calibrationRun.truth.filter { $0.exit - $0.enter >= 20 }.compactMap { interval in
            interval.zone.map { Calibrator.Stop(zone: $0, from: interval.enter + 3, to: interval.exit - 3) }
        }
        var calibrator = Calibrator(
            model: VenueModel(venue: venue, settings: InferenceSettings()), beacon: Self.beacon, stops: stops)
        for sighting in calibrationRun.sightings { calibrator.add(sighting) }
        let (calibration, warnings) = calibrator.result(site: venue.site, created: 0)
        #expect(calibration.zones.count == 4)
        #expect(warnings.contains { $0.contains("no measured power") }, "\(warnings)")
        let calibrated = Self.score(
            ZoneEngine(venue: venue, settings: hmm, directory: directory, calibration: calibration),
            on: test)

        print("flat-kolakowski test_robot: hub \(hub), calibrated \(calibrated), baseline \(baseline)")
        #expect(narrowPrior.accuracy < 0.5)
        #expect(hub.accuracy > baseline.accuracy + 0.02)
        #expect(hub.falseTransitionsPerTagHour <= baseline.falseTransitionsPerTagHour)
        #expect(calibrated.accuracy > baseline.accuracy + 0.02)
        #expect(calibrated.falseTransitions < baseline.falseTransitions)
        #expect((calibrated.latencyMedian ?? .infinity) <= (baseline.latencyMedian ?? 0) + 1)
    }
}
