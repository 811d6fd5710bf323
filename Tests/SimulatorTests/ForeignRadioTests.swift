import BeaconConfig
import BeaconModel
import Foundation
import Testing

@testable import Simulator

#if canImport(Glibc)
    import Glibc
#endif

/// The foreign radio (`radio.foreign`) is what its keys say: Nakagami fading with its theoretical spread and long lower
/// tail, receivers that quantise, saturate and differ in sensitivity, fade bursts that silence a link for seconds,
/// crowds that come and go; and a foreign random venue is the seed's standard venue with that radio.
@Suite struct ForeignRadioTests {
    /// Every foreign effect off unless `foreign` turns it on (a key per line, under `radio.foreign:`).
    static func lab(
        foreign: [String], gateways: Int = 1, tags: [String]? = nil, sensitivity: Int = -120
    ) throws -> Venue {
        let beacon = "ibeacon:e2c56db5-dffb-48d2-b060-d0f5a71096e0"
        let tagLines = tags ?? ["  - { id: still, beacon: \"\(beacon):1:1\", carrier: still, count: 2 }"]
        let gatewayLines = (1...gateways).map { "  - { id: gw-\($0), zone: room, position: [\(2 * $0), 5] }" }
        let off = [
            "coarseShadowingSigma: 0", "channelSigma: 0", "sensitivitySpreadDB: 0", "quantisedShare: 0",
            "saturatedShare: 0", "fadeBurstsPerMinute: 0", "crowdedShare: 0",
        ]
        let keys = foreign.map { $0.components(separatedBy: ":")[0] }
        let lines = off.filter { !keys.contains($0.components(separatedBy: ":")[0]) } + foreign
        return try VenueLoader.decode(
            """
            site: lab
            zones:
              - { id: room, rect: { x: 0, y: 0, width: 30, height: 10 } }
            gateways:
            \(gatewayLines.joined(separator: "\n"))
            tags:
            \(tagLines.joined(separator: "\n"))
            radio:
              sensitivity: \(sensitivity)
              gatewayGainSigma: 0
              shadowingSigma: 0
              packetLoss: 0
              foreign:
            \(lines.map { "    " + $0 }.joined(separator: "\n"))
            """, file: "lab.yaml")
    }

    /// `count` receptions at gateway `gateway` of packets whose link level is `mean`.
    func levels(_ venue: Venue, mean: Double, count: Int, gateway: GatewayID = "gw-1", seed: UInt64 = 1) -> [Double] {
        var rng = SeededGenerator(seed: seed)
        let radio = RadioModel(venue: venue, using: &rng)
        return (0..<count).compactMap {
            _ in radio.receive(mean: mean, fading: 0, gateway: gateway, from: Point(5, 5), using: &rng).map(Double.init)
        }
    }

    func meanAndSigma(_ values: [Double]) -> (mean: Double, sigma: Double) {
        let mean = values.reduce(0, +) / Double(values.count)
        let variance = values.map { ($0 - mean) * ($0 - mean) }.reduce(0, +) / Double(values.count - 1)
        return (mean, variance.squareRoot())
    }

    /// Nakagami-m power in dB has σ = (10 / ln 10)·√ψ′(m): 5.57 dB for m = 1 (Rayleigh), 2.73 dB for m = 3; its mean
    /// is taken out, so the link's level is the mean in dB; and it fades deep far more often than it peaks.
    @Test(arguments: [(1.0, 5.57), (3.0, 2.73)])
    func packetsFadeWithTheNakagamiSpread(m: Double, sigma: Double) throws {
        let heard = levels(try Self.lab(foreign: ["nakagamiM: \(m)"]), mean: -60, count: 40_000)
        #expect(heard.count == 40_000)
        let (mean, spread) = meanAndSigma(heard)
        #expect(abs(mean + 60) < 0.15, "mean \(mean)")
        // Rounding to whole dBm adds 1/12 dB² of variance.
        #expect(abs(spread - (sigma * sigma + 1.0 / 12).squareRoot()) < 0.15, "σ \(spread)")
        let sorted = heard.sorted()
        let low = -60 - sorted[heard.count / 100]
        let high = sorted[heard.count - heard.count / 100] + 60
        #expect(low > 1.5 * high, "1 % tails: \(low) dB below, \(high) dB above")
    }

