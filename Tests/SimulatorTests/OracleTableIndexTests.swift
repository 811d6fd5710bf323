import Testing
import ZoneInference

@testable import Simulator

/// The oracle's copy of the noise tables' index is the engine's, offset for offset.
@Suite struct OracleTableIndexTests {
    @Test func indexesTheTablesAsTheEngineDoes() {
        var offset: Float = -140
        while offset < 100 {
            #expect(PositionOracleTrack.tableIndex(offset) == ReadingNoise.index(offset), "offset \(offset)")
            offset += 0.013
        }
        for offset: Float in [-.infinity, .infinity, -120, 80, 0, -0.05, -119.95] {
            #expect(PositionOracleTrack.tableIndex(offset) == ReadingNoise.index(offset), "offset \(offset)")
        }
    }
}
