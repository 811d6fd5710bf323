import BeaconModel
import Testing
import ZoneInference

@Suite struct ZoneEngineTests {
    @Test func reportsAZoneOnlyAfterTheConfirmationTime() throws {
        var settings = InferenceSettings()
        settings.confirmSeconds = 3
        var driver = Driver(engine: try TestVenue.engine(settings: settings))
        driver.stay(in: "a", from: 0, to: 20)
        let enters = driver.events(.enter)
        #expect(enters.count == 1)
        let enter = try #require(enters.first)
        #expect(enter.zone == "a" && enter.tag == TestVenue.tag && enter.previousZone == nil)
        #expect(enter.t >= 3 && enter.t <= 6)
        #expect(enter.confidence >= settings.enterProbability)
    }

    /// The zone HMM's timing on the test venue's made-up levels (the `position` method's, on the same walk:
    /// PositionEngineTests.walksThroughAdjacentRooms).
    @Test func walksThroughAdjacentRoomsWithinSeconds() throws {
        var driver = Driver(engine: try TestVenue.engine(settings: TestVenue.hmm))
        driver.stay(in: "a", from: 0, to: 30)
        driver.stay(in: "b", from: 30, to: 60)
        driver.stay(in: "c", from: 60, to: 90)
        let enters = driver.events(.enter)
        #expect(enters.map(\.zone) == ["a", "b", "c"])
        #expect(enters[1].previousZone == "a" && enters[2].previousZone == "b")
        #expect(enters[1].t > 30 && enters[1].t <= 35)
        #expect(enters[2].t > 60 && enters[2].t <= 65)
        let exits = driver.events(.exit)
        #expect(exits.map(\.zone) == ["a", "b"])
        #expect(abs((exits[0].dwellSeconds ?? 0) - (enters[1].t - enters[0].t)) < 0.11)
        #expect(driver.events(.suspect).isEmpty)
    }

    @Test func exitsAfterTheAbsenceTimeout() throws {
        var driver = Driver(engine: try TestVenue.engine())
        driver.stay(in: "a", from: 0, to: 20)
        driver.advance(to: 100)
        let exit = try #require(driver.events(.exit).first)
        #expect(exit.zone == "a")
        // Last heard at 19 s; absence 12 s; decided at the next update.
        #expect(exit.t >= 31 && exit.t <= 31.5)
        #expect(exit.reason.contains("not heard"))
        #expect(driver.engine.tagState(TestVenue.tag)?.state == .outside)
    }

    @Test func doesNotFlapOnABoundary() throws {
        // Standing in the doorway between a and b: the two gateways take turns at being louder, by a few dB.
        let doorway: (String, Int) -> [(GatewayID, Int)] = { _, second in
            let lead = [3, -2, 4, -3, 1, -4, 2, 0, -1][second % 9]
            return [("gw-a", -76 + lead), ("gw-b", -76 - lead)]
        }
        var hub = Driver(engine: try TestVenue.engine())
        hub.stay(in: "door", from: 0, to: 600, levels: doorway)
        var baseline = Driver(engine: try TestVenue.engine(settings: .strongestBaseline))
        baseline.stay(in: "door", from: 0, to: 600, levels: doorway)
        #expect(hub.events(.enter).count <= 3)
        // The same input does make a zero-hysteresis reading flap, so the test is not vacuous.
        var eager = InferenceSettings.strongestBaseline
        eager.confirmSeconds = 0
        eager.smoothingSeconds = 0.1
        var flapping = Driver(engine: try TestVenue.engine(settings: eager))
        flapping.stay(in: "door", from: 0, to: 600, levels: doorway)
        #expect(flapping.events(.enter).count > 50)
    }

    @Test func aJumpBetweenDistantZonesIsSuspectNotAMove() throws {
        var driver = Driver(engine: try TestVenue.engine())
        driver.stay(in: "a", from: 0, to: 30)
        // From one second to the next the tag sounds as if in c, 20 m of walking away.
        driver.stay(in: "c", from: 30, to: 60)
        let suspect = try #require(driver.events(.suspect).first)
        #expect(suspect.zone == "c" && suspect.previousZone == "a")
        #expect(suspect.reason.contains("faster than walking"))
        // Not counted as a move while the walk could not have been made (20 m at 2.5 m/s = 8 s).
        let enterC = try #require(driver.events(.enter).first { $0.zone == "c" })
        #expect(enterC.t >= 30 + 8 - 1)
        #expect(enterC.t > suspect.t)
    }

