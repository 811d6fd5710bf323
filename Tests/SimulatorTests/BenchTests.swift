import Foundation
import Simulator
import Testing

@Suite struct BenchTests {
    /// A score with the given figures (ZoneScore's memberwise initialiser is internal; JSON is its public face).
    static func score(
        _ accuracy: Double, falsePerHour: Double = 1, latency: (median: Double, p90: Double)? = (2, 4)
    ) -> ZoneScore {
        var fields: [String: Any] = [
            "accuracy": accuracy, "falseTransitionsPerTagHour": falsePerHour, "falseTransitions": 1,
            "missedTransitions": 0, "trueTransitions": 10, "noZoneShare": 0, "tagHours": 1,
        ]
        if let latency {
            fields["latencyMedian"] = latency.median
            fields["latencyP90"] = latency.p90
        }
        let data = try! JSONSerialization.data(withJSONObject: fields)
        return try! JSONDecoder().decode(ZoneScore.self, from: data)
    }

    static func row(
        _ seed: UInt64, _ family: String, hub: Double, baseline: Double? = nil, oracle: Double? = nil,
        falsePerHour: Double = 1
    ) -> BenchReport.Row {
        BenchReport.Row(
            seed: seed, family: family, zones: 10, gateways: 12, hub: score(hub, falsePerHour: falsePerHour),
            baseline: baseline.map { score($0) }, oracle: oracle.map { score($0) })
    }

    // MARK: - Seeds

    @Test(
        arguments: [
            ("1..100", 1...100), ("1001..1100", 1001...1100), ("5...7", 5...7), (" 3..3 ", 3...3),
        ] as [(String, ClosedRange<UInt64>)])
    func parsesSeedRanges(text: String, range: ClosedRange<UInt64>) throws {
        #expect(try Bench.parseSeeds(text) == range)
    }

    @Test(arguments: ["", "1-100", "100..1", "a..b", "1..", "..5", "-1..3", "1..2..3", "7"])
    func badSeedRangeSaysWhatToWrite(text: String) {
        let error = #expect(throws: BenchError.self) { _ = try Bench.parseSeeds(text) }
        #expect(error?.code == .badSeedRange)
        #expect(error?.message.contains("write A..B") == true)
        #expect(error?.message.contains("1..100") == true && error?.message.contains("1001..1100") == true)
    }

    /// The rule of docs/accuracy.md: tuning on the training set cannot touch a test venue.
    @Test func trainingAndTestSeedsAreDisjoint() {
        #expect(!Bench.trainingSeeds.overlaps(Bench.testSeeds))
        #expect(Bench.trainingSeeds == 1...100)
        #expect(Bench.testSeeds == 1001...1100)
        #expect(Bench.seedSetNote(Bench.trainingSeeds).contains("training set"))
        #expect(Bench.seedSetNote(1001...1010).contains("never choose a setting"))
        #expect(Bench.seedSetNote(90...1010).contains("never choose a setting"))
        #expect(Bench.seedSetNote(200...300).contains("outside"))
    }