    @Test func receiversQuantiseSaturateAndDifferInSensitivity() throws {
        let quantised = try Self.lab(foreign: ["nakagamiM: 2", "quantisedShare: 1", "quantisationDB: 4"])
        #expect(levels(quantised, mean: -70, count: 2_000).allSatisfy { Int($0) % 4 == 0 })
        let saturated = try Self.lab(foreign: ["nakagamiM: 2", "saturatedShare: 1", "saturationDBm: -60"])
        let loud = levels(saturated, mean: -50, count: 2_000)
        #expect(loud.max() == -60)
        #expect(Double(loud.count { $0 == -60 }) > 0.9 * Double(loud.count))
        // Eight receivers, sensitivities spread over 10 dB above −120: what each hears of a link at −115 differs.
        let spread = try Self.lab(foreign: ["nakagamiM: 20", "sensitivitySpreadDB: 10"], gateways: 8)
        let shares = spread.gateways.map {
            Double(levels(spread, mean: -115, count: 2_000, gateway: $0.id).count) / 2_000
        }
        #expect(shares.contains { $0 > 0.9 } && shares.contains { $0 < 0.1 }, "heard shares \(shares)")
        let even = try Self.lab(foreign: ["nakagamiM: 20"], gateways: 8)
        let evenShares = even.gateways.map { levels(even, mean: -115, count: 2_000, gateway: $0.id).count }
        #expect(evenShares.allSatisfy { $0 > 1_900 }, "without a spread every receiver hears: \(evenShares)")
    }

    /// The longest silence of each (tag, gateway) link of a run, seconds.
    func longestSilences(_ venue: Venue, seconds: Double) -> [Double] {
        var simulation = VenueSimulation(venue: venue, seed: 3, start: 1_000)
        var last: [String: Double] = [:]
        var longest: [String: Double] = [:]
        simulation.run(
            until: 1_000 + seconds,
            sighting: { line in
                let link = "\(line.beacon) \(line.gateway)"
                longest[link] = max(longest[link] ?? 0, line.t - (last[link] ?? 1_000))
                last[link] = line.t
            }, truth: { _ in })
        return Array(longest.values)
    }

    @Test func fadeBurstsSilenceALinkForSeconds() throws {
        // Tags every 0.1 s, heard at −91 dBm or louder, a sensitivity of −100 dBm: a burst of 40 dB silences them.
        let beacon = "ibeacon:e2c56db5-dffb-48d2-b060-d0f5a71096e0"
        let tags = ["  - { id: still, beacon: \"\(beacon):1:1\", carrier: still, interval: 0.1, count: 2 }"]
        let steady = try Self.lab(foreign: ["nakagamiM: 20"], tags: tags, sensitivity: -100)
        let bursty = try Self.lab(
            foreign: ["nakagamiM: 20", "fadeBurstsPerMinute: 2", "fadeBurstSeconds: 4", "fadeBurstDB: 40"], tags: tags,
            sensitivity: -100)
        #expect(longestSilences(steady, seconds: 600).allSatisfy { $0 < 0.5 })
        // Ten minutes, two bursts a minute of 4 s on average: every link has a silence of well over a second.
        let silences = longestSilences(bursty, seconds: 600)
        #expect(silences.count == 2 && silences.allSatisfy { $0 > 2 }, "\(silences)")
    }

