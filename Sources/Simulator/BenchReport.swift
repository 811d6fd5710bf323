import Foundation

/// What `beacon-sim bench` found: a row per venue and a summary per family (and for all), as a table or JSON.
public struct BenchReport: Sendable, Hashable, Codable {
    /// One venue: what it is and how the hub, the baseline and (when the run wrote them) the oracle and the nominal
    /// reference scored. Scores carry their accuracy away from zone boundaries when the run wrote its near-boundary
    /// intervals.
    public struct Row: Sendable, Hashable, Codable {
        public var seed: UInt64
        public var family: String
        public var zones: Int
        public var gateways: Int
        public var hub: ZoneScore
        public var baseline: ZoneScore?
        public var oracle: ZoneScore?
        public var nominal: ZoneScore?
        /// With a calibration: the oracle that knows all but the shadowing (`beacon-sim run --unshadowed-oracle`).
        public var unshadowed: ZoneScore?
        /// Accuracy differences as fractions (0.05 = 5 points); nil without the other score.
        public var hubMinusOracle: Double?
        public var hubMinusBaseline: Double?
        /// The same away from zone boundaries; nil without the other score or the near-boundary intervals.
        public var hubMinusOracleAway: Double?
        /// With `--also-calibrated`: the hub calibrated from the venue's strolling walk, beside `hub` uncalibrated.
        public var calibratedHub: ZoneScore?
        /// The scores over the venue's tags that stand still (`carrier: still`); nil without any, or without the other
        /// score.
        public var hubStill: ZoneScore?
        public var baselineStill: ZoneScore?
        public var oracleStill: ZoneScore?
        /// With `--exact-map`: the hub given the run's exact radio map (`beacon-sim radio-map`), the limit of any
        /// calibration of this engine.
        public var exactMapHub: ZoneScore?

        public init(
            seed: UInt64, family: String, zones: Int, gateways: Int, hub: ZoneScore, baseline: ZoneScore?,
            oracle: ZoneScore?, nominal: ZoneScore? = nil, calibratedHub: ZoneScore? = nil, hubStill: ZoneScore? = nil,
            baselineStill: ZoneScore? = nil, oracleStill: ZoneScore? = nil, unshadowed: ZoneScore? = nil,
            exactMapHub: ZoneScore? = nil
        ) {
            self.unshadowed = unshadowed
            self.exactMapHub = exactMapHub
            self.hubStill = hubStill
            self.baselineStill = baselineStill
            self.oracleStill = oracleStill
            self.calibratedHub = calibratedHub
            self.seed = seed
            self.family = family
            self.zones = zones
            self.gateways = gateways
            self.hub = hub
            self.baseline = baseline
            self.oracle = oracle
            self.nominal = nominal
            hubMinusOracle = oracle.map { hub.accuracy - $0.accuracy }
            hubMinusBaseline = baseline.map { hub.accuracy - $0.accuracy }
            if let hubAway = hub.awayAccuracy, let oracleAway = oracle?.awayAccuracy {
                hubMinusOracleAway = hubAway - oracleAway
            }
        }
    }

