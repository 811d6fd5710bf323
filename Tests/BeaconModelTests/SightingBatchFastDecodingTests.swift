import BeaconModel
import Foundation
import Testing

/// `SightingBatch.decodeFast` against Foundation: for any bytes, it returns exactly what the Foundation path returns,
/// or nil.
@Suite struct SightingBatchFastDecodingTests {
    @Test func decodesRandomBatchesExactlyAsFoundationWhateverTheKeyOrderAndWhitespace() throws {
        var random = SplitMix64(seed: 2024)
        var counts: [Int] = [0, 1, 500]
        for _ in 0..<60 {
            let largest = Bool.random(using: &random) ? 20 : 500
            counts.append(Int.random(in: 0...largest, using: &random))
        }
        for (round, count) in counts.enumerated() {
            let batch = RandomBatch.make(sightings: count, using: &random)
            let compact = try ContractCoding.encode(batch)
            var reshaper = Reshaper(random: random.split())
            let reshaped = try reshaper.reshape(compact)
            for payload in [compact, reshaped] {
                let foundation = try #require(foundationDecode(payload), "round \(round): Foundation refused")
                #expect(foundation == batch)
                let fast = SightingBatch.decodeFast(payload)
                #expect(fast != nil, "round \(round): refused \(String(decoding: payload, as: UTF8.self))")
                #expect(fast == foundation, "round \(round)")
                #expect(try ContractCoding.decode(SightingBatch.self, from: payload) == foundation)
            }
        }
    }

    @Test func neverAcceptsWhatFoundationRefusesNorDecodesOtherwiseUnderRandomMutations() throws {
        var random = SplitMix64(seed: 7)
        var bases: [[UInt8]] = []
        for _ in 0..<40 {
            let batch = RandomBatch.make(sightings: Int.random(in: 0...6, using: &random), using: &random)
            var reshaper = Reshaper(random: random.split())
            bases.append(try reshaper.reshape(try ContractCoding.encode(batch)))
        }
        var foundationAccepted = 0
        var fastAccepted = 0
        for round in 0..<20_000 {
            var payload = bases[round % bases.count]
            for _ in 0..<Int.random(in: 1...3, using: &random) { Mutation.apply(to: &payload, using: &random) }
            let foundation = foundationDecode(payload)
            let fast = SightingBatch.decodeFast(payload)
            if foundation != nil { foundationAccepted += 1 }
            if let fast {
                fastAccepted += 1
                #expect(fast == foundation, "fast decoded \(String(decoding: payload, as: UTF8.self)) otherwise")
            }
            #expect((try? ContractCoding.decode(SightingBatch.self, from: payload)) == foundation)
        }
        // The mutations must leave enough payloads valid for the property to say something.
        #expect(foundationAccepted > 1_200)
        #expect(fastAccepted > 1_000)
    }

    @Test(arguments: EdgeCase.acceptedAsFoundationDoes)
    func acceptsPlainlyValidPayloadsAsFoundationDoes(_ edge: EdgeCase) throws {
        let foundation = try #require(foundationDecode(edge.payload), "Foundation refused \(edge.name)")
        #expect(SightingBatch.decodeFast(edge.payload) == foundation)
        edge.check(foundation)
    }

    @Test(arguments: EdgeCase.refused)
    func refusesWhatIsNotPlainlyValid(_ edge: EdgeCase) {
        #expect(SightingBatch.decodeFast(edge.payload) == nil)
        // Where Foundation accepts such a payload, the caller gets Foundation's reading instead.
        #expect((try? ContractCoding.decode(SightingBatch.self, from: edge.payload)) == foundationDecode(edge.payload))
    }

