import BeaconConfig
import BeaconModel
import Foundation
import Testing

@Suite struct VenueLoaderTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    @Test(arguments: ["museum", "museum-harsh", "store", "flat-kolakowski", "tetam-hall"])
    func shippedVenuesLoad(name: String) throws {
        let venue = try VenueLoader.load(from: Self.root.appendingPathComponent("config/venues/\(name).yaml").path)
        #expect(!venue.zones.isEmpty)
        #expect(!venue.tags.isEmpty)
        for gateway in venue.gateways {
            if let zone = gateway.zone { #expect(venue.zones.contains { $0.id == zone }) }
        }
    }

    @Test func museumHasNineRoomsOneGatewayEachAndWalls() throws {
        let venue = try VenueLoader.load(from: Self.root.appendingPathComponent("config/venues/museum.yaml").path)
        #expect(venue.zones.count == 9)
        #expect(Set(venue.gateways.compactMap(\.zone)).count == 9)
        #expect(venue.walls.contains { $0.material == .heavy })
        #expect(venue.neighbours(of: "rome") == ["egypt", "medieval", "modern"])
        #expect(venue.zone(at: Point(15, 12))?.id == "rome")
        // The harsh variant differs in its radio only, not in its layout.
        let harsh = try VenueLoader.load(from: Self.root.appendingPathComponent("config/venues/museum-harsh.yaml").path)
        #expect(harsh.zones == venue.zones)
        #expect(harsh.radio.packetLoss > venue.radio.packetLoss)
    }

    @Test func storeHasGatewaysOutsideAnyZoneAndFiftyTags() throws {
        let venue = try VenueLoader.load(from: Self.root.appendingPathComponent("config/venues/store.yaml").path)
        #expect(venue.zones.count == 8)
        #expect(venue.gateways.count == 10)
        #expect(venue.gateways.filter { $0.zone == nil }.count == 2)
        #expect(venue.walls.isEmpty)
        #expect(venue.tags.map(\.count).reduce(0, +) == 50)
    }

    static let base = """
        site: test
        zones:
          - { id: a, rect: { x: 0, y: 0, width: 5, height: 5 } }
          - { id: b, polygon: [[5, 0], [10, 0], [10, 5], [5, 5]] }
        doors:
          - { between: [a, b], at: [5, 2.5] }
        gateways:
          - { id: gw-a, zone: a, position: [2, 2] }

        """

    @Test(arguments: [
        ("  - { id: gw-x, zone: c, position: [2, 2] }\n", "gateways[1].zone", "no zone \"c\""),
        ("  - { id: gw-a, position: [2, 2] }\n", "gateways[1].id", "used twice"),
        ("  - { id: gw-far, zone: a, position: [9, 9] }\n", "gateways[1].position", "not in zone a"),
    ])
    func crossReferenceErrorsNameTheKey(extra: String, key: String, message: String) {
        do {
            _ = try VenueLoader.decode(Self.base + extra, file: "venue.yaml")
            Issue.record("accepted a broken venue")
        } catch {
            #expect(error.key == key)
            #expect(error.message.contains(message))
            #expect(error.file == "venue.yaml")
        }
    }

    @Test func radioFeaturesLoad() throws {
        let venue = try VenueLoader.decode(
            Self.base + """
                  - { id: gw-b, zone: b, position: [9.8, 2.5], antenna: { facing: 180, frontToBackDB: 12 } }
                tags:
                  - { id: t, beacon: "ibeacon:e2c56db5-dffb-48d2-b060-d0f5a71096e0:1:1", advertisesPower: false }
                radio:
                  breakpointMetres: 8
                  farPathLossExponent: 3.5
                  interferenceBurstsPerHour: 6
                  interferenceBurstSeconds: 30
                  interferencePacketLoss: 0.6
                  interferenceNoiseDB: 4
                  clockOffsetSigmaSeconds: 0.05
                  clockJitterSeconds: 0.01

                """, file: "v")
        #expect(venue.gateways[0].antenna == nil)
        #expect(venue.gateways[1].antenna == Venue.Gateway.Antenna(facing: 180, frontToBackDB: 12))
        #expect(venue.tags[0].advertisesPower == false)
        let radio = venue.radio
        #expect(radio.breakpointMetres == 8 && radio.farPathLossExponent == 3.5)
        #expect(radio.interferenceBurstsPerHour == 6 && radio.interferenceBurstSeconds == 30)
        #expect(radio.interferencePacketLoss == 0.6 && radio.interferenceNoiseDB == 4)
        #expect(radio.clockOffsetSigmaSeconds == 0.05 && radio.clockJitterSeconds == 0.01)
        // Absent, none of them is there.
        let plain = try VenueLoader.decode(Self.base, file: "v")
        #expect(plain.radio.breakpointMetres == nil && plain.radio.farPathLossExponent == nil)
        #expect(plain.radio.interferenceBurstsPerHour == 0 && plain.radio.clockOffsetSigmaSeconds == 0)
        #expect(plain.radio.clockJitterSeconds == 0 && plain.gateways[0].antenna == nil)
    }

    @Test(arguments: [
        ("radio:\n  breakpointMetres: 0.2\n  farPathLossExponent: 3\n", "radio.breakpointMetres", "0.5...100.0"),
        ("radio:\n  breakpointMetres: 8\n", "radio.farPathLossExponent", "breakpointMetres and farPathLossExponent"),
        ("radio:\n  farPathLossExponent: 9\n", "radio.breakpointMetres", "or neither"),
        ("radio:\n  interferencePacketLoss: 1.5\n", "radio.interferencePacketLoss", "0.0...1.0"),
        ("radio:\n  interferenceBurstsPerHour: -1\n", "radio.interferenceBurstsPerHour", "0.0...3600.0"),
        ("radio:\n  clockOffsetSigmaSeconds: 5\n", "radio.clockOffsetSigmaSeconds", "0.0...1.0"),
        ("radio:\n  clockJitterSeconds: 1\n", "radio.clockJitterSeconds", "0.0...0.5"),
        (
            "  - { id: gw-b, zone: b, position: [7, 2], antenna: { facing: 0, frontToBackDB: 50 } }\n",
            "gateways[1].antenna.frontToBackDB", "0...40"
        ),
        (
            "  - { id: gw-b, zone: b, position: [7, 2], antenna: { facing: 400, frontToBackDB: 5 } }\n",
            "gateways[1].antenna.facing", "-360...360"
        ),
        (
            "  - { id: gw-b, zone: b, position: [7, 2], antenna: { facing: 0, gain: 5 } }\n",
            "gateways[1].antenna.gain", "facing, frontToBackDB"
        ),
    ])
    func radioFeatureErrorsNameTheKeyAndTheRange(extra: String, key: String, message: String) {
        do {
            _ = try VenueLoader.decode(Self.base + extra, file: "venue.yaml")
            Issue.record("accepted \(extra)")
        } catch {
            #expect(error.key == key)
            #expect(error.message.contains(message), "\(error.message)")
        }
    }

    @Test func wallMountedGatewayOnTheBoundaryIsInItsZone() throws {
        _ = try VenueLoader.decode(Self.base + "  - { id: gw-wall, zone: b, position: [10.3, 1] }\n", file: "v")
    }

    @Test func malformedShapesAndBeaconsAreRefused() {
        #expect(throws: ConfigError.self) {
            _ = try VenueLoader.decode(
                "site: t\nzones:\n  - { id: a, polygon: [[0, 0], [1, 1]] }\ngateways: []\n", file: "v")
        }
        #expect(throws: ConfigError.self) {
            _ = try VenueLoader.decode(
                Self.base + "tags:\n  - { id: t1, beacon: \"bogus\" }\n", file: "v")
        }
        #expect(throws: ConfigError.self) {
            _ = try VenueLoader.decode(
                Self.base + "walls:\n  - { from: [0, 0], to: [1, 1], material: paper }\n", file: "v")
        }
    }
}
