import Foundation
import Simulator
import Testing

@Suite struct BenchTests {
    /// A score with the given figures (ZoneScore's memberwise initialiser is internal; JSON is its public face).
    static func score(
        _ accuracy: Double, falsePerHour: Double = 1, latency: (median: Double, p90: Double)? = (2, 4),
        away: (accuracy: Double, share: Double)? = nil
    ) -> ZoneScore {
        var fields: [String: Any] = [
            "accuracy": accuracy, "falseTransitionsPerTagHour": falsePerHour, "falseTransitions": 1,
            "missedTransitions": 0, "trueTransitions": 10, "noZoneShare": 0, "tagHours": 1,
        ]
        if let latency {
            fields["latencyMedian"] = latency.median
            fields["latencyP90"] = latency.p90
        }
        if let away {
            fields["awayAccuracy"] = away.accuracy
            fields["awayShare"] = away.share
        }
        let data = try! JSONSerialization.data(withJSONObject: fields)
        return try! JSONDecoder().decode(ZoneScore.self, from: data)
    }

    static func row(
        _ seed: UInt64, _ family: String, hub: Double, baseline: Double? = nil, oracle: Double? = nil,
        nominal: Double? = nil, falsePerHour: Double = 1
    ) -> BenchReport.Row {
        BenchReport.Row(
            seed: seed, family: family, zones: 10, gateways: 12, hub: score(hub, falsePerHour: falsePerHour),
            baseline: baseline.map { score($0) }, oracle: oracle.map { score($0) }, nominal: nominal.map { score($0) })
    }

    /// A row whose scores carry figures away from boundaries: each method's accuracy there is its accuracy + 0.05.
    static func awayRow(
        _ seed: UInt64, _ family: String, hub: Double, baseline: Double, oracle: Double?, nominal: Double?,
        share: Double
    ) -> BenchReport.Row {
        func scored(_ accuracy: Double) -> ZoneScore { score(accuracy, away: (accuracy + 0.05, share)) }
        return BenchReport.Row(
            seed: seed, family: family, zones: 10, gateways: 12, hub: scored(hub), baseline: scored(baseline),
            oracle: oracle.map(scored), nominal: nominal.map(scored))
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
    @Test func stepsReplayAsUsersRunIt() throws {
        let steps = Bench.steps(seed: 7, duration: "2m", calibrated: false)
        #expect(steps.map(\.name) == ["run", "replay", "score", "score-oracle", "score-nominal", "score-unshadowed"])
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
        #expect(steps[4].requires == "run/nominal.jsonl" && steps[4].arguments.last == "run/nominal.jsonl")
        // Every score also away from zone boundaries.
        for step in steps[2...] {
            let flag = try #require(step.arguments.firstIndex(of: "--near-boundary"))
            #expect(step.arguments[flag + 1] == "run/near-boundary.jsonl")
        }
    }

    @Test func calibratedStepsWalkCalibrateThenReplayCalibrated() {
        let steps = Bench.steps(seed: 7, duration: "2m", calibrated: true)
        #expect(
            steps.map(\.name) == [
                "run", "calibration-walk", "calibrate", "replay", "score", "score-oracle", "score-nominal",
                "score-unshadowed",
            ])
        #expect(steps[1].arguments.contains("--stroll") && steps[1].arguments.contains("7"))
        // A calibration's reference: the oracle that knows all but the shadowing, written by the run and scored.
        #expect(steps[0].arguments.last == "--unshadowed-oracle")
        #expect(steps[7].requires == "run/unshadowed.jsonl" && steps[7].arguments.last == "run/unshadowed.jsonl")
        #expect(steps[2].arguments.prefix(3) == ["calibrate", "--config", "hub.yaml"])
        #expect(steps[2].arguments.last == "calibration.yaml")
        #expect(steps[3].arguments.prefix(3) == ["replay", "--config", "hub-calibrated.yaml"])
    }

