import BeaconStore
import BrokerTestSupport
import Foundation
import Testing

/// The hub's history database: migrations, the ledger and acknowledgements, visits and transitions from moves, dwell
/// statistics, forget, retention and identity against both backends (a real SQLite file, a real PostgreSQL server);
/// a full disk and the file's writer lock against SQLite.
@Suite struct HubStoreTests {
    /// Deleted with the suite's instance, which Swift Testing drops once the test has ended, pass or fail.
    let temporaryDirectory: TemporaryDirectory
    var directory: URL { temporaryDirectory.url }
    var path: String { directory.appendingPathComponent("hub.db").path }

    init() throws {
        temporaryDirectory = try TemporaryDirectory(prefix: "hubstore")
    }

    static func batch(_ seq: Int64, gateway: String = "gw-a", boot: String = "b1", sightings: Int = 3)
        -> HubJournal.Batch
    {
        HubJournal.Batch(gateway: gateway, boot: boot, seq: seq, received: 1000 + Double(seq), sightings: sightings)
    }

    static func move(_ tag: String, _ from: String?, _ to: String?, at t: Double, confidence: Double = 0.9)
        -> HubJournal.Move
    {
        HubJournal.Move(
            key: tag, beaconKey: "beacon-\(tag)", liveTag: tag, beacon: "beacon-\(tag)", region: nil, from: from,
            to: to, t: t, confidence: confidence)
    }

    static func journal(batches: [HubJournal.Batch] = [], moves: [HubJournal.Move] = []) -> HubJournal {
        var journal = HubJournal()
        journal.batches = batches
        journal.moves = moves
        return journal
    }

    @Test(arguments: 0..<HubStore.migrations.count)
    func upgradesADatabaseOfEveryEarlierSchema(applied: Int) async throws {
        // A database as an earlier release left it: the first `applied` migrations, with a row where there are tables.
        var earlier = StoreSchema()
        for (identifier, sql) in HubStore.migrations.prefix(applied) { earlier.register(identifier, sql: sql) }
        let old = try StoreDatabase(path: path, schema: earlier)
        if applied > 0 { try await old.execute("INSERT INTO meta (key, value) VALUES ('site', 'museum')") }
        try old.close()

        let store = try HubStore(path: path)
        #expect(try StoreSchema.appliedMigrations(in: store.database) == HubStore.migrations.map(\.identifier).sorted())
        #expect(try await store.database.integrityCheck() == "ok")
        if applied > 0 { #expect(try await store.meta("site") == "museum") }
        _ = try await store.commit(Self.journal(batches: [Self.batch(1)]), at: 2000)
    }

    @Test func refusesADatabaseFromANewerRelease() async throws {
        var newer = HubStore.schema
        newer.register("hub-999", sql: "CREATE TABLE future (x)")
        try StoreDatabase(path: path, schema: newer).close()
        #expect {
            _ = try HubStore(path: path)
        } throws: { error in
            (error as? StoreError)?.code == .newerSchema && "\(error)".contains("newer BeaconTracker")
        }
        #expect(throws: StoreError.self) { _ = try HubStore(readingFrom: path) }
    }