    @Test func aBeaconHeardStronglyInDistantZonesAtOnceIsSuspect() throws {
        let clone: (String, Int) -> [(GatewayID, Int)] = { _, _ in [("gw-a", -60), ("gw-c", -61)] }
        var driver = Driver(engine: try TestVenue.engine())
        driver.stay(in: "a", from: 0, to: 20)
        driver.stay(in: "both", from: 20, to: 100, levels: clone)
        let suspects = driver.events(.suspect)
        #expect(suspects.count >= 1 && suspects.count <= 2)
        #expect(suspects[0].reason.contains("gw-a") && suspects[0].reason.contains("gw-c"))
        #expect(suspects[0].t >= 20 && suspects[0].t <= 22)
    }

    @Test func staysAfterTheRegionsDwellTime() throws {
        let region = TagRegion(
            id: "visitors", prefix: "ibeacon:e2c56db5-dffb-48d2-b060-d0f5a71096e0", stayedSeconds: 60)
        var driver = Driver(engine: try TestVenue.engine(regions: [region]))
        driver.stay(in: "a", from: 0, to: 200)
        let enter = try #require(driver.events(.enter).first)
        let stayed = driver.events(.stayed)
        #expect(stayed.count == 1)
        #expect(stayed.first?.zone == "a" && stayed.first?.region == "visitors")
        #expect(abs((stayed.first?.t ?? 0) - (enter.t + 60)) <= 0.5)
        #expect(abs((stayed.first?.dwellSeconds ?? 0) - 60) <= 0.5)
    }

    @Test func notifyFlagsChooseTheEvents() throws {
        let region = TagRegion(
            id: "quiet", prefix: "ibeacon:e2c56db5-dffb-48d2-b060-d0f5a71096e0:1", notifyOnEntry: false,
            notifyOnExit: true, stayedSeconds: nil)
        var driver = Driver(engine: try TestVenue.engine(regions: [region]))
        driver.stay(in: "a", from: 0, to: 30)
        driver.stay(in: "b", from: 30, to: 900)
        #expect(driver.events(.enter).isEmpty)
        #expect(driver.events(.exit).map(\.zone) == ["a"])
        #expect(driver.events(.stayed).isEmpty)
        // The zone is still tracked: only the notifications are off.
        #expect(driver.engine.presence(of: TestVenue.tag, in: "b") == .inside)
    }

    @Test func answersStateQueriesForTagsZonesAndRegions() throws {
        let other = "ibeacon:e2c56db5-dffb-48d2-b060-d0f5a71096e0:1:2"
        let region = TagRegion(id: "visitors", prefix: "ibeacon:e2c56db5-dffb-48d2-b060-d0f5a71096e0:1")
        var driver = Driver(
            engine: try TestVenue.engine(
                regions: [region], named: [(TestVenue.beacon, TestVenue.tag), (other, "tag-2")]))
        #expect(driver.engine.presence(of: TestVenue.tag, in: "a") == .unknown)
        #expect(driver.engine.presence(ofRegion: "visitors", in: "a") == .unknown)
        driver.stay(in: "a", from: 0, to: 20)
        #expect(driver.engine.presence(of: TestVenue.tag, in: "a") == .inside)
        #expect(driver.engine.presence(of: TestVenue.tag, in: "b") == .outside)
        #expect(driver.engine.presence(of: "tag-2", in: "a") == .unknown)
        #expect(driver.engine.presence(ofRegion: "visitors", in: "a") == .inside)
        #expect(driver.engine.presence(ofRegion: "visitors", in: "c") == .unknown)
        #expect(driver.engine.presence(ofRegion: "visitors", in: nil) == .inside)
        #expect(driver.engine.presence(ofRegion: "nobody", in: "a") == .unknown)
        let state = try #require(driver.engine.tagState(TestVenue.tag))
        #expect(state.state == .inside && state.zone == "a" && state.beacon == TestVenue.beacon)
        #expect(Set(state.gateways.map(\.gateway)) == ["gw-a", "gw-b"])
        #expect(state.gateways.first { $0.gateway == "gw-a" }?.proximity == .far)
    }

    /// A tag that advertises no measured power has no distance without a calibration (docs/mqtt.md, tag state).
    @Test func noDistanceWithoutMeasuredPowerOrCalibration() throws {
        var engine = try TestVenue.engine()
        var events: [ZoneEvent] = []
        for second in 0..<10 {
            for (gateway, rssi) in TestVenue.levels(in: "a", second: second) {
                engine.ingest(
                    SightingLine(t: Double(second), gateway: gateway, beacon: TestVenue.beacon, rssi: rssi),
                    events: &events)
            }
        }
        let reading = try #require(engine.tagState(TestVenue.tag)?.gateways.first { $0.gateway == "gw-a" })
        #expect(reading.distance == nil && reading.proximity == .unknown)
        // The zone is still inferred: only ranging needs the power.
        #expect(engine.tagState(TestVenue.tag)?.zone == "a")
    }