    /// One family's venues (or all of them): medians over venues, and the worst venue.
    public struct Summary: Sendable, Hashable, Codable {
        /// The family's name, or `all`.
        public var family: String
        public var venues: Int
        public var medianAccuracy: Double
        public var worstAccuracy: Double
        public var worstSeed: UInt64
        /// Medians over the venues that have the other score; nil when none has.
        public var medianHubMinusOracle: Double?
        public var medianHubMinusBaseline: Double?
        public var medianFalseTransitionsPerTagHour: Double
        /// Medians over venues of each venue's latency median and p90; nil when no venue had a crossing reported.
        public var medianLatencyMedian: Double?
        public var medianLatencyP90: Double?
        /// Median accuracy of the nominal reference over the venues that have it.
        public var medianNominalAccuracy: Double? = nil
        /// Median accuracy of the oracle that knows all but the shadowing, over the venues that have it.
        public var medianUnshadowedAccuracy: Double? = nil
        /// Away from zone boundaries, over the venues that have the figure: the median share of tag-time away, the
        /// median accuracy there of each method, and of the hub's difference to the oracle there.
        public var medianAwayShare: Double? = nil
        public var medianHubAwayAccuracy: Double? = nil
        public var medianBaselineAwayAccuracy: Double? = nil
        public var medianOracleAwayAccuracy: Double? = nil
        public var medianNominalAwayAccuracy: Double? = nil
        public var medianHubMinusOracleAway: Double? = nil
        /// With `--also-calibrated`: the calibrated hub's median accuracy, and the median of each venue's gain from
        /// calibrating (calibrated minus uncalibrated).
        public var medianCalibratedAccuracy: Double? = nil
        public var medianCalibrationGain: Double? = nil
        /// With `--exact-map`: the median accuracy of the hub given the exact map; the median of each venue's
        /// calibrated (or, without a calibration, uncalibrated) hub less it.
        public var medianExactMapAccuracy: Double? = nil
        public var medianHubMinusExactMap: Double? = nil
        /// The tags that stand still, pooled over the venues' still tags (weighted by their tag-hours, not a median:
        /// a venue has one to six): each method's tag-hours, accuracy and false changes per tag-hour; nil when no
        /// venue has the score.
        public var hubStill: Pooled? = nil
        public var baselineStill: Pooled? = nil
        public var oracleStill: Pooled? = nil
    }

    /// Scores of several venues taken together.
    public struct Pooled: Sendable, Hashable, Codable {
        public var tagHours: Double
        public var accuracy: Double
        public var falseTransitionsPerTagHour: Double

        /// nil for no tag-hours.
        public init?(_ scores: [ZoneScore]) {
            let hours = scores.reduce(0) { $0 + $1.tagHours }
            guard hours > 0 else { return nil }
            tagHours = hours
            accuracy = scores.reduce(0) { $0 + $1.accuracy * $1.tagHours } / hours
            falseTransitionsPerTagHour = Double(scores.reduce(0) { $0 + $1.falseTransitions }) / hours
        }
    }

    /// The seeds asked for, as `--seeds` takes them, and what they are for (`Bench.seedSetNote`).
    public var seeds: String
    public var seedSet: String
    public var durationSeconds: Double
    public var calibrated: Bool
    /// How the calibrated hub was calibrated, when not from a strolling walk: a phone walk (`--phone-walk`).
    public var walk: String?
    /// The venues' radio when not the simulator's own (`--radio foreign`).
    public var radio: String?
    public var rows: [Row]
    public var families: [Summary]

    /// Orders the rows by seed and summarises them per family (in `RandomVenue.Family` order, then others by name)
    /// and for all.
    public init(seeds: String, seedSet: String, durationSeconds: Double, calibrated: Bool, rows: [Row]) {
        self.seeds = seeds
        self.seedSet = seedSet
        self.durationSeconds = durationSeconds
        self.calibrated = calibrated
        let sorted = rows.sorted { $0.seed < $1.seed }
        self.rows = sorted
        let known = RandomVenue.Family.allCases.map(\.rawValue)
        let names = Set(rows.map(\.family)).sorted { a, b in
            (known.firstIndex(of: a) ?? known.count, a) < (known.firstIndex(of: b) ?? known.count, b)
        }
        families =
            names.compactMap { name in Self.summarise(name, sorted.filter { $0.family == name }) }
            + [Self.summarise("all", sorted)].compactMap { $0 }
    }

