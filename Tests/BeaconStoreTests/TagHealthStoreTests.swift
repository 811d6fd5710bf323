import BeaconStore
import BrokerTestSupport
import Foundation
import Testing

/// Tags' health in the history on both databases: each tag's row upserted and read back at start, its hourly
/// battery readings kept one per hour (the newest of the hour wins) for eight weeks back, pruned by retention, and
/// forgotten with the tag.
@Suite struct TagHealthStoreTests {
    /// For the SQLite history; deleted with the suite's instance, which Swift Testing drops once the test has ended.
    let temporaryDirectory: TemporaryDirectory
    var directory: URL { temporaryDirectory.url }

    init() throws {
        temporaryDirectory = try TemporaryDirectory(prefix: "store")
    }

    static func row(_ tag: String, milliVolts: Int?, low: Bool = false, missing: Bool = false)
        -> HubJournal.TagHealthRow
    {
        HubJournal.TagHealthRow(
            liveTag: tag, region: "guides", lastSeen: 1_000.5, lastZone: "egypt", lastGateway: "gw-egypt",
            batteryLow: low, missing: missing, tlmT: milliVolts == nil ? nil : 990, milliVolts: milliVolts,
            temperature: milliVolts == nil ? nil : 21.25, advertisingCount: milliVolts == nil ? nil : 4_000_000_000,
            uptime: milliVolts == nil ? nil : 86_400.5)
    }

    @Test(arguments: StoreBackend.allCases)
    func healthAndHourlyBatteryAreKeptPrunedAndForgotten(backend: StoreBackend) async throws {
        let store = try await backend.open(in: directory)
        try await store.adopt(site: "museum", keyID: nil)
        let now = Date().timeIntervalSince1970
        let hour = Int64((now / 3600).rounded(.down))
        var journal = HubJournal()
        journal.tagHealth = [Self.row("guide-1", milliVolts: 2700), Self.row("keys", milliVolts: nil)]
        journal.batteryReadings = [
            .init(key: "guide-1", hour: hour - 2, milliVolts: 2720),
            .init(key: "guide-1", hour: hour - 1, milliVolts: 2710),
            // Ten weeks back: kept until pruned, but not read back at start (the trend looks at eight).
            .init(key: "guide-1", hour: hour - 24 * 70, milliVolts: 2990),
        ]
        _ = try await store.commit(journal, at: now)
        // Later: the tag went low and missing; the hour's reading is replaced.
        var later = HubJournal()
        later.tagHealth = [Self.row("guide-1", milliVolts: 2590, low: true, missing: true)]
        later.batteryReadings = [.init(key: "guide-1", hour: hour - 1, milliVolts: 2590)]
        _ = try await store.commit(later, at: now + 1)

        let recovered = try await store.recover(recentBoots: 4)
        #expect(recovered.tagHealth.map(\.liveTag) == ["guide-1", "keys"])
        #expect(recovered.tagHealth.first == Self.row("guide-1", milliVolts: 2590, low: true, missing: true))
        #expect(recovered.tagHealth.last == Self.row("keys", milliVolts: nil))
        #expect(
            recovered.batteryReadings == [
                .init(key: "guide-1", hour: hour - 2, milliVolts: 2720),
                .init(key: "guide-1", hour: hour - 1, milliVolts: 2590),
            ])

        // Retention: the ten-week-old hour goes, the recent ones stay.
        #expect(try await store.pruneBatteryReadings(before: now - 30 * 86_400) == 1)
        #expect(try await store.pruneBatteryReadings(before: now - 30 * 86_400) == 0)

        // Forgetting the tag removes its health and its readings.
        let forgotten = try await store.forget(key: "guide-1", liveTag: "guide-1", beaconKey: nil)
        #expect(forgotten["tag_health"] == 1 && forgotten["battery_hourly"] == 2, "\(forgotten)")
        let after = try await store.recover(recentBoots: 4)
        #expect(after.tagHealth.map(\.liveTag) == ["keys"] && after.batteryReadings.isEmpty)
        try store.close()
    }

    /// A commit that failed is retried with the next save's journal appended (`HubJournal.append`): the same tag's
    /// health and the same tag and hour's reading then come twice, and the later wins (PostgreSQL's bulk upsert refuses
    /// a key twice in one statement, which would fail every retry).
    @Test(arguments: StoreBackend.allCases)
    func aRetriedCommitWithTwoSavesOfTheSameHourGoesThrough(backend: StoreBackend) async throws {
        let store = try await backend.open(in: directory)
        try await store.adopt(site: "museum", keyID: nil)
        let now = Date().timeIntervalSince1970
        let hour = Int64((now / 3600).rounded(.down))
        var failed = HubJournal()
        failed.tagHealth = [Self.row("guide-1", milliVolts: 2700), Self.row("keys", milliVolts: nil)]
        failed.batteryReadings = [.init(key: "guide-1", hour: hour, milliVolts: 2700)]
        var next = HubJournal()
        next.tagHealth = [Self.row("guide-1", milliVolts: 2650, low: true)]
        next.batteryReadings = [
            .init(key: "guide-1", hour: hour, milliVolts: 2650), .init(key: "guide-2", hour: hour, milliVolts: 2900),
        ]
        failed.append(next)
        #expect(failed.tagHealth.map(\.liveTag) == ["keys", "guide-1"])
        #expect(failed.batteryReadings.map(\.milliVolts) == [2650, 2900])

        // And one journal that holds the same hour twice (a tag saved twice between commits) as it is.
        failed.batteryReadings.insert(.init(key: "guide-2", hour: hour, milliVolts: 2950), at: 0)
        _ = try await store.commit(failed, at: now)
        let recovered = try await store.recover(recentBoots: 4)
        #expect(recovered.tagHealth.first == Self.row("guide-1", milliVolts: 2650, low: true))
        #expect(
            recovered.batteryReadings == [
                .init(key: "guide-1", hour: hour, milliVolts: 2650),
                .init(key: "guide-2", hour: hour, milliVolts: 2900),
            ])
        try store.close()
    }
}
