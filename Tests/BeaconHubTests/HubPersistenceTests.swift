import BeaconConfig
import BeaconHub
import BeaconModel
import BeaconStore
import BrokerTestSupport
import Foundation
import Simulator
import Testing
import ZoneInference

/// The hub with its history database (real SQLite files): acknowledgements after the commit, restarts mid-visit, a
/// full disk, and what replayed data looks like in the tables.
@Suite struct HubPersistenceTests {
    static let beacon = "ibeacon:e2c56db5-dffb-48d2-b060-d0f5a71096e0:1:1"
    static let t0 = 1_800_000_000.0
    /// Deleted with the suite's instance, which Swift Testing drops once the test has ended, pass or fail.
    let temporaryDirectory: TemporaryDirectory
    var directory: URL { temporaryDirectory.url }
    var path: String { directory.appendingPathComponent("hub.db").path }

    init() throws {
        temporaryDirectory = try TemporaryDirectory(prefix: "persist")
    }

    /// A row of four rooms a–d, one gateway each, a door between neighbours and from outside into a.
    static let rowVenue = """
        site: row
        zones:
          - { id: a, rect: { x: 0, y: 0, width: 20, height: 8 } }
          - { id: b, rect: { x: 20, y: 0, width: 20, height: 8 } }
          - { id: c, rect: { x: 40, y: 0, width: 20, height: 8 } }
          - { id: d, rect: { x: 60, y: 0, width: 20, height: 8 } }
        doors:
          - { between: [outside, a], at: [10, 0] }
          - { between: [a, b], at: [20, 4] }
          - { between: [b, c], at: [40, 4] }
          - { between: [c, d], at: [60, 4] }
        gateways:
          - { id: gw-a, zone: a, position: [10, 4] }
          - { id: gw-b, zone: b, position: [30, 4] }
          - { id: gw-c, zone: c, position: [50, 4] }
          - { id: gw-d, zone: d, position: [70, 4] }
        """

    func configuration(store: String = "") throws -> HubConfiguration {
        try Self.rowVenue.write(
            toFile: directory.appendingPathComponent("venue.yaml").path, atomically: true, encoding: .utf8)
        let file = directory.appendingPathComponent("hub.yaml").path
        try """
        hub: hub-1
        site: row
        venue: venue.yaml
        tags: [{ id: tag-1, beacon: "\(Self.beacon)" }]
        live: { heartbeatSeconds: 10, gapTimeoutSeconds: 30 }
        store: { path: hub.db\(store) }
        """.write(toFile: file, atomically: true, encoding: .utf8)
        return try HubConfiguration.load(from: file)
    }

    func core(_ configuration: HubConfiguration, at now: Double = t0) throws -> HubCore {
        var core = HubCore(
            configuration: configuration, engine: try configuration.makeEngine(), now: now,
            persistence: HubCore.Persistence(
                configuration.store!, pseudonyms: try TagPseudonyms.load(configuration.store)))
        core.startPublishing()
        _ = core.takeOutgoing()
        return core
    }

    static func batch(_ gateway: String, seq: UInt64, at t: Double, boot: String = "boot-1") -> HubInput {
        .batch(
            SightingBatch(
                gateway: GatewayID(unchecked: gateway), boot: boot, seq: seq, sent: t, clockSynced: true,
                sightings: [Sighting(t: t, beacon: beacon, rssi: -62, txPower: -59)]))
    }

    static func acks(_ out: [HubCore.Outgoing]) -> [UInt64] {
        out.filter { $0.topic.hasSuffix("/ack") }.compactMap {
            try? ContractCoding.decode(Acknowledgement.self, from: $0.payload).acks.first?.seq
        }
    }

    static func events(_ out: [HubCore.Outgoing], _ type: ZoneEventType) -> [ZoneEvent] {
        out.filter { $0.topic.hasSuffix("/events/\(type.rawValue)") }.compactMap {
            try? ContractCoding.decode(ZoneEvent.self, from: $0.payload)
        }
    }

