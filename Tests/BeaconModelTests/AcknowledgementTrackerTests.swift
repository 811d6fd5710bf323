import BeaconModel
import Testing

@Suite struct AcknowledgementTrackerTests {
    @Test func acknowledgesOnlyUpToTheFirstGap() {
        var tracker = AcknowledgementTracker()
        let arrivals = [1, 3, 2].map { tracker.record(boot: "a", seq: $0) }
        #expect(arrivals == [true, true, true])
        #expect(tracker.contiguous(boot: "a") == 3)
        _ = tracker.record(boot: "a", seq: 5)
        #expect(tracker.contiguous(boot: "a") == 3)
    }

    @Test func duplicatesAreRecognisedBelowAndAboveTheGap() {
        var tracker = AcknowledgementTracker()
        _ = tracker.record(boot: "a", seq: 1)
        _ = tracker.record(boot: "a", seq: 5)
        let again = [1, 5, 0].map { tracker.record(boot: "a", seq: $0) }
        #expect(again == [false, false, false])
        #expect(tracker.contiguous(boot: "a") == 1)
    }

    @Test func keepsTheMostRecentBoots() {
        var tracker = AcknowledgementTracker()
        for boot in 0..<10 { _ = tracker.record(boot: "b\(boot)", seq: 1) }
        let boots = tracker.entries.map(\.boot)
        #expect(boots.count == Acknowledgement.maximumBoots)
        #expect(boots.first == "b9")
        #expect(!boots.contains("b0"))
        #expect(!boots.contains("b1"))
    }
}

@Suite struct AcknowledgementTrackerRecoveryTests {
    @Test func aSeedFromARetainedAcknowledgementLetsLaterBatchesThrough() {
        var tracker = AcknowledgementTracker()
        // Batches 41 and 42 arrive before the retained acknowledgement (the persistent session delivers at once).
        let fresh = [tracker.record(boot: "b", seq: 41), tracker.record(boot: "b", seq: 42)]
        #expect(fresh == [true, true])
        #expect(tracker.contiguous(boot: "b") == 0)
        tracker.seed(boot: "b", seq: 40)
        #expect(tracker.contiguous(boot: "b") == 42)
        // A resend of an acknowledged batch is a duplicate; a lower seed changes nothing.
        let resent = tracker.record(boot: "b", seq: 39)
        #expect(!resent)
        tracker.seed(boot: "b", seq: 10)
        #expect(tracker.contiguous(boot: "b") == 42)
    }

    @Test func aGapTheAgentCannotFillIsSkippedAndReported() {
        var tracker = AcknowledgementTracker()
        for seq: UInt64 in [1, 2, 6, 7, 9] { _ = tracker.record(boot: "b", seq: seq) }
        #expect(tracker.gaps.map(\.missing) == [3])
        let first = tracker.skipGap(boot: "b")
        #expect(first == 3...5)
        #expect(tracker.contiguous(boot: "b") == 7)
        let second = tracker.skipGap(boot: "b")
        #expect(second == 8...8)
        #expect(tracker.contiguous(boot: "b") == 9)
        #expect(tracker.gaps.isEmpty)
        let none = tracker.skipGap(boot: "b")
        #expect(none == nil)
    }

    @Test func sequencesTheOutboxNoLongerHoldsAreSkippedAroundTheOnesThatArrived() {
        var tracker = AcknowledgementTracker()
        for seq: UInt64 in [1, 2, 5, 9, 10] { _ = tracker.record(boot: "b", seq: seq) }
        let skipped = tracker.skipMissing(boot: "b", below: 8)
        #expect(skipped == [3...4, 6...7])
        #expect(tracker.contiguous(boot: "b") == 7)
        let eight = tracker.record(boot: "b", seq: 8)
        #expect(eight)
        #expect(tracker.contiguous(boot: "b") == 10)
        let again = tracker.skipMissing(boot: "b", below: 8)
        #expect(again.isEmpty, "nothing below what arrived")
        let unknown = tracker.skipMissing(boot: "other", below: 8)
        #expect(unknown.isEmpty, "a boot never heard of")
        let late = tracker.record(boot: "b", seq: 6)
        #expect(!late, "a batch recorded lost that turns up after all is a duplicate")
    }
}
