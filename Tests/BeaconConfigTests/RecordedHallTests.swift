import BeaconConfig
import BeaconModel
import Foundation
import Testing

/// The recorded TETAM hall (data/recorded/tetam_hall_philotuxo, CC0) against its venue file and its converter: the
/// venue's gateways are the dataset's receivers where the dataset puts them, and what scripts/tetam-to-sightings.py
/// writes keeps every good reception and gives each moment the zone the venue's own geometry gives its position.
@Suite struct RecordedHallTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()
    static let data = root.appendingPathComponent("data/recorded/tetam_hall_philotuxo")
    static let tracks = [
        "straight_01", "straight_02", "straight_03", "straight_04", "straight_05", "rectangular_without_rotation",
        "rectangular_with_rotation", "zigzagging_without_rotation", "zigzagging_with_rotation",
    ]

    static func venue() throws -> Venue {
        try VenueLoader.load(from: root.appendingPathComponent("config/venues/tetam-hall.yaml").path)
    }

    /// One line of a track: time, receiver MAC, beacon MAC, RSSI, x, y, z, orientation.
    struct Reception {
        var t: Double
        var receiver: String
        var rssi: Int
        var x: Double
        var y: Double
    }

    /// A line of truth.jsonl.
    struct Interval: Decodable {
        var zone: String
        var enter: Double
        var exit: Double
    }

    static func receptions(_ track: String) throws -> [Reception] {
        let text = try String(
            contentsOf: data.appendingPathComponent("trk/\(track)_all_sensors.mbd"), encoding: .utf8)
        return try text.split(separator: "\n").map { line in
            let fields = line.split(separator: ",").map(String.init)
            guard fields.count >= 7, let t = Double(fields[0]), let rssi = Int(fields[3]), let x = Double(fields[4]),
                let y = Double(fields[5])
            else { throw CocoaError(.fileReadCorruptFile, userInfo: ["line": String(line)]) }
            return Reception(t: t, receiver: fields[1], rssi: rssi, x: x, y: y)
        }
    }

    @Test func theVenuesGatewaysAreTheDatasetsReceivers() throws {
        let devices = try String(contentsOf: Self.data.appendingPathComponent("cnf/tetam.dev"), encoding: .utf8)
        let line = try #require(devices.split(separator: "\n").first { $0.hasPrefix("Dongles:") })
        let dongles = try #require(
            try JSONSerialization.jsonObject(with: Data(line.dropFirst("Dongles:".count).utf8)) as? [String: [Any]])
        let venue = try Self.venue()
        #expect(dongles.count == 12 && venue.gateways.count == 12)
        for (mac, entry) in dongles {
            let position = try #require(entry.first as? [Double], "\(mac)")
            let alias = try #require(entry.last as? String, "\(mac)")
            let gateway = try #require(venue.gateways.first { $0.id.rawValue == alias }, "\(alias) is not in the venue")
            #expect(abs(gateway.position.x - position[0]) < 0.005 && abs(gateway.position.y - position[1]) < 0.005)
            #expect(abs(gateway.height - position[2]) < 0.005, "\(alias)")
            // sensorNM: group N, the quadrant it serves.
            #expect(gateway.zone?.rawValue == "quadrant-\(alias.dropFirst("sensor".count).prefix(1))", "\(alias)")
        }
        // Every track's beacon stays within half a metre of the hall's limits (cnf/tetam.par: 20.66 × 17.64 m;
        // straight_03 ends 0.33 m beyond the northern one, which the converter takes as the nearest quadrant).
        for track in Self.tracks {
            for reception in try Self.receptions(track) {
                #expect((-0.5...21.16).contains(reception.x) && (-0.5...18.14).contains(reception.y), "\(track)")
            }
        }
    }

    @Test func theConverterKeepsEveryGoodReceptionAndTheVenuesZones() throws {
        let out = FileManager.default.temporaryDirectory.appendingPathComponent("tetam-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: out) }
        let python = Process()
        python.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        python.arguments = [
            "python3", Self.root.appendingPathComponent("scripts/tetam-to-sightings.py").path, "--out", out.path,
        ]
        let pipe = Pipe()
        python.standardOutput = pipe
        python.standardError = pipe
        try python.run()
        let said = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        python.waitUntilExit()
        #expect(python.terminationStatus == 0, "\(said)")
        #expect(said.contains("dropped 2 receptions"), "\(said)")
        let venue = try Self.venue()
        for track in Self.tracks {
            let receptions = try Self.receptions(track)
            let folder = out.appendingPathComponent(track)
            let sightings = try String(contentsOf: folder.appendingPathComponent("sightings.jsonl"), encoding: .utf8)
                .split(separator: "\n")
            #expect(sightings.count == receptions.filter { $0.rssi < 0 }.count, "\(track)")
            let truth = try String(contentsOf: folder.appendingPathComponent("truth.jsonl"), encoding: .utf8)
                .split(separator: "\n").map { try JSONDecoder().decode(Interval.self, from: Data($0.utf8)) }
            // Contiguous, over the whole track.
            let times = receptions.map(\.t)
            #expect(abs(truth.first!.enter - times.min()!) < 0.01 && abs(truth.last!.exit - times.max()!) < 0.01)
            for (a, b) in zip(truth, truth.dropFirst()) { #expect(a.exit == b.enter && a.zone != b.zone, "\(track)") }
            // Each reception, away from the instant of a change, lies in its interval's zone by the venue's geometry.
            for reception in receptions {
                guard let zone = venue.zone(at: Point(reception.x, reception.y))?.id.rawValue else { continue }
                let t = (reception.t * 1000).rounded() / 1000
                guard let interval = truth.first(where: { $0.enter < t - 0.001 && t + 0.001 < $0.exit }) else {
                    continue
                }
                #expect(interval.zone == zone, "\(track) at \(reception.t): (\(reception.x), \(reception.y))")
            }
        }
    }
}
