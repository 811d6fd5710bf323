import BeaconHub
import BeaconModel
import Testing

/// Issue 23's alerts, each once per episode, and the battery's level and trend.
@Suite struct TagHealthTests {
    static let t0 = 1_800_000_000.0
    static let day = 86_400.0

    @Test func aLowBatteryIsSaidOnceAndAgainOnlyAfterItRecovered() {
        var health = TagHealth()
        var alerts: [TagHealth.Alert] = []
        // Ten days draining 20 mV a day from 2700 mV, one frame an hour.
        for hour in 0..<240 {
            let t = Self.t0 + Double(hour) * 3600
            alerts += health.observe(TagHealth.Reading(t: t, milliVolts: 2700 - hour * 20 / 24), of: "guide-7")
        }
        #expect(alerts.map(\.code) == ["tag-battery-low"], "\(alerts)")
        // 2700 − 20 × day: below 2600 from the sixth day on.
        #expect(alerts.first.map { Int(($0.t - Self.t0) / Self.day) } == 5)
        #expect(alerts.first?.reason.contains("below 2600 mV, falling 13") == true, "\(alerts)")
        let battery = health.battery(of: "guide-7")
        #expect(battery?.level == .low && battery?.milliVolts == 2501)
        #expect(abs((battery?.trendPerWeek ?? 0) + 140) < 1, "\(String(describing: battery))")

        // A bounce to 2650 mV (a warm day) is no recovery: still low, nothing said.
        var t = Self.t0 + 11 * Self.day
        #expect(health.observe(TagHealth.Reading(t: t, milliVolts: 2650), of: "guide-7").isEmpty)
        #expect(health.observe(TagHealth.Reading(t: t + 3600, milliVolts: 2590), of: "guide-7").isEmpty)
        #expect(health.battery(of: "guide-7")?.level == .low)
        // A new cell: recovered, and the trend starts again.
        t += 2 * 3600
        #expect(health.observe(TagHealth.Reading(t: t, milliVolts: 3010), of: "guide-7").isEmpty)
        #expect(health.battery(of: "guide-7")?.level == .ok && health.battery(of: "guide-7")?.trendPerWeek == nil)
        // Low again later: said again.
        let again = health.observe(TagHealth.Reading(t: t + 3600, milliVolts: 2550), of: "guide-7")
        #expect(again.map(\.code) == ["tag-battery-low"])
    }

    @Test func telemetryGoingBackMeansANewBatteryOrAReboot() {
        var health = TagHealth()
        let reading = { (t: Double, count: UInt32, uptime: Double) in
            TagHealth.Reading(t: t, milliVolts: 2900, advertisingCount: count, uptime: uptime)
        }
        #expect(health.observe(reading(Self.t0, 10_000, 50_000), of: "asset-1").isEmpty)
        #expect(health.observe(reading(Self.t0 + 60, 10_600, 50_060), of: "asset-1").isEmpty)
        // A few seconds' jitter in the uptime is not a reboot.
        #expect(health.observe(reading(Self.t0 + 61, 10_610, 50_055), of: "asset-1").isEmpty)
        let reset = health.observe(reading(Self.t0 + 120, 12, 3), of: "asset-1")
        #expect(reset.map(\.code) == ["tag-tlm-reset"])
        #expect(reset.first?.reason.contains("advert count 10610 → 12") == true, "\(reset)")
        #expect(health.observe(reading(Self.t0 + 180, 600, 63), of: "asset-1").isEmpty, "counting up again")
        // A frame older than the last (a late batch) says nothing.
        #expect(health.observe(reading(Self.t0 + 100, 10_620, 50_100), of: "asset-1").isEmpty)
        #expect(health.telemetry(of: "asset-1")?.advertisingCount == 600)
    }