    /// The summary of `rows`, nil when there are none.
    static func summarise(_ family: String, _ rows: [Row]) -> Summary? {
        guard let worst = rows.min(by: { ($0.hub.accuracy, $0.seed) < ($1.hub.accuracy, $1.seed) }) else {
            return nil
        }
        return Summary(
            family: family, venues: rows.count, medianAccuracy: median(rows.map(\.hub.accuracy)) ?? 0,
            worstAccuracy: worst.hub.accuracy, worstSeed: worst.seed,
            medianHubMinusOracle: median(rows.compactMap(\.hubMinusOracle)),
            medianHubMinusBaseline: median(rows.compactMap(\.hubMinusBaseline)),
            medianFalseTransitionsPerTagHour: median(rows.map(\.hub.falseTransitionsPerTagHour)) ?? 0,
            medianLatencyMedian: median(rows.compactMap(\.hub.latencyMedian)),
            medianLatencyP90: median(rows.compactMap(\.hub.latencyP90)),
            medianNominalAccuracy: median(rows.compactMap(\.nominal?.accuracy)),
            medianUnshadowedAccuracy: median(rows.compactMap(\.unshadowed?.accuracy)),
            medianAwayShare: median(rows.compactMap(\.hub.awayShare)),
            medianHubAwayAccuracy: median(rows.compactMap(\.hub.awayAccuracy)),
            medianBaselineAwayAccuracy: median(rows.compactMap(\.baseline?.awayAccuracy)),
            medianOracleAwayAccuracy: median(rows.compactMap(\.oracle?.awayAccuracy)),
            medianNominalAwayAccuracy: median(rows.compactMap(\.nominal?.awayAccuracy)),
            medianHubMinusOracleAway: median(rows.compactMap(\.hubMinusOracleAway)),
            medianCalibratedAccuracy: median(rows.compactMap(\.calibratedHub?.accuracy)),
            medianCalibrationGain: median(
                rows.compactMap { row in row.calibratedHub.map { $0.accuracy - row.hub.accuracy } }),
            medianExactMapAccuracy: median(rows.compactMap(\.exactMapHub?.accuracy)),
            medianHubMinusExactMap: median(
                rows.compactMap { row in row.exactMapHub.map { (row.calibratedHub ?? row.hub).accuracy - $0.accuracy } }
            ),
            hubStill: Pooled(rows.compactMap(\.hubStill)), baselineStill: Pooled(rows.compactMap(\.baselineStill)),
            oracleStill: Pooled(rows.compactMap(\.oracleStill)))
    }

    /// Seconds as the command lines write them: `20m`, `1h30m`, `90s` (whole seconds).
    static func durationText(_ seconds: Double) -> String {
        let total = Int(seconds.rounded())
        let parts = [(total / 3600, "h"), (total % 3600 / 60, "m"), (total % 60, "s")].filter { $0.0 > 0 }
        return parts.isEmpty ? "0s" : parts.map { "\($0.0)\($0.1)" }.joined()
    }

    /// The middle value (the mean of the two middle ones for an even count); nil for none.
    public static func median(_ values: [Double]) -> Double? {
        let sorted = values.sorted()
        guard !sorted.isEmpty else { return nil }
        let middle = sorted.count / 2
        return sorted.count % 2 == 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2
    }
}

