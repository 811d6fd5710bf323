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
