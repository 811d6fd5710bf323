import Testing

@testable import ZoneInference

/// The noise tables' constants are written out for speed; they must stay what their definitions give.
@Suite struct ReadingNoiseTableTests {
    @Test func writtenOutConstantsMatchTheTablesRange() {
        let range = ReadingNoise.upper - ReadingNoise.lower
        #expect(ReadingNoise.lastIndex == Int((range / ReadingNoise.step).rounded()))
        #expect(ReadingNoise.stepsPerDB == Int((1 / ReadingNoise.step).rounded()))
        let noise = ReadingNoise(radio: .init(), extraVariance: 0, walking: false)
        #expect(noise.heard.count == ReadingNoise.lastIndex + 1 && noise.missed.count == ReadingNoise.lastIndex + 1)
    }
}