    /// One run, the hub replayed and scored both ways: uncalibrated as usual (with the baseline), then calibrated.
    @Test func alsoCalibratedStepsScoreTheHubBothWaysOverOneRun() {
        let steps = Bench.steps(seed: 7, duration: "2m", calibrated: false, alsoCalibrated: true)
        #expect(
            steps.map(\.name) == [
                "run", "calibration-walk", "calibrate", "replay", "score", "score-oracle", "score-nominal",
                "score-unshadowed", "replay-calibrated", "score-calibrated",
            ])
        #expect(steps.filter { $0.name == "run" }.count == 1)
        #expect(steps[0].arguments.last == "--unshadowed-oracle")
        #expect(steps[3].arguments.prefix(3) == ["replay", "--config", "hub.yaml"])
        #expect(steps[8].arguments.prefix(3) == ["replay", "--config", "hub-calibrated.yaml"])
        #expect(steps[8].arguments.last == "events-calibrated.jsonl")
        #expect(steps[9].arguments.last == "events-calibrated.jsonl" && !steps[9].arguments.contains("--sightings"))
    }

    /// `--runs-from` may take a step from an earlier bench only when nothing the walk changes goes into it, and the
    /// earlier bench ran it exactly so.
    @Test func onlyStepsTheWalkCannotChangeAreTakenFromAnEarlierBench() {
        let steps = Bench.steps(seed: 7, duration: "2m", calibrated: false, alsoCalibrated: true, exactMap: true)
        #expect(
            steps.filter(\.walkFree).map(\.name) == [
                "run", "replay", "score", "score-oracle", "score-nominal", "score-unshadowed", "radio-map",
                "replay-exact", "score-exact",
            ])
        #expect(steps.first { $0.name == "run" }?.writes == ["run"])
        #expect(steps.first { $0.name == "replay-calibrated" }?.writes == ["events-calibrated.jsonl"])
        // Calibrated only, the one replay is the calibrated hub's.
        let calibrated = Bench.steps(seed: 7, duration: "2m", calibrated: true)
        #expect(
            calibrated.filter(\.walkFree).map(\.name) == ["run", "score-oracle", "score-nominal", "score-unshadowed"])
        // What the earlier bench ran, and only so: a run of another length is made again.
        let recorded = steps.map(Bench.RecordedStep.init)
        let run = steps[0]
        #expect(Bench.reusable(run, recorded: recorded))
        #expect(
            !Bench.reusable(
                run,
                recorded: Bench.steps(seed: 7, duration: "3m", calibrated: false, alsoCalibrated: true).map(
                    Bench.RecordedStep.init)))
        #expect(!Bench.reusable(run, recorded: []))
        let walk = steps.first { $0.name == "calibration-walk" }!
        #expect(!Bench.reusable(walk, recorded: recorded))
    }

    /// A phone walk: standing at a tapped point, or strolling round a tapped zone, a given time a zone.
    @Test func phoneWalkStepsWalkAndTapAsThePageRecords() {
        let standing = Bench.steps(seed: 7, duration: "2m", calibrated: false, alsoCalibrated: true, phoneWalk: 60)
        let walk = standing.first { $0.name == "calibration-walk" }?.arguments ?? []
        #expect(walk.suffix(2) == ["--dwell", "60.0"] && !walk.contains("--stroll"), "\(walk)")
        #expect(standing.first { $0.name == "calibrate" }?.arguments.suffix(2) == ["--taps", "points"])
        let strolling = Bench.steps(
            seed: 7, duration: "2m", calibrated: true, phoneWalk: 45, phoneStroll: true)
        #expect(
            strolling.first { $0.name == "calibration-walk" }?.arguments.suffix(3) == ["--dwell", "45.0", "--stroll"])
        #expect(strolling.first { $0.name == "calibrate" }?.arguments.suffix(2) == ["--taps", "zones"])
        // Without a phone walk, the strolling walk as before.
        let usual = Bench.steps(seed: 7, duration: "2m", calibrated: true)
        #expect(usual.first { $0.name == "calibration-walk" }?.arguments.last == "--stroll")
        #expect(usual.first { $0.name == "calibrate" }?.arguments.contains("--taps") == false)
    }

    /// `--exact-map`: after the rest, the run's exact map is written and the hub replayed with it over the same run.
    @Test func exactMapStepsReplayTheRunWithTheRunsOwnMap() {
        let steps = Bench.steps(seed: 7, duration: "2m", calibrated: false, alsoCalibrated: true, exactMap: true)
        #expect(steps.map(\.name).suffix(3) == ["radio-map", "replay-exact", "score-exact"])
        #expect(
            steps.first { $0.name == "radio-map" }?.arguments == [
                "radio-map", "venue.yaml", "--out", "calibration-exact.yaml", "--seed", "7",
            ])
        let replay = steps.first { $0.name == "replay-exact" }?.arguments ?? []
        #expect(replay.prefix(3) == ["replay", "--config", "hub-exact.yaml"] && replay.last == "events-exact.jsonl")
        #expect(steps.last?.arguments.last == "events-exact.jsonl")
        #expect(!Bench.steps(seed: 7, duration: "2m", calibrated: false).contains { $0.name == "radio-map" })
    }

    /// The hub given the exact map beside the calibrated hub (or the uncalibrated one, without a calibration).
    @Test func reportShowsTheHubGivenTheExactMap() throws {
        var rows = [
            Self.awayRow(1, "museum", hub: 0.6, baseline: 0.5, oracle: 0.95, nominal: nil, share: 0.8),
            Self.awayRow(2, "museum", hub: 0.5, baseline: 0.5, oracle: 0.9, nominal: nil, share: 0.6),
        ]
        rows[0].calibratedHub = Self.score(0.8)
        rows[1].calibratedHub = Self.score(0.7)
        rows[0].exactMapHub = Self.score(0.9)
        rows[1].exactMapHub = Self.score(0.72)
        let report = BenchReport(
            seeds: "1..2", seedSet: "", durationSeconds: 300, calibrated: false, rows: rows)
        #expect(abs((report.families[0].medianExactMapAccuracy ?? 0) - 0.81) < 1e-12)
        #expect(abs((report.families[0].medianHubMinusExactMap ?? 0) + 0.06) < 1e-12)
        let lines = report.table.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        let header = try #require(lines.firstIndex { $0.hasPrefix("hub given the run's exact radio map") })
        #expect(lines[header + 1] == "  seed  family       hub-cal   exact  oracle  hub-cal-exact")
        #expect(lines[header + 2] == "     1  museum          80.0    90.0    95.0          -10.0")
        #expect(lines[header + 3] == "     2  museum          70.0    72.0    90.0           -2.0")
        #expect(try JSONDecoder().decode(BenchReport.self, from: JSONEncoder().encode(report)) == report)
        let uncalibrated = BenchReport(
            seeds: "1..2", seedSet: "", durationSeconds: 300, calibrated: false,
            rows: rows.map {
                var row = $0; row.calibratedHub = nil; return row
            })
        #expect(abs((uncalibrated.families[0].medianHubMinusExactMap ?? 0) + 0.26) < 1e-12)
        #expect(uncalibrated.table.contains("hub-exact"))
        let without = BenchReport(
            seeds: "1..2", seedSet: "", durationSeconds: 300, calibrated: false,
            rows: rows.map {
                var row = $0; row.exactMapHub = nil; return row
            })
        #expect(!without.table.contains("exact radio map") && without.families[0].medianExactMapAccuracy == nil)
    }

    @Test func reportShowsTheCalibratedHubBesideTheUncalibrated() throws {
        var rows = [
            Self.awayRow(1, "museum", hub: 0.8, baseline: 0.7, oracle: 0.9, nominal: nil, share: 0.8),
            Self.awayRow(2, "museum", hub: 0.6, baseline: 0.5, oracle: 0.7, nominal: nil, share: 0.6),
        ]
        rows[0].calibratedHub = Self.score(0.85, away: (0.9, 0.8))
        rows[1].calibratedHub = Self.score(0.55, away: (0.6, 0.6))
        let report = BenchReport(
            seeds: "1..2", seedSet: Bench.seedSetNote(1...2), durationSeconds: 300, calibrated: false, rows: rows)
        #expect(abs((report.families[0].medianCalibratedAccuracy ?? 0) - 0.7) < 1e-12)
        #expect(abs(report.families[0].medianCalibrationGain ?? 1) < 1e-12)
        let lines = report.table.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        let header = try #require(lines.firstIndex { $0.hasPrefix("hub calibrated from a strolling walk") })
        #expect(lines[header + 1] == "  seed  family          hub  hub-cal    gain")
        #expect(lines[header + 2] == "     1  museum         80.0     85.0    +5.0")
        #expect(lines[header + 3] == "     2  museum         60.0     55.0    -5.0")
        #expect(try JSONDecoder().decode(BenchReport.self, from: JSONEncoder().encode(report)) == report)
        let plain = BenchReport(
            seeds: "1..2", seedSet: "", durationSeconds: 300, calibrated: false,
            rows: rows.map {
                var row = $0; row.calibratedHub = nil; return row
            })
        #expect(!plain.table.contains("hub-cal"))
    }

    /// Tags standing still are pooled per family by their tag-hours (a venue has one to six of them), not by a median
    /// over venues; a family without them shows none, and the table gets their section only when some family has.
    @Test func stillTagsArePooledPerFamilyByTagHours() throws {
        func still(_ accuracy: Double, hours: Double, falseChanges: Int) -> ZoneScore {
            var score = Self.score(accuracy)
            score.tagHours = hours
            score.falseTransitions = falseChanges
            return score
        }
        var rows = [
            Self.row(1, "museum", hub: 0.8, baseline: 0.7, oracle: 0.9),
            Self.row(2, "museum", hub: 0.6, baseline: 0.5, oracle: 0.7),
            Self.row(3, "shop", hub: 0.5),
        ]
        rows[0].hubStill = still(0.9, hours: 1, falseChanges: 1)
        rows[0].oracleStill = still(1, hours: 1, falseChanges: 0)
        rows[0].baselineStill = still(0.5, hours: 1, falseChanges: 4)
        rows[1].hubStill = still(0.6, hours: 3, falseChanges: 2)
        rows[1].oracleStill = still(0.98, hours: 3, falseChanges: 0)
        let report = BenchReport(
            seeds: "1..3", seedSet: "", durationSeconds: 600, calibrated: false, rows: rows)
        let museum = report.families[0]
        #expect(museum.hubStill?.tagHours == 4)
        // (0.9 · 1 + 0.6 · 3) / 4 = 0.675; 3 false changes in 4 tag-hours.
        #expect(abs((museum.hubStill?.accuracy ?? 0) - 0.675) < 1e-12)
        #expect(museum.hubStill?.falseTransitionsPerTagHour == 0.75)
        #expect(abs((museum.oracleStill?.accuracy ?? 0) - 0.985) < 1e-12)
        #expect(museum.baselineStill?.accuracy == 0.5 && museum.baselineStill?.falseTransitionsPerTagHour == 4)
        #expect(report.families[1].hubStill == nil)
        let lines = report.table.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        let header = try #require(lines.firstIndex { $0.hasPrefix("tags standing still") })
        #expect(lines[header + 1] == "family        tag-h     hub  false/h  oracle  false/h    base  false/h")
        #expect(lines[header + 2] == "museum          4.0    67.5     0.75    98.5     0.00    50.0     4.00")
        #expect(lines[header + 3] == "shop")
        #expect(try JSONDecoder().decode(BenchReport.self, from: JSONEncoder().encode(report)) == report)
        let none = BenchReport(seeds: "3", seedSet: "", durationSeconds: 600, calibrated: false, rows: [rows[2]])
        #expect(!none.table.contains("tags standing still"))
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
                Self.row(1, "museum", hub: 0.9, baseline: 0.8, oracle: 0.95, nominal: 0.92),
                Self.row(2, "shop", hub: 0.5, baseline: 0.6),
            ])
        let lines = report.table.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        #expect(lines[0] == "beacon-sim bench: seeds 1..2, 20m per venue, hub uncalibrated, default settings")
        #expect(lines[1] == "training set (seeds 1..100): tune defaults here")
        #expect(
            lines[4]
                == "  seed  family       zones   gw     hub    base  oracle  nominal  hub-oracle  hub-base  false/h"
                + "  latency")
        #expect(
            lines[5]
                == "     1  museum          10   12    90.0    80.0    95.0     92.0        -5.0     +10.0     1.00"
                + "  2.0 / 4.0")
        // No oracle: its cells are empty, the columns stay aligned.
        #expect(
            lines[6]
                == "     2  shop            10   12    50.0    60.0                                  -10.0     1.00"
                + "  2.0 / 4.0")
        #expect(lines[9].hasPrefix("family       venues  median   worst  (seed)  nominal"))
        #expect(
            lines[10]
                == "museum            1    90.0    90.0     (1)     92.0        -5.0     +10.0     1.00  2.0 / 4.0")
        #expect(
            lines[11]
                == "shop              1    50.0    50.0     (2)                          -10.0     1.00  2.0 / 4.0")
        #expect(lines[12].hasPrefix("all               2    70.0    50.0     (2)     92.0        -5.0      +0.0"))
        // Without figures away from boundaries, no table of them.
        #expect(lines.count == 13)
        #expect(lines.allSatisfy { $0.count <= 120 && !$0.hasSuffix(" ") })
    }

    /// The nominal reference and the figures away from boundaries: in the rows, as medians per family, in a table of
    /// their own, and in the JSON.
    @Test func reportCarriesNominalAndAwayFromBoundaries() throws {
        let report = BenchReport(
            seeds: "1..3", seedSet: Bench.seedSetNote(1...3), durationSeconds: 300, calibrated: false,
            rows: [
                Self.awayRow(1, "museum", hub: 0.8, baseline: 0.7, oracle: 0.9, nominal: 0.85, share: 0.8),
                Self.awayRow(2, "museum", hub: 0.6, baseline: 0.5, oracle: 0.7, nominal: nil, share: 0.6),
                Self.awayRow(3, "shop", hub: 0.4, baseline: 0.45, oracle: nil, nominal: nil, share: 0.5),
            ])
        #expect(report.rows[0].nominal?.accuracy == 0.85)
        #expect(abs((report.rows[0].hubMinusOracleAway ?? 0) - -0.1) < 1e-12)
        #expect(report.rows[2].hubMinusOracleAway == nil)
        let museum = report.families[0]
        #expect(museum.medianNominalAccuracy == 0.85)
        #expect(abs((museum.medianAwayShare ?? 0) - 0.7) < 1e-12)
        #expect(abs((museum.medianHubAwayAccuracy ?? 0) - 0.75) < 1e-12)
        #expect(abs((museum.medianBaselineAwayAccuracy ?? 0) - 0.65) < 1e-12)
        #expect(abs((museum.medianOracleAwayAccuracy ?? 0) - 0.85) < 1e-12)
        #expect(abs((museum.medianNominalAwayAccuracy ?? 0) - 0.9) < 1e-12)
        #expect(abs((museum.medianHubMinusOracleAway ?? 0) - -0.1) < 1e-12)
        let shop = report.families[1]
        #expect(shop.medianNominalAccuracy == nil && shop.medianOracleAwayAccuracy == nil)
        #expect(abs((shop.medianHubAwayAccuracy ?? 0) - 0.45) < 1e-12)

        let lines = report.table.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        let header = try #require(lines.firstIndex { $0.hasPrefix("away from zone boundaries") })
        #expect(lines[header + 1] == "  seed  family         away     hub    base  oracle  nominal  hub-oracle")
        #expect(lines[header + 2] == "     1  museum         80.0    85.0    75.0    95.0     90.0       -10.0")
        #expect(lines[header + 4] == "     3  shop           50.0    45.0    50.0")
        let families = try #require(lines.firstIndex { $0.hasPrefix("per family, away from zone boundaries") })
        #expect(lines[families + 1] == "family       venues    away     hub    base  oracle  nominal  hub-oracle")
        #expect(lines[families + 2] == "museum            2    70.0    75.0    65.0    85.0     90.0       -10.0")
        #expect(lines[families + 4].hasPrefix("all               3    60.0    65.0    55.0    85.0     90.0"))
        #expect(lines.count == families + 5)
        #expect(lines.allSatisfy { $0.count <= 120 && !$0.hasSuffix(" ") })

        let json = String(decoding: try JSONEncoder().encode(report), as: UTF8.self)
        for key in ["\"nominal\"", "awayAccuracy", "awayShare", "medianHubAwayAccuracy", "medianNominalAccuracy"] {
            #expect(json.contains(key), "\(key)")
        }
        #expect(try JSONDecoder().decode(BenchReport.self, from: Data(json.utf8)) == report)
    }

    /// Reports written before the nominal reference and the away figures existed still read.
    @Test func olderReportJSONStillDecodes() throws {
        let score =
            #"{"accuracy":0.8,"falseTransitionsPerTagHour":1,"falseTransitions":1,"missedTransitions":0,"#
            + #""trueTransitions":10,"noZoneShare":0,"tagHours":1}"#
        let json =
            #"{"seeds":"1..1","seedSet":"training","durationSeconds":60,"calibrated":false,"rows":[{"seed":1,"#
            + #""family":"museum","zones":4,"gateways":5,"hub":\#(score)}],"families":[{"family":"all","venues":1,"#
            + #""medianAccuracy":0.8,"worstAccuracy":0.8,"worstSeed":1,"medianFalseTransitionsPerTagHour":1}]}"#
        let report = try JSONDecoder().decode(BenchReport.self, from: Data(json.utf8))
        #expect(report.rows[0].nominal == nil && report.rows[0].hub.awayAccuracy == nil)
        #expect(report.families[0].medianHubAwayAccuracy == nil)
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
