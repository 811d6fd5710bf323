import BeaconConfig
import BeaconHub
import BeaconModel
import BeaconStore
import Testing

/// The hub's core with tags' health: a TLM frame in a batch feeds the tag's battery, alerts go out as
/// `alert` events naming the tag, and a named tag unheard for `missingAfterSeconds` is missing until heard again.
@Suite struct TagHealthCoreTests {
    static func tlmBatch(seq: UInt64, at t: Double, milliVolts: Int, count: UInt32) -> HubInput {
        .batch(
            SightingBatch(
                gateway: "gw-a", boot: "boot-1", seq: seq, sent: t, clockSynced: true,
                sightings: [
                    Sighting(
                        t: t, beacon: HubCoreTests.beacon, rssi: -65, txPower: -59,
                        extras: SightingExtras(
                            tlm: Telemetry(
                                version: 0, batteryMilliVolts: milliVolts, temperatureCelsius: 21.5,
                                advertisingCount: count, secondsSinceBoot: Double(count) / 10)))
                ]))
    }

    @Test func batteryAndResetAlertsNameTheTagOnce() throws {
        var core = try HubCoreTests.core(inference: "tagHealth: { batteryLowMilliVolts: 2500 }")
        let t0 = HubCoreTests.t0
        var events: [ZoneEvent] = []
        var states: [TagState] = []
        for (index, milliVolts) in [2700, 2600, 2480, 2470, 2460].enumerated() {
            let t = t0 + Double(index) * 10
            core.apply(
                Self.tlmBatch(seq: UInt64(index + 1), at: t, milliVolts: milliVolts, count: 1000 + UInt32(index)), at: t
            )
            core.tick(at: t + 1, connected: true)
            let out = core.takeOutgoing()
            events += HubCoreTests.events(out)
            states += HubCoreTests.tagStates(out)
        }
        // The retained state carries the battery: ok at first, low from the reading that crossed (published at once,
        // though the tag's zone did not change), with the rest of the TLM frame and where it was heard.
        #expect(states.first?.battery == TagState.Battery(milliVolts: 2700, level: .ok, t: t0))
        #expect(
            states.first?.telemetry?.advertisingCount == 1000 && states.first?.telemetry?.temperatureCelsius == 21.5)
        #expect(states.first?.lastSeenGateway == "gw-a" && states.first?.missing == nil)
        let crossed = try #require(states.first { $0.battery?.milliVolts == 2480 }, "\(states.map(\.battery))")
        #expect(crossed.battery?.level == .low && crossed.battery?.t == t0 + 20)
        let low = events.filter { $0.code == "tag-battery-low" }
        #expect(low.count == 1 && low.first?.tag == "tag-1" && low.first?.type == .alert, "\(events)")
        #expect(low.first?.reason.contains("2480 mV, below 2500 mV") == true, "\(low)")
        #expect(core.health.battery(of: "tag-1")?.level == .low)
        #expect(core.health.telemetry(of: "tag-1")?.temperature == 21.5)

