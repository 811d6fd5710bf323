import BeaconModel
import Foundation
import Testing

/// `TagState.fastEncoded` against Foundation: the same bytes as `ContractCoding.encode` for any state.
@Suite struct TagStateFastEncodingTests {
    @Test func writesTheBytesFoundationWritesForRandomStates() throws {
        var random = SplitMix64(seed: 2125)
        for round in 0..<400 {
            let state = Self.state(using: &random)
            let fast = try #require(state.fastEncoded(), "round \(round)")
            let foundation = try ContractCoding.encode(state)
            let same = fast == foundation
            #expect(same, "round \(round): \(String(decoding: fast, as: UTF8.self).prefix(400))")
        }
    }

    @Test func writesAnOutsideStateWithAnExplicitNullZone() throws {
        let state = TagState(
            tag: "guide-1", beacon: "ibeacon:x", state: .outside, zone: nil, since: 1e-7, confidence: 0,
            lastSeen: nil, gateways: [])
        let fast = try #require(state.fastEncoded())
        #expect(fast == (try ContractCoding.encode(state)))
        #expect(String(decoding: fast, as: UTF8.self).hasSuffix("\"zone\":null}"))
    }

    /// What JSONEncoder refuses is not written either: the caller falls back to it and gets its error.
    @Test func refusesNumbersThatAreNotFinite() {
        let state = TagState(
            tag: "guide-1", beacon: "b", state: .inside, zone: "hall", since: 0, confidence: .infinity, lastSeen: 1,
            gateways: [])
        #expect(state.fastEncoded() == nil)
        #expect(throws: (any Error).self) { try ContractCoding.encode(state) }
    }

    static func state(using random: inout SplitMix64) -> TagState {
        let idCharacters = Array("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._:-")
        func id(using random: inout SplitMix64) -> String {
            String((0..<Int.random(in: 1...24, using: &random)).map { _ in random.pick(idCharacters) })
        }
        let readings = (0..<Int.random(in: 0...8, using: &random)).map { _ in
            TagState.GatewayReading(
                gateway: GatewayID(rawValue: id(using: &random))!, rssi: RandomBatch.int(using: &random),
                distance: random.chance(0.7) ? RandomBatch.double(using: &random) : nil,
                proximity: random.pick([.immediate, .near, .far, .unknown]),
                lastSeen: RandomBatch.double(using: &random))
        }
        let state = random.pick(TagState.State.allCases)
        var tagState = TagState(
            tag: TagID(rawValue: id(using: &random))!, beacon: RandomBatch.text(using: &random), state: state,
            zone: random.chance(0.6) ? ZoneID(rawValue: id(using: &random))! : nil,
            since: RandomBatch.double(using: &random),
            confidence: random.chance(0.5)
                ? Double.random(in: 0...1, using: &random) : RandomBatch.double(using: &random),
            lastSeen: random.chance(0.8) ? RandomBatch.double(using: &random) : nil, gateways: readings,
            position: random.chance(0.5)
                ? TagState.Position(
                    x: RandomBatch.double(using: &random), y: RandomBatch.double(using: &random),
                    radius: RandomBatch.double(using: &random))
                : nil)
        // Tag health.
        if random.chance(0.5) {
            tagState.lastSeenZone = ZoneID(rawValue: id(using: &random))!
            tagState.lastSeenGateway = random.chance(0.8) ? GatewayID(rawValue: id(using: &random))! : nil
        }
        if random.chance(0.5) {
            tagState.battery = TagState.Battery(
                milliVolts: RandomBatch.int(using: &random), level: random.pick(TagState.Battery.Level.allCases),
                t: RandomBatch.double(using: &random),
                trendPerWeek: random.chance(0.5) ? RandomBatch.double(using: &random) : nil)
        }
        if random.chance(0.5) {
            tagState.telemetry = TagState.TagTelemetry(
                t: RandomBatch.double(using: &random),
                temperatureCelsius: random.chance(0.7) ? RandomBatch.double(using: &random) : nil,
                advertisingCount: random.chance(0.7) ? UInt32.random(in: 0...UInt32.max, using: &random) : nil,
                secondsSinceBoot: random.chance(0.7) ? RandomBatch.double(using: &random) : nil)
        }
        if random.chance(0.3) { tagState.missing = random.chance(0.5) }
        if random.chance(0.5) {
            tagState.adverts = TagState.Adverts(
                seenPerMinute: RandomBatch.double(using: &random),
                expectedPerMinute: random.chance(0.6) ? RandomBatch.double(using: &random) : nil,
                t: RandomBatch.double(using: &random))
        }
        return tagState
    }
}