    @Test func aCrowdAttenuatesTheTagsInItsRoomWhileItIsThere() throws {
        let crowded = try Self.lab(
            foreign: ["nakagamiM: 20", "crowdedShare: 1", "crowdPeriodMinutes: 10", "crowdLossDB: 10"])
        var simulation = VenueSimulation(venue: crowded, seed: 3, start: 0)
        let foreign = try #require(simulation.radio.foreign)
        let crowd = try #require(foreign.crowds["room"])
        // Over one period the room is full at the crest (the whole of its loss at this gateway, 3 to 10 dB) and empty
        // for half of it.
        let losses = stride(from: 0.0, to: 600, by: 1).map { foreign.crowdLoss(zone: "room", gateway: "gw-1", at: $0) }
        let full = try #require(crowd.loss["gw-1"])
        #expect((3...10).contains(full))
        #expect(abs((losses.max() ?? 0) - full) < 0.05)
        let empty = Double(losses.count { $0 == 0 }) / Double(losses.count)
        #expect(abs(empty - 0.5) < 0.1, "empty \(empty) of the time")
        // The heard levels follow it.
        var quiet: [Double] = []
        var packed: [Double] = []
        simulation.run(
            until: 1_200,
            sighting: { line in
                let loss = foreign.crowdLoss(zone: "room", gateway: line.gateway, at: line.t)
                if loss == 0 {
                    quiet.append(Double(line.rssi))
                } else if loss > 0.9 * full {
                    packed.append(Double(line.rssi))
                }
            }, truth: { _ in })
        let drop = meanAndSigma(quiet).mean - meanAndSigma(packed).mean
        #expect(abs(drop - 0.95 * full) < 1.5, "dropped \(drop) dB for a loss of \(full)")
    }

    @Test func aForeignRandomVenueIsTheSeedsLayoutWithTheForeignRadio() throws {
        typealias Ranges = RandomVenue.ForeignRanges
        for seed in UInt64(1)...40 {
            let standard = RandomVenue.generate(seed: seed)
            let drawn = RandomVenue.generate(seed: seed, radio: .foreign)
            #expect(drawn.family == standard.family && drawn.radio == .foreign)
            let plain = try VenueLoader.decode(standard.yaml, file: "standard.yaml")
            let venue = try VenueLoader.decode(drawn.yaml, file: "foreign.yaml")
            #expect(plain.radio.foreign == nil)
            #expect(venue.zones == plain.zones && venue.doors == plain.doors && venue.walls == plain.walls)
            #expect(venue.gateways == plain.gateways)
            #expect(venue.tags.map(\.id) == plain.tags.map(\.id))
            #expect(venue.tags.allSatisfy { !$0.advertisesPower }, "seed \(seed): every tag keeps its power to itself")
            let foreign = try #require(venue.radio.foreign)
            #expect(Ranges.nakagamiM.contains(foreign.nakagamiM))
            #expect(Ranges.coarseShadowingMetres.contains(foreign.coarseShadowingMetres))
            #expect(Ranges.sensitivitySpreadDB.contains(foreign.sensitivitySpreadDB))
            #expect(Ranges.saturationDBm.contains(foreign.saturationDBm))
            #expect(Ranges.fadeBurstDB.contains(foreign.fadeBurstDB))
            #expect(Ranges.crowdLossDB.contains(foreign.crowdLossDB))
            #expect(Ranges.p0Spread.contains(venue.radio.p0Spread))
            #expect(RandomVenue.generate(seed: seed, radio: .foreign).yaml == drawn.yaml)
        }
        let chosen = try Bench.venues(count: 3, from: Bench.testSeeds, radio: .foreign)
        #expect(chosen.allSatisfy { $0.radio == .foreign && $0.yaml.contains("  foreign:\n") })
    }

    @Test func aForeignSectionIsCheckedLikeTheRest() throws {
        #expect(throws: ConfigError.self) { try Self.lab(foreign: ["nakagami: 2"]) }
        do {
            _ = try Self.lab(foreign: ["nakagami: 2"])
        } catch {
            #expect("\(error)".contains("radio.foreign.nakagami"), "\(error)")
        }
        #expect(throws: (any Error).self) { try Self.lab(foreign: ["nakagamiM: 0.1"]) }
        #expect(throws: (any Error).self) { try Self.lab(foreign: ["saturationDBm: 0"]) }
    }
}