        // The battery changed: the count starts again.
        core.apply(Self.tlmBatch(seq: 6, at: t0 + 60, milliVolts: 3000, count: 3), at: t0 + 60)
        core.tick(at: t0 + 61, connected: true)
        let reset = HubCoreTests.events(core.takeOutgoing()).filter { $0.code == "tag-tlm-reset" }
        #expect(reset.map(\.tag) == ["tag-1"], "\(reset)")
        #expect(core.health.battery(of: "tag-1")?.level == .ok)
    }

    /// The hub keeps tags' health in its database: a restarted hub knows the battery (and its hourly readings) and
    /// does not say `tag-battery-low` again for a battery still low.
    @Test func aRestartedHubRemembersTheBatteryAndSaysNothingTwice() throws {
        let settings = "tagHealth: { batteryLowMilliVolts: 2500 }"
        var core = try HubCoreTests.core(inference: settings, persistence: HubCore.Persistence())
        let t0 = HubCoreTests.t0
        core.apply(Self.tlmBatch(seq: 1, at: t0, milliVolts: 2480, count: 1000), at: t0)
        core.tick(at: t0 + 1, connected: true)
        #expect(HubCoreTests.events(core.takeOutgoing()).contains { $0.code == "tag-battery-low" })
        let journal = core.takeJournal()
        let row = try #require(journal.tagHealth.first, "the health was journalled")
        #expect(row.liveTag == "tag-1" && row.batteryLow && row.milliVolts == 2480 && row.advertisingCount == 1000)
        #expect(row.lastGateway == "gw-a" && !row.missing)
        #expect(
            journal.batteryReadings == [
                HubJournal.BatteryReading(key: "tag-1", hour: Int64((t0 / 3600).rounded(.down)), milliVolts: 2480)
            ])
        // Nothing new: nothing journalled again.
        core.tick(at: t0 + 2, connected: true)
        #expect(core.takeJournal().tagHealth.isEmpty)

        var recovered = HubStore.Recovered()
        recovered.tagHealth = journal.tagHealth
        recovered.batteryReadings = journal.batteryReadings
        var restarted = try HubCoreTests.core(inference: settings, persistence: HubCore.Persistence())
        restarted.recover(recovered, at: t0 + 100)
        #expect(restarted.health.battery(of: "tag-1") == TagHealth.Battery(milliVolts: 2480, level: .low, t: t0))
        #expect(restarted.health.lastSeen(of: "tag-1")?.gateway == "gw-a")
        restarted.apply(Self.tlmBatch(seq: 2, at: t0 + 110, milliVolts: 2470, count: 1100), at: t0 + 110)
        restarted.tick(at: t0 + 111, connected: true)
        let events = HubCoreTests.events(restarted.takeOutgoing())
        #expect(!events.contains { $0.code?.hasPrefix("tag-") == true }, "\(events)")
        #expect(restarted.health.battery(of: "tag-1")?.milliVolts == 2470)
    }

    /// A stopping hub journals every tag's health as it is (`journalAllHealth`), though its last save was seconds ago;
    /// and a restarted hub judges a tag missing only on silence it saw itself: a tag whose saved sighting is minutes
    /// old (a crash, or a save minutes apart) is not missing at the start, only once unheard for `missingAfterSeconds`
    /// of the new hub's time.
    @Test func aStoppingHubSavesEveryTagAndARestartedOneJudgesOnlyTheSilenceItSaw() throws {
        let settings = "tagHealth: { missingAfterSeconds: 60 }"
        var core = try HubCoreTests.core(inference: settings, persistence: HubCore.Persistence())
        let t0 = HubCoreTests.t0
        core.apply(Self.tlmBatch(seq: 1, at: t0, milliVolts: 2950, count: 1000), at: t0)
        core.tick(at: t0 + 1, connected: true)
        #expect(core.takeJournal().tagHealth.first?.milliVolts == 2950)
        // Heard on for two minutes: saved again only every TagHealth.saveSeconds, so not yet.
        for index in 1...24 {
            let t = t0 + Double(index) * 5
            let batch = Self.tlmBatch(seq: UInt64(index + 1), at: t, milliVolts: 2940, count: 1000 + UInt32(index))
            core.apply(batch, at: t)
            core.tick(at: t + 1, connected: true)
        }
        _ = core.takeOutgoing()
        #expect(core.takeJournal().tagHealth.isEmpty, "saved minutes apart while nothing but its sightings moved")
        core.journalAllHealth(at: t0 + 121)
        let stopped = core.takeJournal()
        let row = try #require(stopped.tagHealth.first, "a stop saves the tag's health")
        let seen = try #require(row.lastSeen)
        #expect(seen >= t0 + 100 && row.milliVolts == 2940 && row.lastZone != nil, "\(row)")
        #expect(stopped.batteryReadings.contains { $0.milliVolts == 2940 }, "\(stopped.batteryReadings)")

        // Restarted from a save three minutes old (as after a crash): not missing at its start, nor a minute later
        // while it is heard; once unheard for 60 s of its own time, missing.
        var saved = row
        saved.lastSeen = t0
        var recovered = HubStore.Recovered()
        recovered.tagHealth = [saved]
        var restarted = try HubCoreTests.core(inference: settings, persistence: HubCore.Persistence())
        let start = t0 + 180
        restarted.recover(recovered, at: start)
        var events: [ZoneEvent] = []
        restarted.tick(at: start + 1, connected: true)
        events += HubCoreTests.events(restarted.takeOutgoing())
        #expect(!events.contains { $0.code?.hasPrefix("tag-") == true }, "a false alert at the start: \(events)")
        for index in 0..<12 {
            let t = start + 2 + Double(index) * 5
            restarted.apply(
                Self.tlmBatch(seq: UInt64(100 + index), at: t, milliVolts: 2940, count: 2000 + UInt32(index)), at: t)
            restarted.tick(at: t + 1, connected: true)
            events += HubCoreTests.events(restarted.takeOutgoing())
        }
        #expect(!events.contains { $0.code?.hasPrefix("tag-") == true }, "a false alert while heard: \(events)")
        let lastHeard = start + 2 + 11 * 5
        for t in stride(from: lastHeard + 5, through: lastHeard + 90, by: 5) {
            restarted.tick(at: t, connected: true)
            events += HubCoreTests.events(restarted.takeOutgoing())
        }
        let missing = events.filter { $0.code == "tag-missing" }
        #expect(missing.count == 1 && !events.contains { $0.code == "tag-found" }, "\(events)")
        #expect((missing.first?.t ?? 0) >= lastHeard + 55, "\(missing)")

        // A tag restored and never heard again: missing 60 s after the start, saying so.
        var silent = try HubCoreTests.core(inference: settings, persistence: HubCore.Persistence())
        silent.recover(recovered, at: start)
        var silentEvents: [ZoneEvent] = []
        for t in stride(from: start + 1, through: start + 90, by: 5) {
            silent.tick(at: t, connected: true)
            silentEvents += HubCoreTests.events(silent.takeOutgoing())
        }
        let silentMissing = silentEvents.filter { $0.code == "tag-missing" }
        #expect(silentMissing.count == 1 && (silentMissing.first?.t ?? 0) >= start + 60, "\(silentEvents)")
        #expect(silentMissing.first?.reason.contains("since the hub started") == true, "\(silentMissing)")
    }

    /// Saves are minutes apart: the reading that ends an hour may come after that hour was last saved. The next save
    /// writes the hour before again, with its last reading.
    @Test func anHoursLastReadingIsSavedWithTheNextHour() throws {
        let settings = "tagHealth: { batteryLowMilliVolts: 2500 }"
        var core = try HubCoreTests.core(inference: settings, persistence: HubCore.Persistence())
        let t0 = HubCoreTests.t0
        let next = ((t0 + 300) / 3600).rounded(.up) * 3600
        let hour = Int64(next / 3600)
        for (seq, (t, milliVolts)) in [(next - 200, 2600), (next - 100, 2590), (next + 150, 2580)].enumerated() {
            core.apply(
                Self.tlmBatch(seq: UInt64(seq + 1), at: t, milliVolts: milliVolts, count: UInt32(1000 + seq)), at: t)
            core.tick(at: t + 1, connected: true)
        }
        let readings = core.takeJournal().batteryReadings
        #expect(
            readings.suffix(2) == [
                HubJournal.BatteryReading(key: "tag-1", hour: hour - 1, milliVolts: 2590),
                HubJournal.BatteryReading(key: "tag-1", hour: hour, milliVolts: 2580),
            ], "\(readings)")
    }

    @Test func aNamedTagUnheardIsMissingThenFound() throws {
        var core = try HubCoreTests.core(inference: "tagHealth: { missingAfterSeconds: 120 }")
        let t0 = HubCoreTests.t0
        // Heard in room a for 20 s, long enough to be placed there.
        for second in 1...20 {
            let t = t0 + Double(second)
            core.apply(HubCoreTests.batch(seq: UInt64(second), at: t), at: t)
            core.tick(at: t + 0.5, connected: true)
        }
        #expect(core.health.lastSeen(of: "tag-1")?.gateway == "gw-a")
        #expect(core.health.lastSeen(of: "tag-1")?.zone == "a")
        var events: [ZoneEvent] = []
        // Every 30 s for 5 minutes, nothing heard (the gateways' heartbeats keep them online).
        var outgoingSoFar: [HubCore.Outgoing] = []
        for step in 1...10 {
            let t = t0 + 20 + Double(step) * 30
            core.apply(.gatewayStatus(Self.status("gw-a", at: t)), at: t)
            core.apply(.gatewayStatus(Self.status("gw-b", at: t)), at: t)
            core.tick(at: t, connected: true)
            let out = core.takeOutgoing()
            outgoingSoFar += out
            events += HubCoreTests.events(out)
        }
        let missing = events.filter { $0.code == "tag-missing" }
        #expect(missing.count == 1 && missing.first?.tag == "tag-1", "\(events.map { $0.code ?? $0.type.rawValue })")
        #expect(missing.first?.reason.contains("last in a, by gw-a") == true, "\(missing)")
        // Its retained state says so, and where it was last (published again without being heard: not found).
        let said = HubCoreTests.tagStates(outgoingSoFar).last
        #expect(
            said?.missing == true && said?.lastSeenZone == "a" && said?.lastSeenGateway == "gw-a",
            "\(String(describing: said))")
        #expect(!events.contains { $0.code == "tag-found" })
        // Heard again: found, once.
        let back = t0 + 400
        core.apply(HubCoreTests.batch(seq: 21, at: back), at: back)
        core.tick(at: back + 1, connected: true)
        core.apply(HubCoreTests.batch(seq: 22, at: back + 2), at: back + 2)
        core.tick(at: back + 3, connected: true)
        let found = HubCoreTests.events(core.takeOutgoing()).filter { $0.code == "tag-found" }
        #expect(found.map(\.tag) == ["tag-1"], "\(found)")
    }

    static func status(_ gateway: GatewayID, at t: Double) -> GatewayStatus {
        GatewayStatus(
            gateway: gateway, state: .online, boot: "boot-1", t: t, agentVersion: "test", clockSynced: true,
            heartbeatSeconds: 10)
    }

    @Test func settingsAreCheckedAndNamed() throws {
        #expect(throws: ConfigError.self) {
            try ConfigLoader.decode(
                HubTagHealthSettings.self, from: "batteryLowMilliVolts: 2600\nbatteryRecoveredMilliVolts: 2500\n",
                file: "hub.yaml")
        }
        #expect(throws: ConfigError.self) {
            try ConfigLoader.decode(HubTagHealthSettings.self, from: "missingAfterSecond: 3600\n", file: "hub.yaml")
        }
        let settings = try ConfigLoader.decode(
            HubTagHealthSettings.self,
            from: "missingAfterSeconds: 86400\nmissingAfterSecondsByRegion: { carts: 3600 }\n",
            file: "hub.yaml"
        ).settings
        #expect(settings.missingAfterSeconds == 86_400 && settings.missingAfterByRegion == ["carts": 3600])
        #expect(settings.batteryRecoveredMilliVolts == 2800)
        for wrong in [
            "advertIntervalSeconds: 0", "advertIntervalSecondsByRegion: { carts: -1 }", "advertWindowSeconds: 5",
        ] {
            #expect(throws: ConfigError.self, "\(wrong)") {
                try ConfigLoader.decode(HubTagHealthSettings.self, from: wrong + "\n", file: "hub.yaml")
            }
        }
        let adverts = try ConfigLoader.decode(
            HubTagHealthSettings.self,
            from: "advertIntervalSeconds: 1\nadvertIntervalSecondsByRegion: { carts: 5 }\nadvertWindowSeconds: 60\n",
            file: "hub.yaml"
        ).settings
        #expect(adverts.advertIntervalSeconds == 1 && adverts.advertIntervalByRegion == ["carts": 5])
        #expect(adverts.advertWindowSeconds == 60)
    }
}