    /// Texts where a parser that rounds twice, or stops reading digits early, gets the last bit wrong.
    @Test(arguments: [
        "2.2250738585072011e-308", "2.2250738585072012e-308", "4.9406564584124654e-324", "2.4703282292062328e-324",
        "1.7976931348623157e308", "1.7976931348623158e308", "9007199254740993", "9007199254740995",
        "1.00000000000000011102230246251565404236316680908203125",
        "1.00000000000000011102230246251565404236316680908203126", "0.1", "0.30000000000000004",
        "1763812800.1234567", "1763812800.12345675", "123456789012345678901234567890e-20",
        "0.000000000000000000000000000000000000000000001e300", "-0.0e-0", "1E22", "1e23",
    ])
    func readsDoublesBitForBitAsFoundation(_ text: String) throws {
        let payload = EdgeCase.base(replacing: #""t":1763812800.123456"#, with: #""t":"# + text)
        let foundation = try #require(foundationDecode(payload))
        let fast = try #require(SightingBatch.decodeFast(payload))
        #expect(fast.sightings[0].t.bitPattern == foundation.sightings[0].t.bitPattern)
    }

    @Test func readsWhatFoundationAcceptsButTheFastPathRefusesThroughFoundation() throws {
        // Foundation reads an integer written as a fraction or with an exponent when it is whole.
        let fraction = EdgeCase.base(replacing: #""rssi":-70"#, with: #""rssi":-70.0"#)
        #expect(SightingBatch.decodeFast(fraction) == nil)
        #expect(try ContractCoding.decode(SightingBatch.self, from: fraction).sightings[0].rssi == -70)
        // Foundation keeps the first of duplicate keys.
        let duplicate = EdgeCase.base(replacing: #""seq":7"#, with: #""seq":7,"seq":8"#)
        #expect(SightingBatch.decodeFast(duplicate) == nil)
        #expect(try ContractCoding.decode(SightingBatch.self, from: duplicate).seq == 7)
    }

    @Test func keepsFoundationsErrorsForBrokenBatches() {
        let broken = EdgeCase.base(replacing: #""rssi":-70"#, with: #""rssi":"loud""#)
        do {
            _ = try ContractCoding.decode(SightingBatch.self, from: broken)
            Issue.record("accepted a string rssi")
        } catch {
            #expect(error.code == .malformed)
            #expect(error.message.contains("rssi"))
        }
        let oversized = EdgeCase.base(replacing: "{", with: "{" + String(repeating: " ", count: 300_000))
        #expect(SightingBatch.decodeFast(oversized) == nil)
        #expect(throws: ContractError.self) { try ContractCoding.decode(SightingBatch.self, from: oversized) }
    }

    @Test func readsAnyCollectionOfBytes() throws {
        let payload = EdgeCase.base(replacing: "", with: "")
        let expected = try #require(foundationDecode(payload))
        #expect(SightingBatch.decodeFast(Data(payload)) == expected)
        #expect(SightingBatch.decodeFast(payload[...]) == expected)
        // No contiguous storage: copied once.
        #expect(SightingBatch.decodeFast(payload.lazy.map { $0 }) == expected)
    }
}

/// What `ContractCoding.decode(SightingBatch.self, from:)` returned before the fast path: Foundation's reading of a
/// payload within the size limit and of a version this build reads, or nil.
private func foundationDecode(_ payload: [UInt8]) -> SightingBatch? {
    guard payload.count <= ContractCoding.maximumPayloadBytes,
        let batch = try? JSONDecoder().decode(SightingBatch.self, from: Data(payload)),
        (1...ContractVersion.current).contains(batch.version)
    else { return nil }
    return batch
}

/// A hand-written payload and what the fast path must make of it.
struct EdgeCase: Sendable, CustomTestStringConvertible {
    let name: String
    let payload: [UInt8]
    let check: @Sendable (SightingBatch) -> Void

    var testDescription: String { name }

    init(_ name: String, _ payload: [UInt8], check: @escaping @Sendable (SightingBatch) -> Void = { _ in }) {
        self.name = name
        self.payload = payload
        self.check = check
    }

    init(_ name: String, replacing target: String, with replacement: String) {
        self.init(name, Self.base(replacing: target, with: replacement))
    }

    static let baseText =
        #"{"version":1,"gateway":"gw-1","boot":"b1","seq":7,"sent":1763812800.5,"clockSynced":true,"sightings":["#
        + #"{"t":1763812800.123456,"beacon":"ibeacon:e2c56db5-dffb-48d2-b060-d0f5a71096e0:1:2","rssi":-70,"#
        + #""txPower":-59,"kind":"ibeacon","address":"aa:bb:cc:dd:ee:ff"}]}"#

    static func base(replacing target: String, with replacement: String) -> [UInt8] {
        guard !target.isEmpty else { return Array(baseText.utf8) }
        precondition(baseText.contains(target), "\(target) is not in the base payload")
        return Array(baseText.replacingOccurrences(of: target, with: replacement).utf8)
    }

    /// `target` replaced with raw bytes (for invalid UTF-8 and control characters).
    static func base(replacing target: String, withBytes replacement: [UInt8]) -> [UInt8] {
        let marker = "\u{1}MARK\u{1}"
        let text = Array(baseText.replacingOccurrences(of: target, with: marker).utf8)
        let markerBytes = Array(marker.utf8)
        var result: [UInt8] = []
        var index = 0
        while index < text.count {
            if text[index...].starts(with: markerBytes) {
                result += replacement
                index += markerBytes.count
            } else {
                result.append(text[index])
                index += 1
            }
        }
        return result
    }

    static let acceptedAsFoundationDoes: [EdgeCase] = [
        EdgeCase("the base payload", replacing: "", with: ""),
        EdgeCase(
            "txPower null is absent", base(replacing: #""txPower":-59"#, with: #""txPower":null"#),
            check: { #expect($0.sightings[0].txPower == nil) }),
        EdgeCase(
            "every optional null",
            base(
                replacing: #""kind":"ibeacon","address":"aa:bb:cc:dd:ee:ff""#,
                with: #""kind":null,"extras":null,"address":null"#),
            check: { #expect($0.sightings[0].kind == nil && $0.sightings[0].address == nil) }),
        EdgeCase(
            "seq 0 is the hub's business, not the decoder's", base(replacing: #""seq":7"#, with: #""seq":0"#),
            check: { #expect($0.seq == 0) }),
        EdgeCase(
            "seq at UInt64.max", base(replacing: #""seq":7"#, with: #""seq":18446744073709551615"#),
            check: { #expect($0.seq == .max) }),
        EdgeCase(
            "rssi at Int.min", base(replacing: #""rssi":-70"#, with: #""rssi":-9223372036854775808"#),
            check: { #expect($0.sightings[0].rssi == .min) }),
        EdgeCase(
            "rssi at Int.max", base(replacing: #""rssi":-70"#, with: #""rssi":9223372036854775807"#),
            check: { #expect($0.sightings[0].rssi == .max) }),
        EdgeCase("rssi -0", replacing: #""rssi":-70"#, with: #""rssi":-0"#),
        EdgeCase(
            "unknown keys at every level, with every kind of value",
            base(
                replacing: #""boot":"b1","#,
                with: #""boot":"b1","note":{"a":[1,-2.5e-3,"x\u00e9\n",true,false,null,{},[]],"t":{"version":2}},"#
            ).replacing(
                Array(#""rssi":-70,"#.utf8),
                with: Array(#""rssi":-70,"version":"x","gateway":[ ],"extras2":{"tlm":null},"#.utf8))),
        EdgeCase(
            "escaped keys",
            base(replacing: #""t":"#, with: #""\u0074":"#).replacing(
                Array(#""beacon":"#.utf8), with: Array(#""be\u0061con":"#.utf8))),
        EdgeCase(
            "every escape in a string",
            base(
                replacing: #""boot":"b1""#, with: #""boot":"a\"b\\c\/d\b\f\n\r\t\u00e9\u00C9\ud83d\ude00\u0000\u2028""#),
            check: { #expect($0.boot == "a\"b\\c/d\u{8}\u{c}\n\r\téÉ😀\u{0}\u{2028}") }),
        EdgeCase(
            "raw UTF-8 in strings", base(replacing: #""boot":"b1""#, with: "\"boot\":\"é中😀e\u{301}\u{7F}\""),
            check: { #expect($0.boot == "é中😀e\u{301}\u{7F}") }),
        EdgeCase(
            "extras with telemetry and a URL",
            base(
                replacing: #""kind":"ibeacon""#,
                with: #""kind":"eddystone-tlm","extras":{"url":"https:\/\/x.io","tlm":{"version":0,"#
                    + #""batteryMilliVolts":2900,"temperatureCelsius":21.5,"advertisingCount":4294967295,"#
                    + #""secondsSinceBoot":12345.6,"raw":null,"future":1}}"#),
            check: { #expect($0.sightings[0].extras?.tlm?.advertisingCount == .max) }),
        EdgeCase("empty extras", replacing: #""kind":"ibeacon""#, with: #""extras":{}"#),
        EdgeCase("no sightings", replacing: #"[{"#, with: #"[ ], "x":[{"#),
        EdgeCase("an exponent with a capital E and a plus", replacing: #""sent":1763812800.5"#, with: #""sent":1E+2"#),
        EdgeCase("a negative zero double", replacing: #""t":1763812800.123456"#, with: #""t":-0.0"#),
        EdgeCase("the smallest subnormal", replacing: #""t":1763812800.123456"#, with: #""t":5e-324"#),
        EdgeCase("a true zero with an exponent", replacing: #""t":1763812800.123456"#, with: #""t":0e400"#),
        EdgeCase("an integer double", replacing: #""t":1763812800.123456"#, with: #""t":1763812800"#),
        EdgeCase(
            "a double with more digits than it holds", replacing: #""t":1763812800.123456"#,
            with: #""t":1763812800.12345678901234567890123456789"#),
        EdgeCase(
            "all four kinds of whitespace everywhere",
            Array(
                (" \n\t\r"
                    + baseText.replacingOccurrences(of: "\":", with: "\" \t:\r\n ").replacingOccurrences(
                        of: ",\"", with: "\n,\t\""
                    ).replacingOccurrences(of: "{", with: "{ ").replacingOccurrences(
                        of: "}", with: "\n}") + "\r\n \t").utf8)),
    ]

    static let refused: [EdgeCase] = [
        // Foundation keeps the first value of a duplicate key.
        EdgeCase("a duplicate batch key", replacing: #""seq":7"#, with: #""seq":7,"seq":8"#),
        EdgeCase("a duplicate sighting key", replacing: #""rssi":-70"#, with: #""rssi":-70,"rssi":-71"#),
        EdgeCase("a duplicate through an escape", replacing: #""rssi":-70"#, with: #""rssi":-70,"\u0072ssi":-71"#),
        EdgeCase("a duplicate null", replacing: #""txPower":-59"#, with: #""txPower":null,"txPower":-59"#),
        // Foundation reads these as -70.
        EdgeCase("an integer written as a fraction", replacing: #""rssi":-70"#, with: #""rssi":-70.0"#),
        EdgeCase("an integer written with an exponent", replacing: #""rssi":-70"#, with: #""rssi":-7e1"#),
        EdgeCase("a fractional integer", replacing: #""rssi":-70"#, with: #""rssi":-70.5"#),
        // Foundation accepts trailing commas.
        EdgeCase("a trailing comma in an object", replacing: #"}]}"#, with: #",}]}"#),
        EdgeCase("a trailing comma in an array", replacing: #"}]}"#, with: #"},]}"#),
        EdgeCase("trailing garbage", replacing: #"}]}"#, with: #"}]} x"#),
        EdgeCase("a second object", replacing: #"}]}"#, with: #"}]}{}"#),
        EdgeCase("a byte-order mark", Array("\u{FEFF}".utf8) + base(replacing: "", with: "")),
        EdgeCase("version 2", replacing: #""version":1"#, with: #""version":2"#),
        EdgeCase("version 0", replacing: #""version":1"#, with: #""version":0"#),
        EdgeCase("version 1.0", replacing: #""version":1"#, with: #""version":1.0"#),
        EdgeCase("no version", replacing: #""version":1,"#, with: ""),
        EdgeCase("no rssi", replacing: #""rssi":-70,"#, with: ""),
        EdgeCase(
            "a null beacon", replacing: #""beacon":"ibeacon:e2c56db5-dffb-48d2-b060-d0f5a71096e0:1:2""#,
            with: #""beacon":null"#),
        EdgeCase("a negative seq", replacing: #""seq":7"#, with: #""seq":-1"#),
        EdgeCase("seq -0", replacing: #""seq":7"#, with: #""seq":-0"#),
        EdgeCase("seq beyond UInt64", replacing: #""seq":7"#, with: #""seq":18446744073709551616"#),
        EdgeCase("rssi beyond Int", replacing: #""rssi":-70"#, with: #""rssi":9223372036854775808"#),
        EdgeCase("rssi below Int", replacing: #""rssi":-70"#, with: #""rssi":-9223372036854775809"#),
        EdgeCase("a double that overflows", replacing: #""t":1763812800.123456"#, with: #""t":1e400"#),
        EdgeCase("a double that underflows", replacing: #""t":1763812800.123456"#, with: #""t":1e-400"#),
        EdgeCase("a leading zero", replacing: #""t":1763812800.123456"#, with: #""t":01"#),
        EdgeCase("a bare decimal point", replacing: #""t":1763812800.123456"#, with: #""t":1."#),
        EdgeCase("no integer part", replacing: #""t":1763812800.123456"#, with: #""t":.5"#),
        EdgeCase("a plus sign", replacing: #""t":1763812800.123456"#, with: #""t":+1"#),
        EdgeCase("an empty exponent", replacing: #""t":1763812800.123456"#, with: #""t":1e"#),
        EdgeCase("a quoted number", replacing: #""t":1763812800.123456"#, with: #""t":"1""#),
        EdgeCase("a lone high surrogate", replacing: #""boot":"b1""#, with: #""boot":"\ud83d""#),
        EdgeCase("a high surrogate before a letter", replacing: #""boot":"b1""#, with: #""boot":"\ud83dx""#),
        EdgeCase("two high surrogates", replacing: #""boot":"b1""#, with: #""boot":"\ud83d\ud83d""#),
        EdgeCase("a lone low surrogate", replacing: #""boot":"b1""#, with: #""boot":"\ude00""#),
        EdgeCase("an unknown escape", replacing: #""boot":"b1""#, with: #""boot":"\x""#),
        EdgeCase("a capital U escape", replacing: #""boot":"b1""#, with: #""boot":"\U0041""#),
        EdgeCase("a short unicode escape", replacing: #""boot":"b1""#, with: #""boot":"\u41""#),
        EdgeCase("a raw tab in a string", base(replacing: "b1", withBytes: [0x62, 0x09, 0x31])),
        EdgeCase("a raw NUL in a key", base(replacing: #""boot""#, withBytes: Array(#""bo"#.utf8) + [0, 0x22])),
        EdgeCase("invalid UTF-8", base(replacing: "b1", withBytes: [0x62, 0xFF])),
        EdgeCase("an overlong encoding", base(replacing: "b1", withBytes: [0xC0, 0x80])),
        EdgeCase("an encoded surrogate", base(replacing: "b1", withBytes: [0xED, 0xA0, 0x80])),
        EdgeCase(
            "a truncated sequence before an escape",
            base(replacing: "b1", withBytes: Array("\u{C3}".utf8.prefix(1)) + Array(#"\n"#.utf8))),
        EdgeCase("an unknown kind", replacing: #""kind":"ibeacon""#, with: #""kind":"ibeacon2""#),
        EdgeCase("a gateway that is no topic level", replacing: #""gw-1""#, with: #""gw/1""#),
        EdgeCase("a number for a Bool", replacing: #""clockSynced":true"#, with: #""clockSynced":1"#),
        EdgeCase("a misspelt literal", replacing: #""clockSynced":true"#, with: #""clockSynced":tru"#),
        EdgeCase("sightings as an object", replacing: #""sightings":["#, with: #""sightings":{"a":["#),
        EdgeCase(
            "an advertising count beyond UInt32", replacing: #""kind":"ibeacon""#,
            with: #""extras":{"tlm":{"version":0,"advertisingCount":4294967296}}"#),
        EdgeCase("telemetry without a version", replacing: #""kind":"ibeacon""#, with: #""extras":{"tlm":{}}"#),
        // Foundation skips unknown members without reading their strings and numbers.
        EdgeCase("a bad escape in an unknown member", replacing: #""boot":"b1""#, with: #""boot":"b1","note":"\x""#),
        EdgeCase("a bad number in an unknown member", replacing: #""boot":"b1""#, with: #""boot":"b1","note":01"#),
        EdgeCase(
            "invalid UTF-8 in an unknown key",
            base(replacing: #""boot""#, withBytes: Array(#""x"#.utf8) + [0xFF] + Array(#"":1,"boot""#.utf8))),
        EdgeCase(
            "nesting deeper than 32 in an unknown member",
            base(
                replacing: #""boot":"b1""#,
                with: #""boot":"b1","deep":"# + String(repeating: "[", count: 40) + String(repeating: "]", count: 40))),
        EdgeCase("an empty payload", []),
        EdgeCase("only whitespace", Array("  \n".utf8)),
        EdgeCase("an array at the top", Array("[\(baseText)]".utf8)),
    ]
}

/// SplitMix64: seeded and reproducible.
struct SplitMix64: RandomNumberGenerator {
    private var state: UInt64

    init(seed: UInt64) { state = seed }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var mixed = state
        mixed = (mixed ^ (mixed >> 30)) &* 0xBF58_476D_1CE4_E5B9
        mixed = (mixed ^ (mixed >> 27)) &* 0x94D0_49BB_1331_11EB
        return mixed ^ (mixed >> 31)
    }

    /// An independent generator, so that one consumer's draws do not shift another's.
    mutating func split() -> SplitMix64 { SplitMix64(seed: next()) }
}

extension RandomNumberGenerator {
    mutating func chance(_ probability: Double) -> Bool {
        Double.random(in: 0..<1, using: &self) < probability
    }
    mutating func pick<T>(_ choices: [T]) -> T { choices.randomElement(using: &self)! }
}

/// Random batches that reach every corner of the payload.
enum RandomBatch {
    static func make(sightings count: Int, using random: inout SplitMix64) -> SightingBatch {
        let idCharacters = Array("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._:-")
        let gateway = String((0..<Int.random(in: 1...64, using: &random)).map { _ in random.pick(idCharacters) })
        let small = UInt64.random(in: 1...100_000, using: &random)
        let any = random.next()
        let seq: UInt64 = random.pick([0, 1, .max, 9_007_199_254_740_993, small, any])
        return SightingBatch(
            gateway: GatewayID(rawValue: gateway)!, boot: text(using: &random), seq: seq, sent: double(using: &random),
            clockSynced: Bool.random(using: &random),
            sightings: (0..<count).map { _ in sighting(using: &random) })
    }

    static func sighting(using random: inout SplitMix64) -> Sighting {
        Sighting(
            t: double(using: &random), beacon: text(using: &random), rssi: int(using: &random),
            txPower: random.chance(0.6) ? int(using: &random) : nil,
            kind: random.chance(0.7) ? random.pick(AdvertisementKind.allCases) : nil,
            address: random.chance(0.6) ? text(using: &random) : nil,
            extras: random.chance(0.3) ? extras(using: &random) : nil)
    }

    static func extras(using random: inout SplitMix64) -> SightingExtras {
        SightingExtras(
            tlm: random.chance(0.6)
                ? Telemetry(
                    version: int(using: &random), batteryMilliVolts: random.chance(0.7) ? int(using: &random) : nil,
                    temperatureCelsius: random.chance(0.7) ? double(using: &random) : nil,
                    advertisingCount: random.chance(0.7) ? count(using: &random) : nil,
                    secondsSinceBoot: random.chance(0.7) ? double(using: &random) : nil,
                    raw: random.chance(0.3) ? text(using: &random) : nil)
                : nil,
            url: random.chance(0.6) ? "https://example.com/" + text(using: &random) : nil)
    }

    static func count(using random: inout SplitMix64) -> UInt32 {
        let any = UInt32.random(in: 0...UInt32.max, using: &random)
        return random.pick([0, .max, any])
    }

    static func int(using random: inout SplitMix64) -> Int {
        switch Int.random(in: 0..<10, using: &random) {
        case 0: random.pick([.min, .max, 0, -1, 1])
        case 1: Int(truncatingIfNeeded: random.next())
        default: Int.random(in: -127...20, using: &random)
        }
    }

    static func double(using random: inout SplitMix64) -> Double {
        switch Int.random(in: 0..<10, using: &random) {
        case 0:
            return random.pick([
                1_763_812_800.123456, 0, -0.0, .leastNonzeroMagnitude, .leastNormalMagnitude, .greatestFiniteMagnitude,
                1e-300, 0.1, 123_456_789_012_345_680, -1.5, 9_007_199_254_740_994, 1e22, 1e23,
            ])
        case 1:
            var value = Double.nan
            while !value.isFinite { value = Double(bitPattern: random.next()) }
            return value
        case 2: return Double(Int.random(in: 1_700_000_000...1_800_000_000, using: &random))
        case 3: return Double.random(in: -100...100, using: &random)
        default:
            // Timestamps with microseconds, as the agent writes them.
            return 1_763_812_800 + Double(Int.random(in: 0...86_400_000_000, using: &random)) / 1_000_000
        }
    }

    /// Strings with escapes, control characters, combining marks, astral scalars and separators.
    static func text(using random: inout SplitMix64) -> String {
        let pieces = [
            "a", "Z", "0", " ", ":", "-", "ibeacon:", "\"", "\\", "/", "\n", "\t", "\u{0}", "\u{8}", "\u{C}", "\u{1F}",
            "\u{7F}", "é", "e\u{301}", "ß", "中", "😀", "👩‍👩‍👧", "\u{2028}", "\u{FEFF}", "\u{FFFF}", "\u{10FFFF}",
            "\u{D7FF}", "\u{E000}",
        ]
        return (0..<Int.random(in: 0...12, using: &random)).map { _ in random.pick(pieces) }.joined()
    }
}

/// A parsed JSON value that keeps each number's text as written.
indirect enum JSONTree {
    case object([(key: String, value: JSONTree)])
    case array([JSONTree])
    case string(String)
    case number(String)
    case literal(String)
}

/// Rewrites a payload into another that means the same to `JSONDecoder`: members shuffled, whitespace anywhere,
/// characters escaped at random, nulls for absent optionals, and unknown members at every level.
struct Reshaper {
    var random: SplitMix64

    mutating func reshape(_ payload: [UInt8]) throws -> [UInt8] {
        var parser = TreeParser(bytes: payload)
        let tree = try parser.parse()
        var output = whitespace()
        write(decorate(tree, as: .batch), into: &output)
        output += whitespace()
        return Array(output.utf8)
    }

    enum Level {
        case batch, sighting, extras, telemetry, other

        var optionalKeys: [String] {
            switch self {
            case .sighting: ["txPower", "kind", "address", "extras"]
            case .extras: ["tlm", "url"]
            case .telemetry: ["batteryMilliVolts", "temperatureCelsius", "advertisingCount", "secondsSinceBoot", "raw"]
            case .batch, .other: []
            }
        }
    }

    private mutating func decorate(_ tree: JSONTree, as level: Level) -> JSONTree {
        guard case .object(var members) = tree else { return tree }
        members = members.map { member -> (key: String, value: JSONTree) in
            switch (level, member.key, member.value) {
            case (.batch, "sightings", .array(let items)):
                (member.key, .array(items.map { decorate($0, as: .sighting) }))
            case (.sighting, "extras", _): (member.key, decorate(member.value, as: .extras))
            case (.extras, "tlm", _): (member.key, decorate(member.value, as: .telemetry))
            default: member
            }
        }
        for key in level.optionalKeys where !members.contains(where: { $0.key == key }) && random.chance(0.3) {
            members.append((key, .literal("null")))
        }
        if random.chance(0.15) {
            let key = random.pick(["note", "version", "t", "tlm", "sightings", "x-vendör", "rssi2", ""])
            if !members.contains(where: { $0.key == key }) && !Self.knownKeys(level).contains(key) {
                members.append((key, unknownValue(depth: 0)))
            }
        }
        members.shuffle(using: &random)
        return .object(members)
    }

    private static func knownKeys(_ level: Level) -> [String] {
        switch level {
        case .batch: ["version", "gateway", "boot", "seq", "sent", "clockSynced", "sightings"]
        case .sighting: ["t", "beacon", "rssi", "txPower", "kind", "address", "extras"]
        case .extras: ["tlm", "url"]
        case .telemetry:
            ["version", "batteryMilliVolts", "temperatureCelsius", "advertisingCount", "secondsSinceBoot", "raw"]
        case .other: []
        }
    }

    private mutating func unknownValue(depth: Int) -> JSONTree {
        switch Int.random(in: 0..<(depth < 3 ? 6 : 4), using: &random) {
        case 0: .string(RandomBatch.text(using: &random))
        case 1: .number(random.pick(["0", "-0", "12", "-3.25", "1e5", "2E-3", "6.02e+23", "-0.0", "1e400"]))
        case 2: .literal(random.pick(["true", "false", "null"]))
        case 3: .array([])
        case 4: .array((0..<Int.random(in: 0...3, using: &random)).map { _ in unknownValue(depth: depth + 1) })
        default:
            .object(
                (0..<Int.random(in: 0...3, using: &random)).map { index in ("k\(index)", unknownValue(depth: depth + 1))
                })
        }
    }

    private mutating func whitespace() -> String {
        guard random.chance(0.3) else { return "" }
        return String((0..<Int.random(in: 1...3, using: &random)).map { _ in random.pick([" ", "\t", "\n", "\r"]) })
    }

    private mutating func write(_ tree: JSONTree, into output: inout String) {
        switch tree {
        case .object(let members):
            output += "{" + whitespace()
            for (index, member) in members.enumerated() {
                if index > 0 { output += "," + whitespace() }
                writeString(member.key, into: &output)
                output += whitespace() + ":" + whitespace()
                write(member.value, into: &output)
                output += whitespace()
            }
            output += "}"
        case .array(let items):
            output += "[" + whitespace()
            for (index, item) in items.enumerated() {
                if index > 0 { output += "," + whitespace() }
                write(item, into: &output)
                output += whitespace()
            }
            output += "]"
        case .string(let text):
            writeString(text, into: &output)
        case .number(let text):
            output += random.chance(0.3) ? text.uppercased() : text
        case .literal(let text):
            output += text
        }
    }

    private mutating func writeString(_ text: String, into output: inout String) {
        output += "\""
        for scalar in text.unicodeScalars {
            let short: String? =
                switch scalar {
                case "\"": "\\\""
                case "\\": "\\\\"
                case "/": random.chance(0.5) ? "\\/" : nil
                case "\u{8}": "\\b"
                case "\u{C}": "\\f"
                case "\n": "\\n"
                case "\r": "\\r"
                case "\t": "\\t"
                default: nil
                }
            if let short, random.chance(0.8) {
                output += short
            } else if scalar.value < 0x20 || scalar == "\"" || scalar == "\\" || random.chance(0.15) {
                for unit in String(scalar).utf16 {
                    let hex = String(unit, radix: 16)
                    let padded = String(repeating: "0", count: 4 - hex.count) + hex
                    output += "\\u" + (random.chance(0.5) ? padded.uppercased() : padded)
                }
            } else {
                output.unicodeScalars.append(scalar)
            }
        }
        output += "\""
    }
}

/// Parses the encoder's output (valid JSON) into a `JSONTree`.
struct TreeParser {
    let bytes: [UInt8]
    var index = 0

    struct Malformed: Error {}

    mutating func parse() throws -> JSONTree {
        skipWhitespace()
        guard index < bytes.count else { throw Malformed() }
        switch bytes[index] {
        case UInt8(ascii: "{"):
            index += 1
            var members: [(key: String, value: JSONTree)] = []
            skipWhitespace()
            if bytes[index] == UInt8(ascii: "}") {
                index += 1
                return .object(members)
            }
            while true {
                skipWhitespace()
                let key = try parseString()
                skipWhitespace()
                index += 1  // colon
                members.append((key, try parse()))
                skipWhitespace()
                index += 1
                if bytes[index - 1] == UInt8(ascii: "}") { return .object(members) }
            }
        case UInt8(ascii: "["):
            index += 1
            var items: [JSONTree] = []
            skipWhitespace()
            if bytes[index] == UInt8(ascii: "]") {
                index += 1
                return .array(items)
            }
            while true {
                items.append(try parse())
                skipWhitespace()
                index += 1
                if bytes[index - 1] == UInt8(ascii: "]") { return .array(items) }
            }
        case UInt8(ascii: "\""):
            return .string(try parseString())
        case UInt8(ascii: "t"), UInt8(ascii: "f"), UInt8(ascii: "n"):
            let start = index
            while index < bytes.count, (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(bytes[index]) { index += 1 }
            return .literal(String(decoding: bytes[start..<index], as: UTF8.self))
        default:
            let start = index
            while index < bytes.count, Array("-+.eE0123456789".utf8).contains(bytes[index]) { index += 1 }
            return .number(String(decoding: bytes[start..<index], as: UTF8.self))
        }
    }

    private mutating func parseString() throws -> String {
        let start = index
        index += 1
        while bytes[index] != UInt8(ascii: "\"") { index += bytes[index] == UInt8(ascii: "\\") ? 2 : 1 }
        index += 1
        return try JSONDecoder().decode(String.self, from: Data(bytes[start..<index]))
    }

    private mutating func skipWhitespace() {
        while index < bytes.count, [0x20, 0x09, 0x0A, 0x0D].contains(bytes[index]) { index += 1 }
    }
}

/// Byte-level damage to a payload: a flipped or replaced byte, a deleted range, inserted bytes, a duplicated range.
enum Mutation {
    static let interesting =
        Array(#"{}[],:"\/-+.0123456789eEntfu "#.utf8) + [0x00, 0x09, 0x0A, 0x1F, 0x7F, 0x80, 0xC3, 0xFF]

    static func apply(to payload: inout [UInt8], using random: inout SplitMix64) {
        guard !payload.isEmpty else { return }
        let position = Int.random(in: 0..<payload.count, using: &random)
        switch Int.random(in: 0..<5, using: &random) {
        case 0:
            payload[position] ^= 1 << UInt8.random(in: 0..<8, using: &random)
        case 1:
            payload[position] = random.pick(interesting)
        case 2:
            payload.removeSubrange(position..<min(payload.count, position + Int.random(in: 1...4, using: &random)))
        case 3:
            payload.insert(
                contentsOf: (0..<Int.random(in: 1...3, using: &random)).map { _ in random.pick(interesting) },
                at: position)
        default:
            let range = position..<min(payload.count, position + Int.random(in: 1...40, using: &random))
            let target = Int.random(in: 0...payload.count, using: &random)
            payload.insert(contentsOf: Array(payload[range]), at: random.chance(0.5) ? range.upperBound : target)
        }
    }
}
