import Testing

@testable import ZoneInference

/// The noise tables' constants are written out for speed; they must stay what their definitions give.
@Suite struct ReadingNoiseTableTests {
    @Test func writtenOutConstantsMatchTheTablesRange() {
        let range = ReadingNoise.upper - ReadingNoise.lower
        #expect(ReadingNoise.lastIndex == Int((range / ReadingNoise.step).rounded()))
        #expect(ReadingNoise.stepsPerDB == Int((1 / ReadingNoise.step).rounded()))
        let noise = ObservationModel.start(settings: InferenceSettings()).tables
        #expect(noise.heard.count == ReadingNoise.lastIndex + 1 && noise.missed.count == ReadingNoise.lastIndex + 1)
    }

    /// The calibration fit takes a weak link's heard mean back by the share of its readings lost below sensitivity,
    /// by the engine's own spread of a reading: nothing far above it, more the nearer the level is to it, and the
    /// turning walker's body (a wider spread) more than a known heading's.
    @Test func heardMeanExcessGrowsTowardsSensitivity() {
        for table in [HeardMean.facing, HeardMean.turning] {
            #expect(table.excess(heardMean: -50, sensitivity: -95) < 0.01)
            let near = table.excess(heardMean: -92, sensitivity: -95)
            let nearer = table.excess(heardMean: -94, sensitivity: -95)
            #expect(near > 1 && nearer > near, "excess at -92: \(near), at -94: \(nearer)")
            #expect(abs(table.share(margin: 40) - 1) < 0.01 && table.share(margin: -10) < 0.05)
        }
        #expect(
            HeardMean.turning.excess(heardMean: -90, sensitivity: -95)
                > HeardMean.facing.excess(heardMean: -90, sensitivity: -95))
    }
}