    @Test func lateSightingsAreCountedButChangeNothing() throws {
        var driver = Driver(engine: try TestVenue.engine())
        driver.stay(in: "a", from: 0, to: 100)
        let before = driver.events
        let late = SightingLine(t: 50, gateway: "gw-c", beacon: TestVenue.beacon, rssi: -40)
        #expect(driver.engine.ingest(late) == .late)
        driver.advance(to: 101)
        #expect(driver.events == before)
        #expect(driver.engine.counters.late == 1)
        #expect(
            driver.engine.ingest(SightingLine(t: 100, gateway: "gw-x", beacon: TestVenue.beacon, rssi: -40))
                == .unknownGateway)
        #expect(
            driver.engine.ingest(SightingLine(t: 100, gateway: "gw-a", beacon: "ibeacon:00:1:1", rssi: -40))
                == .untracked)
    }

    @Test func regionsTrackUnnamedBeaconsUnderTheirBeaconID() throws {
        let unnamed = "ibeacon:e2c56db5-dffb-48d2-b060-d0f5a71096e0:1:77"
        let region = TagRegion(id: "visitors", prefix: "ibeacon:e2c56db5-dffb-48d2-b060-d0f5a71096e0:1")
        var driver = Driver(engine: try TestVenue.engine(regions: [region], named: []))
        driver.stay(in: "a", from: 0, to: 10, beacon: unnamed)
        #expect(driver.events(.enter).first?.tag == TagID(rawValue: unnamed))
        #expect(driver.events(.enter).first?.region == "visitors")
    }
}

@Suite struct BuildingBlocksTests {
    @Test func rssiFilterShrugsOffADeepFade() {
        var robust = RSSIFilter(gateway: 0, rssi: -70, at: 0)
        var plain = robust
        for second in 1...10 {
            robust.add(-70, at: Double(second), tau: 1.5, resetAfter: 30, robust: true)
            plain.add(-70, at: Double(second), tau: 1.5, resetAfter: 30, robust: false)
        }
        robust.add(-95, at: 11, tau: 1.5, resetAfter: 30, robust: true)
        plain.add(-95, at: 11, tau: 1.5, resetAfter: 30, robust: false)
        #expect(robust.level > -74)
        #expect(plain.level < -80)
        // A real change of level still comes through within a few time constants.
        for second in 12...20 { robust.add(-85, at: Double(second), tau: 1.5, resetAfter: 30, robust: true) }
        #expect(robust.level < -82)
    }

    @Test func filterTimeConstantIsInSecondsNotSamples() {
        // Ten samples at 10 Hz and one at 1 Hz move the level alike over the same second.
        var fast = RSSIFilter(gateway: 0, rssi: -70, at: 0)
        var slow = fast
        for step in 1...10 { fast.add(-80, at: Double(step) / 10, tau: 2, resetAfter: 30, robust: false) }
        slow.add(-80, at: 1, tau: 2, resetAfter: 30, robust: false)
        #expect(abs(fast.level - slow.level) < 1.2)
    }

    @Test(arguments: [(0.3, TagState.Proximity.immediate), (1.5, .near), (8, .far)])
    func proximityFollowsCoreLocationsClasses(metres: Double, expected: TagState.Proximity) {
        let rssi = -59 - 20 * log10(metres)
        let distance = Ranging.distance(rssi: rssi, measuredPower: -59, pathLossExponent: 2)
        #expect(abs((distance ?? 0) - metres) < 0.01)
        #expect(Ranging.proximity(distance: distance) == expected)
        #expect(
            Ranging.proximity(distance: Ranging.distance(rssi: rssi, measuredPower: nil, pathLossExponent: 2))
                == .unknown)
    }

    @Test func regionsMatchWholeIdentifierParts() {
        let major = TagRegion(id: "r", prefix: "ibeacon:e2c56db5-dffb-48d2-b060-d0f5a71096e0:1")
        #expect(major.matches(beacon: "ibeacon:e2c56db5-dffb-48d2-b060-d0f5a71096e0:1:5"))
        #expect(!major.matches(beacon: "ibeacon:e2c56db5-dffb-48d2-b060-d0f5a71096e0:12:5"))
        #expect(!major.matches(beacon: "altbeacon:e2c56db5-dffb-48d2-b060-d0f5a71096e0:1:5"))
        let exact = TagRegion(id: "r", prefix: "eddystone-uid:edd1ebeac04e5defa017:0123456789ab")
        #expect(exact.matches(beacon: "eddystone-uid:edd1ebeac04e5defa017:0123456789ab"))
        #expect(!exact.matches(beacon: "eddystone-uid:edd1ebeac04e5defa017:0123456789ac"))
    }
}

#if canImport(Glibc)
    import Glibc
#endif
