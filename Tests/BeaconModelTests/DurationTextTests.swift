import BeaconModel
import Testing

/// The one parser of durations on command lines.
@Suite struct DurationTextTests {
    @Test(arguments: [
        ("90", 90.0), ("0", 0), ("90s", 90), ("30m", 1800), ("2h30m", 9000), ("1d12h", 129_600), ("1.5h", 5400),
    ])
    func readsSecondsAndUnits(text: String, seconds: Double) {
        #expect(DurationText.seconds(text) == seconds)
    }

    @Test(arguments: ["", "m", "-5", "5x", "1d 2h", "24h5", "inf"])
    func refusesWhatIsNotADuration(text: String) {
        #expect(DurationText.seconds(text) == nil)
    }
}