extension BenchReport {
    /// The report as text: a row per venue, then the summary per family and for all, with a legend; when the scores
    /// carry figures away from zone boundaries, the same two tables again for those.
    public var table: String {
        func percent(_ value: Double?) -> String { value.map { String(format: "%.1f", $0 * 100) } ?? "" }
        func points(_ value: Double?) -> String { value.map { String(format: "%+.1f", $0 * 100) } ?? "" }
        func seconds(_ median: Double?, _ p90: Double?) -> String {
            let parts = [median, p90].map { $0.map { String(format: "%.1f", $0) } ?? "-" }
            return "\(parts[0]) / \(parts[1])"
        }
        func line(_ cells: [(String, Int)]) -> String {
            // Positive widths align right, negative left.
            cells.map { text, width in
                let pad = String(repeating: " ", count: max(0, abs(width) - text.count))
                return width < 0 ? text + pad : pad + text
            }.joined(separator: "  ")
        }
        var lines = [
            "beacon-sim bench: seeds \(seeds), \(Self.durationText(durationSeconds)) per venue, hub"
                + " \(calibrated ? "calibrated (\(walk ?? "strolling walk"))" : "uncalibrated"), default settings"
                + (radio.map { ", \($0) radio" } ?? ""),
            seedSet,
            "hub, base(line), oracle, nominal: accuracy %; hub-oracle, hub-base: points; false/h, latency med / p90 s:"
                + " hub's",
            "",
            line([
                ("seed", 6), ("family", -11), ("zones", 5), ("gw", 3), ("hub", 6), ("base", 6), ("oracle", 6),
                ("nominal", 7), ("hub-oracle", 10), ("hub-base", 8), ("false/h", 7), ("latency", -13),
            ]),
        ]
        for row in rows {
            lines.append(
                line([
                    ("\(row.seed)", 6), (row.family, -11), ("\(row.zones)", 5), ("\(row.gateways)", 3),
                    (percent(row.hub.accuracy), 6), (percent(row.baseline?.accuracy), 6),
                    (percent(row.oracle?.accuracy), 6), (percent(row.nominal?.accuracy), 7),
                    (points(row.hubMinusOracle), 10), (points(row.hubMinusBaseline), 8),
                    (String(format: "%.2f", row.hub.falseTransitionsPerTagHour), 7),
                    (seconds(row.hub.latencyMedian, row.hub.latencyP90), -13),
                ]))
        }
        lines += [
            "",
            "per family: median and worst (seed) hub accuracy %, median nominal accuracy %; medians over venues of the"
                + " rest",
            line([
                ("family", -11), ("venues", 6), ("median", 6), ("worst", 6), ("(seed)", 6), ("nominal", 7),
                ("hub-oracle", 10), ("hub-base", 8), ("false/h", 7), ("latency", -13),
            ]),
        ]
        for summary in families {
            lines.append(
                line([
                    (summary.family, -11), ("\(summary.venues)", 6), (percent(summary.medianAccuracy), 6),
                    (percent(summary.worstAccuracy), 6), ("(\(summary.worstSeed))", 6),
                    (percent(summary.medianNominalAccuracy), 7), (points(summary.medianHubMinusOracle), 10),
                    (points(summary.medianHubMinusBaseline), 8),
                    (String(format: "%.2f", summary.medianFalseTransitionsPerTagHour), 7),
                    (seconds(summary.medianLatencyMedian, summary.medianLatencyP90), -13),
                ]))
        }
        if rows.contains(where: { $0.hub.awayShare != nil }) {
            let header = [
                ("away", 6), ("hub", 6), ("base", 6), ("oracle", 6), ("nominal", 7), ("hub-oracle", 10),
            ]
            lines += [
                "",
                "away from zone boundaries (at least 1 m from every one): share of tag-time away %, accuracy % there;"
                    + " hub-oracle: points",
                line([("seed", 6), ("family", -11)] + header),
            ]
            for row in rows {
                lines.append(
                    line([
                        ("\(row.seed)", 6), (row.family, -11), (percent(row.hub.awayShare), 6),
                        (percent(row.hub.awayAccuracy), 6), (percent(row.baseline?.awayAccuracy), 6),
                        (percent(row.oracle?.awayAccuracy), 6), (percent(row.nominal?.awayAccuracy), 7),
                        (points(row.hubMinusOracleAway), 10),
                    ]))
            }
            lines += [
                "",
                "per family, away from zone boundaries: medians over venues",
                line([("family", -11), ("venues", 6)] + header),
            ]
            for summary in families {
                lines.append(
                    line([
                        (summary.family, -11), ("\(summary.venues)", 6), (percent(summary.medianAwayShare), 6),
                        (percent(summary.medianHubAwayAccuracy), 6), (percent(summary.medianBaselineAwayAccuracy), 6),
                        (percent(summary.medianOracleAwayAccuracy), 6), (percent(summary.medianNominalAwayAccuracy), 7),
                        (points(summary.medianHubMinusOracleAway), 10),
                    ]))
            }
        }
        if rows.contains(where: { $0.calibratedHub != nil }) {
            lines += [
                "",
                "hub calibrated from \(walk ?? "a strolling walk") (same venue and run) beside uncalibrated: accuracy %; "
                    + "gain: points",
                line([("seed", 6), ("family", -11), ("hub", 6), ("hub-cal", 7), ("gain", 6)]),
            ]
            for row in rows {
                lines.append(
                    line([
                        ("\(row.seed)", 6), (row.family, -11), (percent(row.hub.accuracy), 6),
                        (percent(row.calibratedHub?.accuracy), 7),
                        (points(row.calibratedHub.map { $0.accuracy - row.hub.accuracy }), 6),
                    ]))
            }
            lines += [
                "", "per family: medians over venues",
                line(
                    [("family", -11), ("venues", 6)] + [
                        ("hub", 6), ("hub-cal", 7), ("gain", 6),
                    ]),
            ]
            for summary in families {
                lines.append(
                    line([
                        (summary.family, -11), ("\(summary.venues)", 6), (percent(summary.medianAccuracy), 6),
                        (percent(summary.medianCalibratedAccuracy), 7), (points(summary.medianCalibrationGain), 6),
                    ]))
            }
        }
        if rows.contains(where: { $0.exactMapHub != nil }) {
            let calibrated = rows.contains { $0.calibratedHub != nil }
            let mine = calibrated ? "hub-cal" : "hub"
            lines += [
                "",
                "hub given the run's exact radio map (beacon-sim radio-map), the limit of calibrating, beside the"
                    + (calibrated ? " calibrated hub" : " hub") + " and the oracle: accuracy %; \(mine)-exact: points",
                line([("seed", 6), ("family", -11), (mine, 7), ("exact", 6), ("oracle", 6), ("\(mine)-exact", 13)]),
            ]
            for row in rows {
                let mineScore = row.calibratedHub ?? row.hub
                lines.append(
                    line([
                        ("\(row.seed)", 6), (row.family, -11), (percent(mineScore.accuracy), 7),
                        (percent(row.exactMapHub?.accuracy), 6), (percent(row.oracle?.accuracy), 6),
                        (points(row.exactMapHub.map { mineScore.accuracy - $0.accuracy }), 13),
                    ]))
            }
            lines += [
                "", "per family: medians over venues",
                line([("family", -11), ("venues", 6), ("exact", 6), ("\(mine)-exact", 13)]),
            ]
            for summary in families {
                lines.append(
                    line([
                        (summary.family, -11), ("\(summary.venues)", 6), (percent(summary.medianExactMapAccuracy), 6),
                        (points(summary.medianHubMinusExactMap), 13),
                    ]))
            }
        }
        if families.contains(where: { $0.hubStill != nil }) {
            func rate(_ value: Double?) -> String { value.map { String(format: "%.2f", $0) } ?? "" }
            lines += [
                "",
                "tags standing still (carrier still), pooled over each family's still tags: tag-hours; accuracy %,"
                    + " false changes per tag-hour",
                line([
                    ("family", -11), ("tag-h", 6), ("hub", 6), ("false/h", 7), ("oracle", 6), ("false/h", 7),
                    ("base", 6), ("false/h", 7),
                ]),
            ]
            for summary in families {
                lines.append(
                    line([
                        (summary.family, -11), (summary.hubStill.map { String(format: "%.1f", $0.tagHours) } ?? "", 6),
                        (percent(summary.hubStill?.accuracy), 6),
                        (rate(summary.hubStill?.falseTransitionsPerTagHour), 7),
                        (percent(summary.oracleStill?.accuracy), 6),
                        (rate(summary.oracleStill?.falseTransitionsPerTagHour), 7),
                        (percent(summary.baselineStill?.accuracy), 6),
                        (rate(summary.baselineStill?.falseTransitionsPerTagHour), 7),
                    ]))
            }
        }
        return lines.map { $0.replacingOccurrences(of: "\\s+$", with: "", options: .regularExpression) }
            .joined(separator: "\n")
    }
}