    /// Advertisements heard against sent: the best gateway's count over each whole window, beside the rate the tag's TLM
    /// frames say it sends at (or hub.yaml's interval for a tag without TLM).
    @Test func advertsHeardAreCountedPerWindowBesideTheRateSent() {
        var settings = TagHealth.Settings()
        settings.advertIntervalByRegion["carts"] = 2
        var health = TagHealth(settings: settings)
        let window = settings.advertWindowSeconds
        let start = (Self.t0 / window).rounded(.up) * window
        // A guide sending 2 a second; gw-a hears 3 in 4, gw-b 1 in 4; a TLM frame every 10th advert.
        for index in 0..<Int(2 * window * 2) {
            let t = start + Double(index) / 2
            if index % 4 != 3 { health.heard("guide-1", by: "gw-a", at: t) }
            if index % 4 == 0 { health.heard("guide-1", by: "gw-b", at: t) }
            if index % 10 == 0 {
                _ = health.observe(
                    TagHealth.Reading(
                        t: t, milliVolts: 2900, advertisingCount: UInt32(5000 + index), uptime: 1000 + Double(index) / 2
                    ),
                    of: "guide-1")
            }
        }
        // The first window is whole once the second began; the second is still being counted.
        let adverts = health.adverts(of: "guide-1")
        #expect(adverts == TagState.Adverts(seenPerMinute: 90, expectedPerMinute: 120, t: start + window))
        // A new cell: the rate sent starts again from its first frame, and is kept until two frames tell it anew.
        _ = health.observe(
            TagHealth.Reading(t: start + 2 * window, milliVolts: 3000, advertisingCount: 1, uptime: 0.5), of: "guide-1")
        _ = health.observe(
            TagHealth.Reading(t: start + 2 * window + 30, milliVolts: 3000, advertisingCount: 31, uptime: 30.5),
            of: "guide-1")
        #expect(health.adverts(of: "guide-1")?.expectedPerMinute == 120)
        _ = health.observe(
            TagHealth.Reading(t: start + 2 * window + 100, milliVolts: 3000, advertisingCount: 101, uptime: 100.5),
            of: "guide-1")
        #expect(health.adverts(of: "guide-1")?.expectedPerMinute == 60)

        // A cart (no TLM) in a region with a configured interval: 30 expected a minute; a gap of windows leaves the
        // last window heard as the figure.
        _ = health.seen("cart-1", region: "carts", zone: nil, gateway: "gw-a", at: start)
        for index in 0..<30 { health.heard("cart-1", by: "gw-a", at: start + Double(index) * 10) }
        #expect(health.adverts(of: "cart-1") == nil, "no whole window yet")
        health.heard("cart-1", by: "gw-a", at: start + 10 * window)
        #expect(
            health.adverts(of: "cart-1") == TagState.Adverts(seenPerMinute: 6, expectedPerMinute: 30, t: start + window)
        )
        // A tag without TLM nor a configured interval: heard only.
        for index in 0..<10 { health.heard("keys", by: "gw-a", at: start + Double(index)) }
        health.heard("keys", by: "gw-b", at: start + window)
        #expect(
            health.adverts(of: "keys") == TagState.Adverts(seenPerMinute: 2, expectedPerMinute: nil, t: start + window))
    }

    /// A window the hub began counting part-way through (its first sighting of the tag, after a restart or a gap) says
    /// nothing of the rate: the first figure is the next whole window's, not a low one. Sightings from windows long
    /// gone (an outbox drained after an outage) are not counted in the current one.
    @Test func advertsCountOnlyWholeWindowsAndNotADrainedOutbox() {
        var health = TagHealth(settings: TagHealth.Settings())
        let window = health.settings.advertWindowSeconds
        let start = (Self.t0 / window).rounded(.up) * window
        // Heard once a second from half-way through a window.
        for second in stride(from: window / 2, to: 3 * window + 1, by: 1) {
            health.heard("guide-1", by: "gw-a", at: start + second)
            if second == window {
                #expect(health.adverts(of: "guide-1") == nil, "the half window counted as whole")
            }
        }
        #expect(
            health.adverts(of: "guide-1")
                == TagState.Adverts(seenPerMinute: 60, expectedPerMinute: nil, t: start + 3 * window))
        // An hour of the same gateway's outbox arrives late, beside live sightings: the live window stays at 60.
        for second in stride(from: 3 * window + 1, to: 4 * window, by: 1) {
            health.heard("guide-1", by: "gw-a", at: start + second)
            health.heard("guide-1", by: "gw-a", at: start + second - 3600)
        }
        health.heard("guide-1", by: "gw-a", at: start + 4 * window)
        #expect(
            health.adverts(of: "guide-1")
                == TagState.Adverts(seenPerMinute: 60, expectedPerMinute: nil, t: start + 4 * window))
        // Silent after the first second of the next window (that window, counted whole, says so), back after a gap
        // part-way through a window: that window is not reported; the last whole one stays.
        for second in stride(from: 10 * window + 100, to: 11 * window, by: 1) {
            health.heard("guide-1", by: "gw-a", at: start + second)
        }
        health.heard("guide-1", by: "gw-a", at: start + 11 * window)
        #expect(
            health.adverts(of: "guide-1")
                == TagState.Adverts(seenPerMinute: 0.2, expectedPerMinute: nil, t: start + 5 * window))
    }

    @Test func aTagUnheardForItsRegionsTimeIsMissingOnceThenFound() {
        var settings = TagHealth.Settings()
        settings.missingAfterByRegion["carts"] = 3600
        var health = TagHealth(settings: settings)
        _ = health.check(at: Self.t0, named: [("guide-1", "guides"), ("never-heard", "guides")])
        _ = health.seen("guide-1", region: "guides", zone: "egypt", gateway: "gw-egypt", at: Self.t0 + 10)
        _ = health.seen("cart-3", region: "carts", zone: "aisle-2", gateway: "gw-aisle-2", at: Self.t0 + 10)

        #expect(health.check(at: Self.t0 + 3000).isEmpty)
        let carts = health.check(at: Self.t0 + 3700)
        #expect(carts.map(\.tag) == ["cart-3"] && carts.map(\.code) == ["tag-missing"])
        #expect(carts.first?.reason.contains("last in aisle-2, by gw-aisle-2") == true, "\(carts)")
        #expect(health.check(at: Self.t0 + 7200).isEmpty, "once")
        #expect(health.isMissing("cart-3"))

        let guides = health.check(at: Self.t0 + Self.day + 60)
        #expect(guides.map(\.tag) == ["guide-1", "never-heard"], "\(guides)")
        #expect(guides.last?.reason.contains("since the hub started") == true)

        let found = health.seen(
            "cart-3", region: "carts", zone: "tills", gateway: "gw-tills", at: Self.t0 + 2 * Self.day)
        #expect(found.map(\.code) == ["tag-found"] && found.first?.reason.contains("by gw-tills") == true)
        #expect(
            health.seen("cart-3", region: "carts", zone: "tills", gateway: nil, at: Self.t0 + 2 * Self.day + 1).isEmpty)
        #expect(health.lastSeen(of: "cart-3")?.zone == "tills" && health.lastSeen(of: "cart-3")?.gateway == "gw-tills")
        #expect(!health.isMissing("cart-3"))
    }
}
