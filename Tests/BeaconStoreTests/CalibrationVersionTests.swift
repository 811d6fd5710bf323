import BeaconStore
import BrokerTestSupport
import Foundation
import Testing

/// The calibration's versions (docs/dashboard.md, "The calibration page") on both databases: numbered in order, listed
/// newest first without their bodies, read back whole, one site's not another's.
@Suite struct CalibrationVersionTests {
    /// For the SQLite history; deleted with the suite's instance, which Swift Testing drops once the test has ended.
    let temporaryDirectory: TemporaryDirectory
    var directory: URL { temporaryDirectory.url }

    init() throws {
        temporaryDirectory = try TemporaryDirectory(prefix: "store")
    }

    @Test(arguments: StoreBackend.allCases)
    func versionsAreNumberedInOrderAndReadBackWhole(backend: StoreBackend) async throws {
        let store = try await backend.open(in: directory)
        try await store.adopt(site: "museum", keyID: nil)
        #expect(try await store.calibrationVersions().isEmpty)
        #expect(try await store.calibration(version: 1) == nil)
        let walk = try await store.addCalibration(
            CalibrationVersion(
                created: 1000.5, who: "ana", note: "after the new cases", kind: .walk, zones: 5, gateways: 9,
                before: 0.61, after: 0.83, body: #"{"site":"museum"}"#))
        #expect(walk.version == 1)
        let rollback = try await store.addCalibration(
            CalibrationVersion(
                created: 2000, who: "ben", kind: .rollback, restores: 0, zones: 0, gateways: 0, body: nil))
        #expect(rollback.version == 2)

        let listed = try await store.calibrationVersions()
        #expect(listed.map(\.version) == [2, 1])
        #expect(listed.allSatisfy { $0.body == nil }, "the list carries no bodies")
        #expect(listed[1].who == "ana" && listed[1].note == "after the new cases" && listed[1].after == 0.83)
        #expect(listed[0].kind == .rollback && listed[0].restores == 0 && listed[0].before == nil)

        let first = try #require(try await store.calibration(version: 1))
        #expect(first == walk)
        #expect(try await store.calibration(version: 2)?.body == nil)
        try store.close()
    }
}
