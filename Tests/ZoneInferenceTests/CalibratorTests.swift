import BeaconModel
import Testing
import ZoneInference

@Suite struct CalibratorTests {
    /// A synthetic walk: 30 s in each room, levels exactly as the uncalibrated model expects, except that gw-b reads
    /// 6 dB hot, plus a fixed wobble. The calibration must find gw-b's offset and profile every room.
    @Test func recoversGatewayOffsetsAndZoneProfiles() throws {
        let venue = try TestVenue.venue()
        let settings = InferenceSettings()
        let model = VenueModel(venue: venue, settings: settings)
        let expected = try TestVenue.engine().model
        #expect(expected.gateways == model.gateways)
        let stops = ["a", "b", "c"].enumerated().map { index, zone in
            Calibrator.Stop(zone: ZoneID(unchecked: zone), from: Double(index * 40), to: Double(index * 40 + 30))
        }
        var calibrator = Calibrator(model: model, beacon: TestVenue.beacon, stops: stops)
        let hot: [GatewayID: Double] = ["gw-b": 6]
        for stop in stops {
            let zone = try #require(model.zones.firstIndex(of: stop.zone))
            var t = stop.from
            var step = 0
            while t < stop.to {
                for (g, gateway) in model.gateways.enumerated() {
                    let level = model.expectedLevel(state: zone, gateway: g) + (hot[gateway] ?? 0)
                    guard level > settings.sensitivity else { continue }
                    let wobble = Double([0, 2, -2, 1, -1][step % 5])
                    calibrator.add(
                        SightingLine(
                            t: t, gateway: gateway, beacon: TestVenue.beacon, rssi: Int((level + wobble).rounded()),
                            txPower: -59))
                }
                t += 0.5
                step += 1
            }
        }
        // Sightings of other beacons and outside the stops are ignored.
        calibrator.add(SightingLine(t: 35, gateway: "gw-a", beacon: TestVenue.beacon, rssi: -30))
        calibrator.add(SightingLine(t: 5, gateway: "gw-a", beacon: "ibeacon:other:1:1", rssi: -30))
        let (calibration, warnings) = calibrator.result(site: "row", created: 0)
        #expect(warnings.isEmpty, "\(warnings)")
        #expect(Set(calibration.zones.keys) == ["a", "b", "c"])
        #expect(abs((calibration.gatewayOffsets["gw-b"] ?? 0) - 6) < 1)
        #expect(abs(calibration.gatewayOffsets["gw-a"] ?? 99) < 1)
        #expect(abs(calibration.gatewayOffsets["gw-c"] ?? 99) < 1)
        let profile = try #require(calibration.zones["a"]?["gw-a"])
        #expect(abs(profile.mean - model.expectedLevel(state: 0, gateway: 0)) < 1)
        #expect(profile.heard > 0.9)
        // The engine built with it expects gw-b hotter everywhere the calibration has no say.
        let calibrated = VenueModel(venue: venue, settings: settings, calibration: calibration)
        #expect(calibrated.calibrated)
        #expect(abs(calibrated.gatewayOffset[1] - 6) < 1)
    }

    @Test func warnsWhenAStopHasNoSightings() throws {
        let model = VenueModel(venue: try TestVenue.venue(), settings: InferenceSettings())
        let calibrator = Calibrator(
            model: model, beacon: TestVenue.beacon, stops: [Calibrator.Stop(zone: "a", from: 0, to: 30)])
        let (_, warnings) = calibrator.result(site: "row", created: 0)
        #expect(warnings.contains { $0.contains("zone a: no sightings") })
        #expect(warnings.contains { $0.contains("gateway gw-b heard nothing") })
    }

    /// A walk that passes through a zone twice (a long recording turned into stops) gives one profile from both.
    @Test func stopsInTheSameZoneCountTogether() throws {
        let model = VenueModel(venue: try TestVenue.venue(), settings: InferenceSettings())
        let stops: [Calibrator.Stop] = [
            .init(zone: "a", from: 0, to: 30), .init(zone: "b", from: 40, to: 70), .init(zone: "a", from: 80, to: 110),
        ]
        var calibrator = Calibrator(model: model, beacon: TestVenue.beacon, stops: stops)
        for second in 0..<110 {
            let zone = second < 35 || second >= 75 ? "a" : "b"
            // The second visit to a reads 4 dB lower at gw-a: the profile is the mean of both.
            let dip = second >= 75 ? -4 : 0
            for (gateway, rssi) in TestVenue.levels(in: zone, second: 0) {
                calibrator.add(
                    SightingLine(
                        t: Double(second), gateway: gateway, beacon: TestVenue.beacon,
                        rssi: rssi + (gateway == "gw-a" ? dip : 0), txPower: -59))
            }
        }
        let (calibration, _) = calibrator.result(site: "row", created: 0)
        let profile = try #require(calibration.zones["a"]?["gw-a"])
        // 26 s of each stop survive the 2 s settling at both ends.
        #expect(profile.samples == 52)
        #expect(abs(profile.mean - -72) < 0.01)
        #expect(profile.heard == 1)
        #expect(calibration.zones["b"]?["gw-b"]?.samples == 26)
    }
}
