import BeaconModel
import Testing
import ZoneInference

/// A Pi that reboots or loses its network must not make its tags exit: they become `unknown` and come back.
@Suite struct GatewayHealthTests {
    /// Levels in room a when only gw-a hears the tag (gw-b's faint reading dropped, as in a small room).
    static func onlyA(_ room: String, _ second: Int) -> [(GatewayID, Int)] { [("gw-a", -70 + second % 3)] }

    @Test func aTagHeardOnlyByAnOfflineGatewayBecomesUnknownNotExited() throws {
        var driver = Driver(engine: try TestVenue.engine())
        driver.stay(in: "a", from: 0, to: 30, levels: Self.onlyA)
        #expect(driver.events(.enter).map(\.zone) == ["a"])
        driver.engine.setGateway("gw-a", online: false, at: 31, events: &driver.events)
        let unknown = try #require(driver.events(.unknown).first)
        #expect(unknown.zone == "a" && unknown.tag == TestVenue.tag && unknown.t == 31)
        #expect(unknown.reason.contains("gw-a"))
        // Long past the absence timeout: still no exit, and the state says unknown with the last zone.
        driver.advance(to: 300)
        #expect(driver.events(.exit).isEmpty)
        let state = try #require(driver.engine.tagState(TestVenue.tag))
        #expect(state.state == .unknown && state.zone == "a")
        #expect(driver.engine.presence(of: TestVenue.tag, in: "a") == .unknown)
    }

    @Test func returnsToItsZoneWithoutANewEnterWhenTheGatewayComesBack() throws {
        var driver = Driver(engine: try TestVenue.engine())
        driver.stay(in: "a", from: 0, to: 30, levels: Self.onlyA)
        driver.engine.setGateway("gw-a", online: false, at: 31, events: &driver.events)
        driver.advance(to: 200)
        driver.engine.setGateway("gw-a", online: true, at: 200, events: &driver.events)
        driver.stay(in: "a", from: 201, to: 260, levels: Self.onlyA)
        #expect(driver.events(.enter).count == 1)
        #expect(driver.events(.exit).isEmpty)
        #expect(driver.engine.tagState(TestVenue.tag)?.state == .inside)
        #expect(driver.engine.tagState(TestVenue.tag)?.zone == "a")
    }

    @Test func exitsWhenTheGatewayIsBackAndDoesNotHearTheTag() throws {
        var driver = Driver(engine: try TestVenue.engine())
        driver.stay(in: "a", from: 0, to: 30, levels: Self.onlyA)
        driver.engine.setGateway("gw-a", online: false, at: 31, events: &driver.events)
        driver.engine.setGateway("gw-a", online: true, at: 100, events: &driver.events)
        driver.advance(to: 200)
        let exit = try #require(driver.events(.exit).first)
        // Absence counts from the gateway's return (12 s), not from the last sighting before the outage.
        #expect(exit.zone == "a" && exit.t >= 112 && exit.t <= 113)
        #expect(driver.engine.tagState(TestVenue.tag)?.state == .outside)
    }

    @Test func aTagStillHeardByAnOnlineGatewayStaysInItsZone() throws {
        var driver = Driver(engine: try TestVenue.engine())
        driver.stay(in: "b", from: 0, to: 30)
        driver.engine.setGateway("gw-b", online: false, at: 30, events: &driver.events)
        // gw-a and gw-c still hear the tag faintly; gw-b's silence is not evidence against b.
        let faint: (String, Int) -> [(GatewayID, Int)] = { _, second in
            [("gw-a", -88 + second % 3), ("gw-c", -88 - second % 2)]
        }
        driver.stay(in: "b", from: 30, to: 120, levels: faint)
        #expect(driver.events(.unknown).isEmpty)
        #expect(driver.events(.exit).isEmpty)
        #expect(driver.engine.tagState(TestVenue.tag)?.zone == "b")
    }

    @Test func aRestoredStateCarriesOnWithoutASecondEnter() throws {
        var first = Driver(engine: try TestVenue.engine())
        first.stay(in: "a", from: 0, to: 40)
        let published = try #require(first.engine.tagState(TestVenue.tag))
        #expect(published.state == .inside)

        var second = Driver(engine: try TestVenue.engine())
        second.engine.restore(published, at: 45)
        #expect(second.engine.tagState(TestVenue.tag)?.zone == "a")
        second.stay(in: "a", from: 45, to: 90)
        #expect(second.events(.enter).isEmpty)
        #expect(second.events(.exit).isEmpty)
        // A restored tag that is not heard again exits after the absence time, counted from the restore.
        var third = Driver(engine: try TestVenue.engine())
        third.engine.restore(published, at: 45)
        third.advance(to: 45)
        third.advance(to: 100)
        #expect(third.events(.exit).map(\.zone) == ["a"])
        #expect(third.events(.exit).first.map { $0.t >= 57 } == true)
    }

    @Test func aGatewayFallingSilentWithItsTagDelaysTheExitUntilTheHubDecides() throws {
        var driver = Driver(engine: try TestVenue.engine())
        driver.engine.setSilenceGrace("gw-a", seconds: 40)
        driver.stay(in: "a", from: 0, to: 30, levels: Self.onlyA)
        // gw-a hears nothing at all from 30 s on (power cut): past the 12 s absence, no exit.
        for second in 30...60 { driver.advance(to: Double(second)) }
        #expect(driver.events(.exit).isEmpty)
        // The hub's heartbeat timeout calls it offline: unknown, still no exit.
        driver.engine.setGateway("gw-a", online: false, at: 61, events: &driver.events)
        driver.advance(to: 120)
        #expect(driver.events(.unknown).map(\.zone) == ["a"])
        #expect(driver.events(.exit).isEmpty)
    }

    @Test func aTagThatLeavesAGatewayStillHearingOthersExitsOnTime() throws {
        var driver = Driver(engine: try TestVenue.engine())
        driver.engine.setSilenceGrace("gw-a", seconds: 40)
        let other = "ibeacon:e2c56db5-dffb-48d2-b060-d0f5a71096e0:1:2"
        driver.stay(in: "a", from: 0, to: 30, levels: Self.onlyA)
        // gw-a keeps hearing another beacon: its silence about tag-1 is the tag's, not the gateway's.
        driver.stay(in: "a", from: 30, to: 60, beacon: other, levels: Self.onlyA)
        let exit = try #require(driver.events(.exit).first)
        #expect(exit.t >= 41 && exit.t <= 42)
    }

    @Test func touchedTagsAreReportedOnce() throws {
        var driver = Driver(engine: try TestVenue.engine())
        driver.stay(in: "a", from: 0, to: 5)
        #expect(driver.engine.takeTouched() == [TestVenue.tag])
        #expect(driver.engine.takeTouched().isEmpty)
    }
}
