import BeaconStore
import Foundation
import Testing

@Suite struct OutboxTests {
    let path: String

    init() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("outbox-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        path = directory.appendingPathComponent("outbox.db").path
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
