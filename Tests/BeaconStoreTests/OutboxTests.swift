import BeaconStore
import BrokerTestSupport
import Foundation
import Testing

@Suite struct OutboxTests {
    /// Deleted with the suite's instance, which Swift Testing drops once the test has ended, pass or fail.
    let temporaryDirectory: TemporaryDirectory
    let path: String

    init() throws {
        temporaryDirectory = try TemporaryDirectory(prefix: "outbox")
        path = temporaryDirectory.url.appendingPathComponent("outbox.db").path
    }

    @Test func numbersBatchesPerBootWithoutGapsAndSurvivesReopen() async throws {
        let outbox = try Outbox(path: path)
        try await outbox.startBoot("a", at: 0)
        for index in 1...3 {
            let batch = try await outbox.append(boot: "a", at: Double(index)) { seq in Array("batch \(seq)".utf8) }
            #expect(batch.seq == UInt64(index))
        }
        try outbox.close()

        let reopened = try Outbox(path: path)
        #expect(try await reopened.pending(limit: 10).map(\.seq) == [1, 2, 3])
        #expect(try await reopened.pending(limit: 10).first?.payload == Array("batch 1".utf8))
        try await reopened.startBoot("b", at: 10)
        #expect(try await reopened.append(boot: "b", at: 11) { _ in [1] }.seq == 1)
        // The earlier boot keeps its numbering while it has batches.
        #expect(try await reopened.lastSequence(boot: "a") == 3)
        try reopened.close()
    }

    /// What the heartbeat tells the hub: per boot, the lowest sequence still held (or the next one).
    @Test func resendFromIsTheLowestHeldSequencePerBoot() async throws {
        let outbox = try Outbox(path: path)
        try await outbox.startBoot("a", at: 0)
        for index in 1...6 {
            _ = try await outbox.append(boot: "a", at: Double(index)) { _ in [UInt8](repeating: 0, count: 100) }
        }
        _ = try await outbox.acknowledge(boot: "a", upTo: 1)
        // A bound of 300 bytes keeps the newest three: 2 and 3 are dropped.
        #expect(try await outbox.enforceBounds(maxBytes: 300, maxAge: 1e9, now: 7) == 2)
        #expect(try await outbox.resendFrom(current: "a") == ["a": 4])
        try await outbox.startBoot("b", at: 10)
        #expect(try await outbox.resendFrom(current: "b") == ["a": 4, "b": 1])
        _ = try await outbox.append(boot: "b", at: 11) { _ in [0] }
        _ = try await outbox.acknowledge(boot: "a", upTo: 6)
        _ = try await outbox.acknowledge(boot: "b", upTo: 1)
        // Nothing held: the next sequence of the current boot; an emptied earlier boot is no longer mentioned.
        #expect(try await outbox.resendFrom(current: "b") == ["b": 2])
        let reader = try Outbox(readingFrom: path)
        #expect(try await reader.resendFrom(current: "b") == ["b": 2])
        try reader.close()
        try outbox.close()
    }

    @Test func acknowledgementDeletesOnlyItsBootUpToItsSequence() async throws {
        let outbox = try Outbox(path: path)
        try await outbox.startBoot("a", at: 0)
        for index in 1...4 { _ = try await outbox.append(boot: "a", at: Double(index)) { _ in [0] } }
        try await outbox.startBoot("b", at: 5)
        for index in 1...2 { _ = try await outbox.append(boot: "b", at: 5 + Double(index)) { _ in [0] } }
        #expect(try await outbox.acknowledge(boot: "a", upTo: 2) == 2)
        #expect(try await outbox.acknowledge(boot: "b", upTo: 99) == 2)
        let left = try await outbox.pending(limit: 10)
        #expect(left.map(\.boot) == ["a", "a"])
        #expect(left.map(\.seq) == [3, 4])
        try outbox.close()
    }

    @Test func boundsDropTheOldestAndCountThem() async throws {
        let outbox = try Outbox(path: path)
        try await outbox.startBoot("a", at: 0)
        for index in 1...10 {
            _ = try await outbox.append(boot: "a", at: Double(index)) { _ in [UInt8](repeating: 7, count: 1000) }
        }
        #expect(try await outbox.depth().bytes == 10_000)
        // Size: keep at most 4,500 bytes → the 6 oldest go.
        #expect(try await outbox.enforceBounds(maxBytes: 4_500, maxAge: 1e9, now: 10) == 6)
        #expect(try await outbox.pending(limit: 10).map(\.seq) == [7, 8, 9, 10])
        // Age: older than 2.5 s at t=10 → 7 goes.
        #expect(try await outbox.enforceBounds(maxBytes: 1 << 30, maxAge: 2.5, now: 10) == 1)
        #expect(try await outbox.droppedTotal() == 7)
        let depth = try await outbox.depth()
        #expect(depth.batches == 3)
        #expect(depth.oldest == 8)
        try outbox.close()
    }
}
