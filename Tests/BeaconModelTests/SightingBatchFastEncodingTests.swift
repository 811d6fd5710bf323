import BeaconModel
import Foundation
import Testing

/// `SightingBatch.fastEncoded` against Foundation: the same bytes as `ContractCoding.encode` for any batch.
@Suite struct SightingBatchFastEncodingTests {
    @Test func writesTheBytesFoundationWritesForRandomBatches() throws {
        var random = SplitMix64(seed: 2026)
        var counts: [Int] = [0, 1, 500]
        for _ in 0..<200 { counts.append(Int.random(in: 0...30, using: &random)) }
        for (round, count) in counts.enumerated() {
            let batch = RandomBatch.make(sightings: count, using: &random)
            let fast = try #require(batch.fastEncoded(), "round \(round)")
            let foundation = try ContractCoding.encode(batch)
            let same = fast == foundation
            #expect(same, "round \(round): \(String(decoding: fast, as: UTF8.self).prefix(300))")
        }
    }

    @Test func escapesAsFoundationDoes() throws {
        let awkward = "a\"b\\c/d\n\r\t\u{8}\u{c}\u{1}\u{1f}\u{7f}é\u{2028}😀"
        let batch = SightingBatch(
            gateway: "gw-1", boot: awkward, seq: 1, sent: 1_700_000_000, clockSynced: false,
            sightings: [
                Sighting(
                    t: 1e-7, beacon: awkward, rssi: -60, address: awkward,
                    extras: SightingExtras(tlm: Telemetry(version: 1, raw: awkward), url: awkward))
            ])
        #expect(try batch.fastEncoded() == ContractCoding.encode(batch))
    }

    /// What JSONEncoder refuses is not written either: the caller falls back to it and gets its error.
    @Test func refusesNumbersThatAreNotFinite() {
        let batch = SightingBatch(
            gateway: "gw-1", boot: "b", seq: 1, sent: .nan, clockSynced: true, sightings: [])
        #expect(batch.fastEncoded() == nil)
        #expect(throws: (any Error).self) { try ContractCoding.encode(batch) }
    }
}
