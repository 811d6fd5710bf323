import BeaconModel
import Foundation
import Testing

/// `SightingLine.decodeFast` against Foundation: for any line, it returns exactly what
/// `ContractCoding.decodeLine(SightingLine.self, from:)` returns, or nil; `SightingLine.decode(line:)` always returns
/// what Foundation returns.
@Suite struct SightingLineFastDecodingTests {
    func viaFoundation(_ line: String) -> SightingLine? {
        try? ContractCoding.decodeLine(SightingLine.self, from: line)
    }

    /// Random lines, as `beacon-sim run` and `beacon-agent replay --dry-run` write them (and with an address, which a
    /// line does not define: skipped by both).
    static func randomLine(using random: inout SplitMix64) throws -> (SightingLine, String) {
        let batch = RandomBatch.make(sightings: 1, using: &random)
        let line = SightingLine(batch.sightings[0], gateway: batch.gateway)
        var text = try ContractCoding.encodeLine(line)
        if random.chance(0.2) {
            text = text.replacingOccurrences(of: "{", with: "{\"address\":\"aa:bb\",", options: .anchored)
        }
        return (line, text)
    }

    @Test func decodesRandomLinesExactlyAsFoundation() throws {
        var random = SplitMix64(seed: 11)
        for round in 0..<3_000 {
            let (line, text) = try Self.randomLine(using: &random)
            let foundation = try #require(viaFoundation(text), "round \(round): Foundation refused \(text)")
            #expect(foundation == line)
            let fast = SightingLine.decodeFast(text)
            #expect(fast != nil, "round \(round): refused \(text)")
            #expect(fast == foundation, "round \(round)")
            #expect(try SightingLine.decode(line: text) == foundation)
        }
    }

    @Test func readsTheSimulatorsLinesAsFoundation() throws {
        let lines = [
            #"{"t":1763812800.078,"gateway":"gw-front-1","beacon":"ibeacon:e2c56db5-dffb-48d2-b060-d0f5a71096e0:1:2","rssi":-77,"txPower":-59,"kind":"ibeacon"}"#,
            #"{"t":1763812800.5,"gateway":"gw-2","beacon":"eddystone-uid:edd1ebeac04e5defa017:000000000300","rssi":-90,"kind":"eddystone-uid"}"#,
            #"{"t":1000,"gateway":"rx-1","beacon":"b","rssi":-60,"txPower":null,"kind":null,"extras":null}"#,
            #" { "rssi" : -61 , "beacon" : "b" , "gateway" : "g" , "t" : 1.25e3 } "#,
        ]
        for text in lines {
            let foundation = try #require(viaFoundation(text), "Foundation refused \(text)")
            #expect(SightingLine.decodeFast(text) == foundation, "\(text)")
        }
    }

    @Test func neverAcceptsWhatFoundationRefusesNorDecodesOtherwiseUnderRandomMutations() throws {
        var random = SplitMix64(seed: 5)
        var bases: [[UInt8]] = []
        for _ in 0..<40 { bases.append(Array(try Self.randomLine(using: &random).1.utf8)) }
        var foundationAccepted = 0
        var fastAccepted = 0
        for round in 0..<20_000 {
            var bytes = bases[round % bases.count]
            for _ in 0..<Int.random(in: 1...3, using: &random) { Mutation.apply(to: &bytes, using: &random) }
            // Lines are text: a mutation that leaves invalid UTF-8 is repaired as the line reader would read it.
            let text = String(decoding: bytes, as: UTF8.self)
            let foundation = viaFoundation(text)
            if foundation != nil { foundationAccepted += 1 }
            if let fast = SightingLine.decodeFast(text) {
                fastAccepted += 1
                #expect(fast == foundation, "fast decoded \(text) otherwise")
            }
            #expect((try? SightingLine.decode(line: text)) == foundation)
        }
        #expect(foundationAccepted > 1_000)
        #expect(fastAccepted > 800)
    }

    @Test func keepsFoundationsErrorsForBrokenLines() {
        for text in [
            #"{"t":1,"gateway":"g","beacon":"b"}"#, #"{"t":1,"gateway":"bad/id","beacon":"b","rssi":-1}"#, "{",
        ] {
            #expect(SightingLine.decodeFast(text) == nil)
            #expect(throws: ContractError.self) { try SightingLine.decode(line: text) }
        }
    }
}