    @Test func aSecondWriterIsRefusedWhileTheFirstHoldsTheFile() throws {
        let first = try HubStore(path: path)
        #expect {
            _ = try HubStore(path: path)
        } throws: { error in
            (error as? StoreError)?.code == .locked
        }
        // Readers need no lock.
        _ = try HubStore(readingFrom: path)
        try first.close()
    }

    @Test(arguments: StoreBackend.allCases)
    func acknowledgementsCoverOnlyContiguousCommittedOrLostBatches(backend: StoreBackend) async throws {
        let store = try await backend.open(in: directory)
        var result = try await store.commit(
            Self.journal(batches: [Self.batch(1), Self.batch(2), Self.batch(4)]), at: 2000)
        #expect(result.acks == [HubStore.Ack(gateway: "gw-a", boot: "b1", seq: 2)])
        result = try await store.commit(Self.journal(batches: [Self.batch(3)]), at: 2001)
        #expect(result.acks == [HubStore.Ack(gateway: "gw-a", boot: "b1", seq: 4)])
        var lost = Self.journal(batches: [Self.batch(9)])
        lost.lost = [HubJournal.LostBatches(gateway: "gw-a", boot: "b1", first: 5, last: 7, t: 2002)]
        result = try await store.commit(lost, at: 2002)
        #expect(result.acks == [HubStore.Ack(gateway: "gw-a", boot: "b1", seq: 7)], "8 is neither committed nor lost")
        // What a restarted hub reads back: the acknowledgement and the batch committed beyond it.
        let recovered = try await store.recover()
        #expect(recovered.acks == [HubStore.Ack(gateway: "gw-a", boot: "b1", seq: 7)])
        #expect(recovered.committedBeyondAck == [HubStore.Ack(gateway: "gw-a", boot: "b1", seq: 9)])
        #expect(try await store.integer("SELECT sum(sightings) FROM batches") == 15)
    }

    /// `beacon-hub serve` draws the plan from them: a gateway placed from the dashboard where it was placed.
    @Test(arguments: StoreBackend.allCases)
    func theGatewaysAreReadBackWhereTheHubLastPlacedThem(backend: StoreBackend) async throws {
        let store = try await backend.open(in: directory)
        try await store.adopt(site: "museum", keyID: nil)
        #expect(try await store.gateways().isEmpty)
        let zones: [HubStore.ZoneRow] = [("entrance", "Entrance"), ("hall", nil)]
        try await store.describeVenue(zones: zones, gateways: [("gw-b", nil, 3, 4), ("gw-a", "entrance", 1, 2)])
        try await store.describeVenue(zones: zones, gateways: [("gw-a", "hall", 5.5, 6.25), ("gw-b", nil, 3, 4)])
        let rows = try await store.gateways()
        #expect(rows.map(\.id) == ["gw-a", "gw-b"])
        #expect(rows.map(\.zone) == ["hall", nil])
        #expect(rows.map(\.x) == [5.5, 3] && rows.map(\.y) == [6.25, 4])
    }

    @Test(arguments: StoreBackend.allCases)
    func anAcknowledgementAdoptedFromAnotherHubIsContinued(backend: StoreBackend) async throws {
        let store = try await backend.open(in: directory)
        var journal = Self.journal(batches: [Self.batch(101), Self.batch(102)])
        journal.adopted = [HubJournal.AdoptedAck(gateway: "gw-a", boot: "b1", seq: 100, t: 1000)]
        let result = try await store.commit(journal, at: 2000)
        #expect(result.acks == [HubStore.Ack(gateway: "gw-a", boot: "b1", seq: 102)])
        // An older acknowledgement read later does not move it back.
        var older = HubJournal()
        older.adopted = [HubJournal.AdoptedAck(gateway: "gw-a", boot: "b1", seq: 50, t: 1001)]
        _ = try await store.commit(older, at: 2001)
        #expect(try await store.recover().acks == [HubStore.Ack(gateway: "gw-a", boot: "b1", seq: 102)])
    }

    @Test(arguments: StoreBackend.allCases)
    func movesBecomeVisitsTransitionsAndDwellStatistics(backend: StoreBackend) async throws {
        let store = try await backend.open(in: directory, tripGapSeconds: 120)
        let hour = 1_800_000_000.0  // an hour boundary (1_800_000_000 = 500_000 × 3600)
        let moves = [
            Self.move("t1", nil, "a", at: hour + 10),
            Self.move("t2", nil, "a", at: hour + 20),
            Self.move("t1", "a", "b", at: hour + 70, confidence: 0.8),  // 60 s in a, straight into b
            Self.move("t2", "a", nil, at: hour + 50),  // 30 s in a, then gone
            Self.move("t1", "b", nil, at: hour + 100),  // 30 s in b
            Self.move("t1", nil, "c", at: hour + 160),  // back 60 s later: same trip (gap 120 s)
            Self.move("t2", nil, "c", at: hour + 500),  // 450 s later: a new trip, no transition
        ]
        _ = try await store.commit(Self.journal(moves: moves), at: hour + 501)
        let visits = try await store.visits(HubStore.VisitFilter())
        #expect(
            visits.map { "\($0.tag) \($0.zone) \($0.duration.map { Int($0) } ?? -1)" } == [
                "t1 a 60", "t2 a 30", "t1 b 30", "t1 c -1", "t2 c -1",
            ])
        #expect(visits[0].confidence == 0.8, "the lower of the enter and exit probabilities")
        let matrix = try await store.transitionMatrix()
        #expect(
            matrix.map { "\($0.from)>\($0.to) \($0.count) \(Int($0.medianTransit))" }.sorted() == [
                "a>b 1 0", "b>c 1 60",
            ])
        let dwell = try await store.dwell(by: .hour)
        #expect(dwell.count == 2)
        let a = try #require(dwell.first { $0.zone == "a" })
        #expect(a.start == hour && a.statistics.visits == 2 && a.statistics.tags == 2 && a.statistics.total == 90)
        #expect(a.statistics.mean == 45 && a.statistics.median == 45 && a.statistics.p90 == 57)
        // Per zone over the whole history: the same figures (PostgreSQL computes these on the server).
        let byZone = try await store.dwell(by: .zone)
        #expect(byZone.map(\.zone) == ["a", "b"])
        #expect(byZone[0].statistics == a.statistics)
        let byTag = try await store.dwell(by: .tag, zone: "a")
        #expect(byTag.map { "\($0.tag ?? "") \($0.zone ?? "") \(Int($0.statistics.total))" } == ["t1 a 60", "t2 a 30"])
        #expect(try await store.routes(top: 5, length: 3).map(\.zones) == [["a", "b", "c"]])
        let occupancy = try await store.occupancy(at: hour + 600)
        #expect(occupancy.map(\.zone) == ["c"] && occupancy[0].tags == ["t1", "t2"])
        let live = try await store.recover().liveTags
        #expect(live.map { "\($0.tag) \($0.zone) \(Int($0.since - hour))" } == ["t1 c 160", "t2 c 500"])
    }

    @Test(arguments: StoreBackend.allCases)
    func anUnknownTagKeepsItsVisitOpenAndSuspectMarksTheVisit(backend: StoreBackend) async throws {
        let store = try await backend.open(in: directory)
        var journal = Self.journal(moves: [Self.move("t1", nil, "a", at: 100)])
        journal.events = [
            HubJournal.Event(
                t: 150, type: "suspect", key: "t1", liveTag: "t1", zone: "b", previousZone: "a", confidence: 0.9,
                dwell: nil, region: nil, code: nil, gateway: nil, reason: "faster than walking"),
            HubJournal.Event(
                t: 160, type: "unknown", key: "t1", liveTag: "t1", zone: "a", previousZone: nil, confidence: 0.9,
                dwell: nil, region: nil, code: nil, gateway: nil, reason: "gateway offline"),
        ]
        _ = try await store.commit(journal, at: 200)
        let visit = try #require(try await store.visits(HubStore.VisitFilter(tag: "t1")).first)
        #expect(visit.exit == nil && visit.suspect)
        #expect(try await store.recover().liveTags.map(\.state) == ["unknown"])
        #expect(try await store.integer("SELECT count(*) FROM events") == 2)
    }

    @Test(arguments: StoreBackend.allCases)
    func forgetDeletesEveryRowOfATagAndRecomputesDwell(backend: StoreBackend) async throws {
        let store = try await backend.open(in: directory)
        var journal = Self.journal(moves: [
            Self.move("t1", nil, "a", at: 100), Self.move("t2", nil, "a", at: 100),
            Self.move("t1", "a", "b", at: 130), Self.move("t2", "a", "b", at: 200),
        ])
        journal.sightings = [
            HubJournal.Sighting(t: 100, gateway: "gw-a", beaconKey: "beacon-t1", rssi: -60, txPower: -59),
            HubJournal.Sighting(t: 100, gateway: "gw-a", beaconKey: "beacon-t2", rssi: -61, txPower: -59),
        ]
        journal.events = [
            HubJournal.Event(
                t: 130, type: "exit", key: "t1", liveTag: "t1", zone: "a", previousZone: nil, confidence: 0.9,
                dwell: 30, region: nil, code: nil, gateway: nil, reason: "moved")
        ]
        _ = try await store.commit(journal, at: 300)
        #expect(try await store.dwell(by: .hour).first?.statistics.total == 130)
        let deleted = try await store.forget(key: "t1", liveTag: "t1", beaconKey: nil)
        #expect(deleted["visits"] == 2 && deleted["transitions"] == 1 && deleted["events"] == 1)
        #expect(deleted["sightings"] == 1 && deleted["tags"] == 1 && deleted["live_tags"] == 1)
        for table in ["visits", "transitions", "events", "tags", "live_tags"] {
            #expect(try await store.integer("SELECT count(*) FROM \(table) WHERE tag = 't1'") == 0)
        }
        let dwell = try #require(try await store.dwell(by: .hour).first)
        #expect(dwell.statistics.total == 100 && dwell.statistics.visits == 1 && dwell.statistics.tags == 1)
    }

    @Test(arguments: StoreBackend.allCases)
    func rawSightingsPastTheirRetentionArePruned(backend: StoreBackend) async throws {
        let store = try await backend.open(in: directory)
        var journal = HubJournal()
        journal.sightings = (0..<10).map {
            HubJournal.Sighting(t: Double($0) * 100, gateway: "gw-a", beaconKey: "x", rssi: -70, txPower: nil)
        }
        journal.batches = [Self.batch(1, sightings: 10)]
        _ = try await store.commit(journal, at: 1000)
        #expect(try await store.pruneSightings(before: 450) == 5)
        #expect(try await store.integer("SELECT min(t) FROM sightings") == 500)
        #expect(try await store.integer("SELECT count(*) FROM batches") == 1, "the ledger is kept")
    }

    @Test func aFullDiskFailsTheWholeCommitAndTheRetrySucceedsOnceThereIsSpace() async throws {
        let store = try HubStore(path: path)
        _ = try await store.commit(Self.journal(batches: [Self.batch(1)]), at: 100)
        // SQLite's own limit on the file's pages stands in for the disk: the same SQLITE_FULL a full disk gives.
        let pages = try #require(try await store.database.fetchInteger("PRAGMA page_count"))
        try await store.database.execute("PRAGMA max_page_count = \(pages)")
        var big = HubJournal()
        big.batches = (2...2001).map { Self.batch($0) }
        big.sightings = (0..<5000).map {
            HubJournal.Sighting(t: Double($0), gateway: "gw-a", beaconKey: "beacon-\($0)", rssi: -70, txPower: nil)
        }
        await #expect {
            _ = try await store.commit(big, at: 200)
        } throws: { error in
            (error as? StoreError)?.code == .diskFull && "\(error)".contains("free space")
        }
        #expect(try await store.database.fetchInteger("SELECT count(*) FROM batches") == 1, "nothing half-written")
        #expect(try await store.database.integrityCheck() == "ok")
        try await store.database.execute("PRAGMA max_page_count = 1073741823")
        let result = try await store.commit(big, at: 300)
        #expect(result.acks == [HubStore.Ack(gateway: "gw-a", boot: "b1", seq: 2001)])
        #expect(try await store.database.integrityCheck() == "ok")
    }

    @Test(arguments: StoreBackend.allCases)
    func aDatabaseKeepsItsSiteAndPseudonymisation(backend: StoreBackend) async throws {
        let store = try await backend.open(in: directory)
        try await store.adopt(site: "museum", keyID: nil)
        try await store.adopt(site: "museum", keyID: nil)
        await #expect(throws: StoreError.self) { try await store.adopt(site: "shop", keyID: nil) }
        await #expect {
            try await store.adopt(site: "museum", keyID: "abcd1234")
        } throws: { error in
            "\(error)".contains("real tag ids")
        }
    }
}