    /// Feeds one batch a second from `gateway` for `seconds`, ticking, and returns what the core published.
    static func hear(
        _ core: inout HubCore, _ gateway: String, seconds: Int, from start: Double, seq: inout UInt64
    ) -> [HubCore.Outgoing] {
        var out: [HubCore.Outgoing] = []
        for second in 0..<seconds {
            let t = start + Double(second)
            seq += 1
            core.apply(batch(gateway, seq: seq, at: t), at: t)
            core.tick(at: t + 0.5, connected: true)
            out += core.takeOutgoing()
        }
        return out
    }

    static func commit(_ core: inout HubCore, _ store: HubStore, at t: Double) async throws -> [HubCore.Outgoing] {
        let journal = core.takeJournal()
        let result = try await store.commit(journal, at: t)
        core.committed(result, batches: journal.batches.count, at: t)
        core.publishAcknowledgements(at: t)
        return core.takeOutgoing()
    }

    @Test(arguments: [
        ("synchronous: fast", "must be normal or full"), ("commitSeconds: 9", "between 0.05 and 5"),
        ("pseudonymise: true", "needs keyFile"), ("rawSightings: maybe", "rawSightings"),
    ])
    func aWrongStoreSettingIsRefusedNamingTheKey(setting: String, message: String) throws {
        #expect {
            _ = try configuration(store: ", \(setting)")
        } throws: { error in
            "\(error)".contains("store") && "\(error)".contains(message)
        }
    }

    @Test func acknowledgesOnlyWhatTheDatabaseCommitted() async throws {
        let configuration = try configuration()
        let store = try HubStore(path: path)
        var core = try core(configuration)
        var seq: UInt64 = 0
        let heard = Self.hear(&core, "gw-a", seconds: 10, from: Self.t0, seq: &seq)
        #expect(Self.acks(heard).isEmpty, "applied is not committed")
        #expect(Self.events(heard, .enter).count == 1)
        let afterCommit = try await Self.commit(&core, store, at: Self.t0 + 11)
        #expect(Self.acks(afterCommit) == [10])
        #expect(try await store.database.fetchInteger("SELECT count(*) FROM batches") == 10)
        #expect(try await store.visits(HubStore.VisitFilter(tag: "tag-1")).map(\.zone) == ["a"])
        #expect(core.counters.store?.backlogBatches == 0 && core.counters.store?.commits == 1)
    }

    @Test func aRestartMidVisitCarriesOnTheSameVisitWithoutASecondEnter() async throws {
        let configuration = try configuration()
        let store = try HubStore(path: path)
        var seq: UInt64 = 0
        var first = try core(configuration)
        _ = Self.hear(&first, "gw-a", seconds: 20, from: Self.t0, seq: &seq)
        _ = try await Self.commit(&first, store, at: Self.t0 + 20)
        let entered = try #require(try await store.visits(HubStore.VisitFilter()).first).enter

        // The hub is killed; a new one starts from the database 30 s later and the tag is still in a.
        var second = try core(configuration, at: Self.t0 + 50)
        second.recover(try await store.recover(), at: Self.t0 + 50)
        // A resend of a batch the first hub committed (its acknowledgement was lost with it) is a duplicate.
        second.apply(Self.batch("gw-a", seq: 20, at: Self.t0 + 19), at: Self.t0 + 50)
        #expect(second.counters.duplicates == 1)
        var out = Self.hear(&second, "gw-a", seconds: 20, from: Self.t0 + 50, seq: &seq)
        out += try await Self.commit(&second, store, at: Self.t0 + 70)
        #expect(Self.events(out, .enter).isEmpty, "no second enter")
        #expect(Self.acks(out).last == 40)
        var visits = try await store.visits(HubStore.VisitFilter())
        #expect(visits.count == 1 && visits[0].exit == nil && visits[0].enter == entered)

        // It walks on to b: the one visit of a closes, measured from its first enter.
        out = Self.hear(&second, "gw-b", seconds: 20, from: Self.t0 + 70, seq: &seq)
        _ = try await Self.commit(&second, store, at: Self.t0 + 90)
        visits = try await store.visits(HubStore.VisitFilter())
        #expect(visits.map(\.zone) == ["a", "b"])
        let exit = try #require(visits[0].exit)
        #expect(visits[0].duration == exit - entered && exit > Self.t0 + 70)
        #expect(try await store.transitionMatrix().map { "\($0.from)>\($0.to)" } == ["a>b"])
        #expect(try await store.database.fetchInteger("SELECT count(*) FROM visits WHERE exit IS NULL") == 1)
    }

    @Test func aHubTakingOverWithItsOwnDatabaseAcknowledgesOnFromTheRetainedAcknowledgement() async throws {
        let configuration = try configuration()
        let store = try HubStore(path: path)
        var core = try core(configuration)
        // The hub it takes over from acknowledged up to 100; this database has never seen that boot.
        core.apply(
            .acknowledgement(
                Acknowledgement(gateway: "gw-a", t: Self.t0, acks: [Acknowledgement.Entry(boot: "boot-1", seq: 100)])),
            at: Self.t0)
        var seq: UInt64 = 100
        _ = Self.hear(&core, "gw-a", seconds: 3, from: Self.t0, seq: &seq)
        let out = try await Self.commit(&core, store, at: Self.t0 + 3)
        #expect(Self.acks(out) == [103])
    }

    /// A tag inside by another hub's retained state (or one from before this database) gets its visit opened at the
    /// state's `since`; a still tag would otherwise never have one. No event: the other hub published the enter.
    @Test func aTagInsideByARetainedStateTheDatabaseLacksOpensItsVisitAtItsSince() async throws {
        let configuration = try configuration()
        let store = try HubStore(path: path)
        var core = try core(configuration)
        let retained = TagState(
            tag: "tag-1", beacon: Self.beacon, state: .inside, zone: "b", since: Self.t0 - 600, confidence: 0.9,
            lastSeen: Self.t0 - 1, gateways: [])
        core.apply(.tagState(retained), at: Self.t0)
        core.tick(at: Self.t0 + 0.5, connected: true)
        var out = core.takeOutgoing()
        out += try await Self.commit(&core, store, at: Self.t0 + 1)
        #expect(Self.events(out, .enter).isEmpty && Self.events(out, .exit).isEmpty)
        var visits = try await store.visits(HubStore.VisitFilter())
        #expect(visits.map(\.zone) == ["b"] && visits.first?.enter == Self.t0 - 600 && visits.first?.exit == nil)

        // A restart from this database with the same retained state: the same visit, not a second one.
        var second = try self.core(configuration, at: Self.t0 + 10)
        second.recover(try await store.recover(), at: Self.t0 + 10)
        second.apply(.tagState(retained), at: Self.t0 + 10)
        second.tick(at: Self.t0 + 10.5, connected: true)
        _ = try await Self.commit(&second, store, at: Self.t0 + 11)
        visits = try await store.visits(HubStore.VisitFilter())
        #expect(visits.count == 1 && visits.first?.exit == nil)

        // It walks on to c: the visit of b closes, with its whole length.
        var seq: UInt64 = 0
        _ = Self.hear(&second, "gw-c", seconds: 20, from: Self.t0 + 12, seq: &seq)
        _ = try await Self.commit(&second, store, at: Self.t0 + 40)
        visits = try await store.visits(HubStore.VisitFilter())
        #expect(visits.map(\.zone) == ["b", "c"])
        #expect((visits.first?.duration ?? 0) > 600)
        #expect(try await store.transitionMatrix().map { "\($0.from)>\($0.to)" } == ["b>c"])
    }

    @Test func aFailedCommitRaisesDiskFullWithholdsAcknowledgementsAndRecovers() async throws {
        let configuration = try configuration()
        let store = try HubStore(path: path)
        var core = try core(configuration)
        var seq: UInt64 = 0
        _ = Self.hear(&core, "gw-a", seconds: 5, from: Self.t0, seq: &seq)
        _ = try await Self.commit(&core, store, at: Self.t0 + 5)
        let pages = try #require(try await store.database.fetchInteger("PRAGMA page_count"))
        try await store.database.execute("PRAGMA max_page_count = \(pages)")

        // Enough to need new pages: the commit fails as on a full disk.
        var out = Self.hear(&core, "gw-a", seconds: 400, from: Self.t0 + 5, seq: &seq)
        var pending = core.takeJournal()
        await #expect(throws: StoreError.self) { _ = try await store.commit(pending, at: Self.t0 + 405) }
        core.commitFailed(StoreError(.diskFull, "test: disk full"), at: Self.t0 + 405)
        core.tick(at: Self.t0 + 406, connected: true)
        out += core.takeOutgoing()
        // (Gateways b–d are silent, hence offline: their alerts are not this test's business.)
        #expect(Self.events(out, .alert).compactMap(\.code).filter { !$0.hasPrefix("gateway-") } == ["disk-full"])
        #expect(Self.acks(out).isEmpty, "nothing uncommitted is acknowledged")
        #expect(core.counters.store?.backlogBatches == 400 && core.counters.store?.failures == 1)

        // Space returns: the kept journal and what came since commit together.
        try await store.database.execute("PRAGMA max_page_count = 1073741823")
        out = Self.hear(&core, "gw-a", seconds: 5, from: Self.t0 + 406, seq: &seq)
        pending.append(core.takeJournal())
        let result = try await store.commit(pending, at: Self.t0 + 411)
        core.committed(result, batches: pending.batches.count, at: Self.t0 + 411)
        core.publishAcknowledgements(at: Self.t0 + 411)
        out += core.takeOutgoing()
        #expect(Self.acks(out) == [410])
        #expect(Self.events(out, .alert).compactMap(\.code).filter { !$0.hasPrefix("gateway-") } == ["store-recovered"])
        #expect(try await store.database.fetchInteger("SELECT count(*) FROM batches") == 410)
        #expect(try await store.database.integrityCheck() == "ok")
    }

    /// Failures come and go (a disk filled again after a recovery, or nearly full and failing every other commit):
    /// every failure that lasts is announced and paired with its recovery, and a flapping one is not announced at
    /// every commit.
    @Test func storeFailuresAreAnnouncedOncePerEpisodeAndFlappingIsDamped() throws {
        var core = try core(try configuration())
        func codes(_ step: (inout HubCore) -> Void) -> [String] {
            step(&core)
            return Self.events(core.takeOutgoing(), .alert).compactMap(\.code).filter { !$0.hasPrefix("gateway-") }
        }
        let full = StoreError(.diskFull, "test: disk full")
        let t = Self.t0
        #expect(codes { $0.commitFailed(full, at: t + 10) } == ["disk-full"])
        #expect(codes { $0.commitFailed(full, at: t + 11) }.isEmpty, "the same episode")
        #expect(codes { $0.committed(HubStore.CommitResult(), batches: 3, at: t + 12) } == ["store-recovered"])
        #expect(codes { $0.committed(HubStore.CommitResult(), batches: 1, at: t + 13) }.isEmpty)
        // Full again 5 s later: damped while it might be flapping, announced once it has lasted 10 s.
        #expect(codes { $0.commitFailed(full, at: t + 17) }.isEmpty)
        #expect(codes { $0.committed(HubStore.CommitResult(), batches: 1, at: t + 18) }.isEmpty, "none was raised")
        #expect(codes { $0.commitFailed(full, at: t + 19) }.isEmpty)
        #expect(codes { $0.commitFailed(full, at: t + 25) }.isEmpty)
        #expect(codes { $0.commitFailed(full, at: t + 29.5) } == ["disk-full"])
        #expect(codes { $0.committed(HubStore.CommitResult(), batches: 9, at: t + 31) } == ["store-recovered"])
        // A minute after the last alert, a failure is announced at once again; an I/O error has its own code.
        #expect(codes { $0.commitFailed(StoreError(.io, "test: I/O error"), at: t + 95) } == ["store-error"])
        #expect(core.counters.store?.failures == 7)
    }

    @Test func beyondTheBacklogLimitBatchesAreRefusedUnrecordedSoTheyCanBeResent() async throws {
        let configuration = try configuration(store: ", maxBacklogBatches: 100")
        let store = try HubStore(path: path)
        var core = try core(configuration)
        var seq: UInt64 = 0
        _ = Self.hear(&core, "gw-a", seconds: 105, from: Self.t0, seq: &seq)
        #expect(core.counters.rejected["store-backlog"] == 5)
        _ = try await Self.commit(&core, store, at: Self.t0 + 105)
        // The refused ones were not taken as received: their resends are new batches, not duplicates.
        for resent in UInt64(101)...105 {
            core.apply(Self.batch("gw-a", seq: resent, at: Self.t0 + 106), at: Self.t0 + 106)
        }
        #expect(core.counters.duplicates == 0)
        let out = try await Self.commit(&core, store, at: Self.t0 + 107)
        #expect(Self.acks(out) == [105])
    }

    @Test func pseudonymisedHistoryHoldsNoTagIdsAndIsStillQueriedByTag() async throws {
        let keyFile = directory.appendingPathComponent("pseudonym.key").path
        let configuration = try configuration(store: ", pseudonymise: true, keyFile: pseudonym.key, rawSightings: true")
        #expect(!FileManager.default.fileExists(atPath: keyFile), "the key is made when the hub first loads it")
        let pseudonyms = try TagPseudonyms.load(configuration.store)
        #expect(
            (try FileManager.default.attributesOfItem(atPath: keyFile)[.posixPermissions] as? Int) == 0o600)
        let store = try HubStore(path: path)
        try await store.adopt(site: "row", keyID: pseudonyms.keyID)
        var core = try core(configuration)
        var seq: UInt64 = 0
        _ = Self.hear(&core, "gw-a", seconds: 10, from: Self.t0, seq: &seq)
        _ = try await Self.commit(&core, store, at: Self.t0 + 10)
        try store.close()
        for (table, column) in [("visits", "tag"), ("tags", "tag"), ("tags", "beacon"), ("sightings", "beacon")] {
            let reader = try HubStore(readingFrom: path)
            #expect(
                try await reader.database.fetchInteger(
                    "SELECT count(*) FROM \(table) WHERE \(column) IN ('tag-1', '\(Self.beacon)')") == 0)
            #expect(try await reader.database.fetchInteger("SELECT count(*) FROM \(table)")! > 0)
        }
        let source = try HistoryTool.Source.resolve(
            db: nil, configPath: directory.appendingPathComponent("hub.yaml").path)
        let json = try await HistoryTool.visits(
            source, tag: "tag-1", zone: nil, since: nil, until: nil, limit: nil, format: .json)
        let rows = try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [[String: Any]]
        #expect(rows?.count == 1 && (rows?.first?["tag"] as? String)?.hasPrefix("p-") == true)
        // Forget finds the pseudonymised rows through the key.
        let forgot = try await HistoryTool.forget(source, tag: "tag-1")
        #expect(forgot.contains("visits 1") && forgot.contains("sightings 10"))

        try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: keyFile)
        #expect {
            _ = try TagPseudonyms.load(configuration.store)
        } throws: { error in
            "\(error)".contains("chmod 600")
        }
    }
}