    @Test func venuesAreTheFirstSeedsOfTheRange() throws {
        #expect(try Bench.venues(count: 3, from: 1001...1100).map(\.seed) == [1001, 1002, 1003])
        let shops = try Bench.venues(count: 2, from: 1...100, family: .shop)
        #expect(shops.count == 2)
        #expect(shops.allSatisfy { $0.family == .shop })
        // Filtering keeps each seed's own venue: the same file as without the filter.
        for shop in shops { #expect(shop.yaml == RandomVenue.generate(seed: shop.seed).yaml) }
        #expect(shops[0].seed < shops[1].seed)
    }

    @Test(arguments: [0, 11])
    func tooManyOrNoVenuesIsAnError(count: Int) {
        let error = #expect(throws: BenchError.self) { _ = try Bench.venues(count: count, from: 1...10) }
        #expect(error?.code == .badVenueCount)
        #expect(error?.message.contains("ask for 1 to 10") == true)
    }

    // MARK: - Steps

    /// The replay is the command line of README's tour, run in the venue's folder.
    @Test func stepsReplayAsUsersRunIt() {
        let steps = Bench.steps(seed: 7, duration: "2m", calibrated: false)
        #expect(steps.map(\.name) == ["run", "replay", "score", "score-oracle"])
        #expect(
            steps[0].arguments == [
                "run", "venue.yaml", "--out", "run", "--duration", "2m", "--seed", "7", "--start", "1763812800",
            ])
        #expect(steps[1].program == .hub)
        #expect(
            steps[1].arguments == ["replay", "--config", "hub.yaml", "run/sightings.jsonl", "--events", "events.jsonl"])
        #expect(steps[2].arguments.suffix(4) == ["--events", "events.jsonl", "--sightings", "run/sightings.jsonl"])
        #expect(steps[3].requires == "run/oracle.jsonl")
        #expect(steps[3].arguments.contains("run/oracle.jsonl") && !steps[3].arguments.contains("--sightings"))
    }

    @Test func calibratedStepsWalkCalibrateThenReplayCalibrated() {
        let steps = Bench.steps(seed: 7, duration: "2m", calibrated: true)
        #expect(steps.map(\.name) == ["run", "calibration-walk", "calibrate", "replay", "score", "score-oracle"])
        #expect(steps[1].arguments.contains("--stroll") && steps[1].arguments.contains("7"))
        #expect(steps[2].arguments.prefix(3) == ["calibrate", "--config", "hub.yaml"])
        #expect(steps[2].arguments.last == "calibration.yaml")
        #expect(steps[3].arguments.prefix(3) == ["replay", "--config", "hub-calibrated.yaml"])
    }

    @Test func hubConfigurationNamesSiteVenueAndCalibration() {
        let plain = Bench.hubConfiguration(site: "random-shop-4", venueFile: "venue.yaml")
        #expect(plain.contains("\nsite: random-shop-4\n") && plain.contains("\nvenue: venue.yaml\n"))
        #expect(!plain.contains("calibration"))
        let calibrated = Bench.hubConfiguration(
            site: "random-shop-4", venueFile: "venue.yaml", calibrationFile: "calibration.yaml")
        #expect(calibrated.hasSuffix("calibration: calibration.yaml\n"))
    }

    @Test func readsWhatScorePrints() throws {
        let encoder = JSONEncoder()
        struct Printed: Encodable {
            var hub: ZoneScore
            var baseline: ZoneScore?
            var perTag: [String: ZoneScore] = [:]
        }
        let printed = try encoder.encode(Printed(hub: Self.score(0.8), baseline: Self.score(0.6)))
        let read = try Bench.decodeScore(printed)
        #expect(read.hub.accuracy == 0.8 && read.baseline?.accuracy == 0.6)
        let hubOnly = try Bench.decodeScore(try encoder.encode(Printed(hub: Self.score(0.7))))
        #expect(hubOnly.baseline == nil)
        let error = #expect(throws: BenchError.self) {
            _ = try Bench.decodeScore(Data("error: cannot read truth.jsonl".utf8))
        }
        #expect(error?.code == .stepFailed && error?.message.contains("cannot read truth.jsonl") == true)
    }

    // MARK: - Aggregation and tables

    @Test func summarisesMedianAndWorstPerFamilyAndForAll() throws {
        let rows = [
            Self.row(3, "shop", hub: 0.5, baseline: 0.4, falsePerHour: 10),
            Self.row(1, "museum", hub: 0.9, baseline: 0.7, oracle: 0.95, falsePerHour: 2),
            Self.row(2, "museum", hub: 0.7, baseline: 0.75, falsePerHour: 4),
            Self.row(4, "museum", hub: 0.8, oracle: 0.9, falsePerHour: 6),
            Self.row(5, "shop", hub: 0.6, baseline: 0.6, falsePerHour: 20),
        ]
        let report = BenchReport(
            seeds: "1..5", seedSet: Bench.seedSetNote(1...5), durationSeconds: 600, calibrated: false, rows: rows)
        #expect(report.rows.map(\.seed) == [1, 2, 3, 4, 5])
        #expect(report.families.map(\.family) == ["museum", "shop", "all"])
        let museum = report.families[0]
        #expect(museum.venues == 3)
        #expect(abs(museum.medianAccuracy - 0.8) < 1e-12)
        #expect(museum.worstAccuracy == 0.7 && museum.worstSeed == 2)
        // Seeds 1 and 4 have an oracle: −0.05 and −0.1; seeds 1 and 2 a baseline: +0.2 and −0.05.
        #expect(abs((museum.medianHubMinusOracle ?? 0) - -0.075) < 1e-12)
        #expect(abs((museum.medianHubMinusBaseline ?? 0) - 0.075) < 1e-12)
        #expect(museum.medianFalseTransitionsPerTagHour == 4)
        #expect(museum.medianLatencyMedian == 2 && museum.medianLatencyP90 == 4)
        let shop = report.families[1]
        #expect(abs(shop.medianAccuracy - 0.55) < 1e-12 && shop.worstSeed == 3)
        #expect(shop.medianHubMinusOracle == nil)
        #expect(shop.medianFalseTransitionsPerTagHour == 15)
        let all = report.families[2]
        #expect(all.venues == 5 && all.medianAccuracy == 0.7 && all.worstAccuracy == 0.5 && all.worstSeed == 3)
    }

    @Test func medianOfOddEvenAndNone() {
        #expect(BenchReport.median([3, 1, 2]) == 2)
        #expect(BenchReport.median([4, 1, 3, 2]) == 2.5)
        #expect(BenchReport.median([]) == nil)
    }

    @Test func tableHasARowPerVenueAndASummaryPerFamily() {
        let report = BenchReport(
            seeds: "1..2", seedSet: Bench.seedSetNote(1...2), durationSeconds: 1200, calibrated: false,
            rows: [
                Self.row(1, "museum", hub: 0.9, baseline: 0.8, oracle: 0.95),
                Self.row(2, "shop", hub: 0.5, baseline: 0.6),
            ])
        let lines = report.table.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        #expect(lines[0] == "beacon-sim bench: seeds 1..2, 20m per venue, hub uncalibrated, default settings")
        #expect(lines[1] == "training set (seeds 1..100): tune defaults here")
        #expect(
            lines[4]
                == "  seed  family       zones   gw     hub    base  oracle  hub-oracle  hub-base  false/h  latency")
        #expect(
            lines[5]
                == "     1  museum          10   12    90.0    80.0    95.0        -5.0     +10.0     1.00  2.0 / 4.0")
        // No oracle: its cells are empty, the columns stay aligned.
        #expect(
            lines[6]
                == "     2  shop            10   12    50.0    60.0                         -10.0     1.00  2.0 / 4.0")
        #expect(lines[9].hasPrefix("family       venues  median   worst  (seed)"))
        #expect(lines[10] == "museum            1    90.0    90.0     (1)        -5.0     +10.0     1.00  2.0 / 4.0")
        #expect(lines[11] == "shop              1    50.0    50.0     (2)                 -10.0     1.00  2.0 / 4.0")
        #expect(lines[12].hasPrefix("all               2    70.0    50.0     (2)        -5.0      +0.0"))
        #expect(lines.count == 13)
        #expect(lines.allSatisfy { $0.count <= 120 && !$0.hasSuffix(" ") })
    }

    @Test func reportRoundTripsThroughJSON() throws {
        let report = BenchReport(
            seeds: "1001..1002", seedSet: Bench.seedSetNote(1001...1002), durationSeconds: 90, calibrated: true,
            rows: [Self.row(1001, "gallery", hub: 0.75, baseline: 0.5)])
        let decoded = try JSONDecoder().decode(BenchReport.self, from: try JSONEncoder().encode(report))
        #expect(decoded == report)
        #expect(decoded.rows[0].hubMinusBaseline == 0.25)
        #expect(decoded.rows[0].hubMinusOracle == nil)
    }
}
