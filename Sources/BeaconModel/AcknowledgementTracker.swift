/// What the hub acknowledges to one gateway: per boot, the highest sequence up to which every batch has arrived.
///
/// Batches may arrive out of order and more than once (resends); `record` tells a first arrival from a duplicate.
/// A pure value: the hub keeps one per gateway; tests and benchmarks that stand in for the hub use it too.
public struct AcknowledgementTracker: Sendable, Hashable {
    private struct Boot: Sendable, Hashable {
        var contiguous: UInt64 = 0
        /// Sequences above `contiguous` that already arrived, waiting for the gap below them to fill.
        var ahead: Set<UInt64> = []
        /// Order of first appearance, so the most recent boots are the ones acknowledged.
        var order: Int
    }

    private var boots: [String: Boot] = [:]
    private var nextOrder = 0

    public init() {}

    /// Records batch `seq` of `boot`; false when it had arrived before (a duplicate to drop).
    public mutating func record(boot: String, seq: UInt64) -> Bool {
        var entry = boots[boot] ?? Boot(order: nextOrder)
        if boots[boot] == nil { nextOrder += 1 }
        defer { boots[boot] = entry }
        guard seq > entry.contiguous, !entry.ahead.contains(seq) else { return false }
        entry.ahead.insert(seq)
        while entry.ahead.remove(entry.contiguous + 1) != nil { entry.contiguous += 1 }
        return true
    }

    /// The contiguous sequence of `boot` (0 before batch 1 arrived).
    public func contiguous(boot: String) -> UInt64 { boots[boot]?.contiguous ?? 0 }

    /// Takes `seq` as acknowledged already (by this hub before a restart, or by another hub: its retained
    /// acknowledgement), so that batches after it can be acknowledged without waiting for ones the agent deleted.
    public mutating func seed(boot: String, seq: UInt64) {
        var entry = boots[boot] ?? Boot(order: nextOrder)
        if boots[boot] == nil { nextOrder += 1 }
        if seq > entry.contiguous {
            entry.contiguous = seq
            entry.ahead = entry.ahead.filter { $0 > seq }
            while entry.ahead.remove(entry.contiguous + 1) != nil { entry.contiguous += 1 }
        }
        boots[boot] = entry
    }

    /// Boots with batches received beyond a gap, and the first missing sequence of each.
    public var gaps: [(boot: String, missing: UInt64)] {
        boots.compactMap { $0.value.ahead.isEmpty ? nil : ($0.key, $0.value.contiguous + 1) }
    }

    /// Gives up on the gap before the first batch received beyond it (the agent no longer has those batches: its
    /// outbox dropped them when full, or a previous hub acknowledged them). Returns the sequences skipped.
    public mutating func skipGap(boot: String) -> ClosedRange<UInt64>? {
        guard var entry = boots[boot], let next = entry.ahead.min() else { return nil }
        let skipped = (entry.contiguous + 1)...(next - 1)
        entry.contiguous = next - 1
        while entry.ahead.remove(entry.contiguous + 1) != nil { entry.contiguous += 1 }
        boots[boot] = entry
        return skipped
    }

    /// Gives up on every sequence of `boot` below `first` that has not arrived: the agent said its outbox holds
    /// nothing of the boot below `first` (it dropped them when full or too old). Returns the ranges skipped.
    public mutating func skipMissing(boot: String, below first: UInt64) -> [ClosedRange<UInt64>] {
        guard var entry = boots[boot], first > entry.contiguous + 1 else { return [] }
        // The holes between the batches that did arrive below `first`.
        var skipped: [ClosedRange<UInt64>] = []
        var next = entry.contiguous + 1
        for seq in entry.ahead.filter({ $0 < first }).sorted() {
            if seq > next { skipped.append(next...(seq - 1)) }
            next = seq + 1
        }
        if next < first { skipped.append(next...(first - 1)) }
        entry.contiguous = first - 1
        entry.ahead = entry.ahead.filter { $0 >= first }
        while entry.ahead.remove(entry.contiguous + 1) != nil { entry.contiguous += 1 }
        boots[boot] = entry
        return skipped
    }

    /// The acknowledgement entries for the most recent boots (at most `Acknowledgement.maximumBoots`).
    public var entries: [Acknowledgement.Entry] {
        boots.sorted { $0.value.order > $1.value.order }.prefix(Acknowledgement.maximumBoots)
            .map { Acknowledgement.Entry(boot: $0.key, seq: $0.value.contiguous) }
    }
}
