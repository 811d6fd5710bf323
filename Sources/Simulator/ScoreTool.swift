import BeaconModel
import Foundation
import ZoneInference

/// `beacon-sim score`: the hub's event lines against the ground truth, beside the strongest-gateway baseline and,
/// when given, the position oracle (`oracle.jsonl` of `beacon-sim run`: the practical limit) and the nominal-model
/// reference (`nominal.jsonl`). With the run's `near-boundary.jsonl`, every score also carries its accuracy away from
/// zone boundaries.
public enum ScoreTool {
    /// The scores, and lines that could not be read (reported, skipped).
    public struct Report: Sendable, Codable {
        public var hub: ZoneScore
        public var baseline: ZoneScore?
        public var perTag: [String: ZoneScore]
        public var baselinePerTag: [String: ZoneScore]?
        public var skippedLines: [String]
        /// The position oracle's score, and the hub's accuracy minus the oracle's, in percentage points.
        public var oracle: ZoneScore?
        public var hubMinusOraclePoints: Double?
        /// The nominal-model reference's score.
        public var nominal: ZoneScore?
        /// The same scores over the tags that stand still (the venue's `carrier: still` tags); nil without any.
        public var still: ZoneScore? = nil
        public var baselineStill: ZoneScore? = nil
        public var oracleStill: ZoneScore? = nil
    }

    public static func run(
        venue: Venue, truthPath: String, eventsPath: String, sightingsPath: String?, oraclePath: String? = nil,
        nominalPath: String? = nil, nearBoundaryPath: String? = nil, positionsPath: String? = nil
    ) throws -> Report {
        var skipped: [String] = []
        let truth: [TruthInterval] = try records(truthPath, skipped: &skipped)
        var near: [NearBoundaryInterval]?
        if let nearBoundaryPath {
            near = try records(nearBoundaryPath, skipped: &skipped)
        } else if let positionsPath {
            let samples: [PositionSample] = try records(positionsPath, skipped: &skipped)
            near = PositionSample.nearBoundaryIntervals(samples, boundaries: ZoneBoundaries(venue: venue))
        }
        func score(_ reported: [TagID: ZoneTimeline]) -> (overall: ZoneScore, perTag: [TagID: ZoneScore]) {
            Scorer.score(truth: truth, reported: reported, nearBoundary: near)
        }
        let stillTags = Set(venue.tags.filter { $0.carrier == .still }.flatMap { $0.expanded.map(\.id) })
        let stillTruth = truth.filter { stillTags.contains($0.tag) }
        func stillScore(_ reported: [TagID: ZoneTimeline]) -> ZoneScore? {
            stillTruth.isEmpty ? nil : Scorer.score(truth: stillTruth, reported: reported, nearBoundary: near).overall
        }
        let hubTimelines = try timelines(eventsPath, skipped: &skipped)
        let hub = score(hubTimelines)
        var report = Report(
            hub: hub.overall, baseline: nil,
            perTag: Dictionary(uniqueKeysWithValues: hub.perTag.map { ($0.key.rawValue, $0.value) }),
            baselinePerTag: nil, skippedLines: skipped)
        report.still = stillScore(hubTimelines)
        if let oraclePath {
            let oracleTimelines = try timelines(oraclePath, skipped: &report.skippedLines)
            let oracle = score(oracleTimelines)
            report.oracle = oracle.overall
            report.oracleStill = stillScore(oracleTimelines)
            report.hubMinusOraclePoints = (hub.overall.accuracy - oracle.overall.accuracy) * 100
        }
        if let nominalPath {
            report.nominal = score(try timelines(nominalPath, skipped: &report.skippedLines)).overall
        }
        if let sightingsPath {
            // The baseline is the engine's `strongest` method with the baseline's settings.
            let names = venue.namedTags.map { (beacon: $0.beacon, tag: $0.id) }
            var baseline = ZoneEngine(
                venue: venue, settings: .strongestBaseline, directory: TagDirectory(named: names, regions: []))
            var events: [ZoneEvent] = []
            var timelines: [TagID: ZoneTimeline] = [:]
            func drain() {
                for event in events { ZoneTimeline.apply(event, to: &timelines) }
                events.removeAll(keepingCapacity: true)
            }
            try LineFileReader.forEachLine(sightingsPath) { line, number in
                do {
                    let sighting = try SightingLine.decode(line: line)
                    baseline.ingest(sighting, events: &events)
                    drain()
                } catch {
                    report.skippedLines.append("\(sightingsPath):\(number): \(error)")
                }
            }
            if let end = truth.map(\.exit).max() { baseline.advance(to: end, events: &events) }
            drain()
            let scored = score(timelines)
            report.baseline = scored.overall
            report.baselineStill = stillScore(timelines)
            report.baselinePerTag = Dictionary(uniqueKeysWithValues: scored.perTag.map { ($0.key.rawValue, $0.value) })
        }
        return report
    }

    /// The JSON lines of a file as records; unreadable lines are added to `skipped`.
    static func records<Record: Decodable>(_ path: String, skipped: inout [String]) throws -> [Record] {
        var records: [Record] = []
        try LineFileReader.forEachLine(path) { line, number in
            do {
                records.append(try JSONDecoder().decode(Record.self, from: Data(line.utf8)))
            } catch {
                skipped.append("\(path):\(number): \(ContractCoding.describe(error))")
            }
        }
        return records
    }

    /// Each tag's reported zones from a file of event lines; unreadable lines are added to `skipped`.
    static func timelines(_ path: String, skipped: inout [String]) throws -> [TagID: ZoneTimeline] {
        var reported: [TagID: ZoneTimeline] = [:]
        try LineFileReader.forEachLine(path) { line, number in
            do {
                let event = try ContractCoding.decodeLine(ScoredEventLine.self, from: line)
                ZoneTimeline.apply(event.event, to: &reported)
            } catch {
                skipped.append("\(path):\(number): \(error)")
            }
        }
        return reported
    }

    /// The report as a table: overall, then per tag, hub beside baseline. With near-boundary intervals, a column of
    /// the accuracy away from boundaries and a line with the share of tag-time that was away.
    public static func table(_ report: Report) -> String {
        let away = report.hub.awayShare != nil
        func cells(_ score: ZoneScore?) -> String {
            guard let score else { return "" }
            let latency = [score.latencyMedian, score.latencyP90].map { $0.map { String(format: "%.1f", $0) } ?? "-" }
            var text = String(
                format: "%6.1f %%  %5@ / %-5@ s  %6.2f  %4d  %5.1f %%", score.accuracy * 100, latency[0] as NSString,
                latency[1] as NSString, score.falseTransitionsPerTagHour, score.missedTransitions,
                score.noZoneShare * 100)
            if away {
                text += score.awayAccuracy.map { String(format: "  %6.1f %%", $0 * 100) } ?? "         -"
            }
            return text
        }
        var lines = [
            "accuracy = share of tag-time in the true zone; latency = median / p90 from true crossing to decision;",
            "false/h = reported changes into a zone the tag was not in, per tag-hour; missed = true crossings never",
            "reported; no zone = time with no zone reported while the tag was in one.",
        ]
        if let share = report.hub.awayShare {
            lines += [
                "away = accuracy over the tag-time at least 1 m from every zone boundary (near-boundary file);",
                String(format: "%.1f %% of the tag-time was away.", share * 100),
            ]
        }
        lines += [
            "",
            "label".padding(toLength: 21, withPad: " ", startingAt: 0)
                + "accuracy   latency med/p90   false/h  missed  no zone" + (away ? "      away" : ""),
            "hub".padding(toLength: 21, withPad: " ", startingAt: 0) + cells(report.hub),
        ]
        if let baseline = report.baseline {
            lines.append("baseline (strongest) " + cells(baseline))
        }
        if let oracle = report.oracle {
            lines.append("oracle (exact map)".padding(toLength: 21, withPad: " ", startingAt: 0) + cells(oracle))
        }
        if let nominal = report.nominal {
            lines.append("nominal model".padding(toLength: 21, withPad: " ", startingAt: 0) + cells(nominal))
        }
        if let points = report.hubMinusOraclePoints {
            lines.append(String(format: "hub − oracle: %+.1f points", points))
        }
        for (label, score) in [
            ("still tags: hub", report.still), ("  baseline", report.baselineStill), ("  oracle", report.oracleStill),
        ] {
            if let score { lines.append(label.padding(toLength: 21, withPad: " ", startingAt: 0) + cells(score)) }
        }
        lines.append("")
        for tag in report.perTag.keys.sorted() {
            lines.append(tag.padding(toLength: 21, withPad: " ", startingAt: 0) + cells(report.perTag[tag]))
            if let baseline = report.baselinePerTag?[tag] {
                lines.append("  baseline".padding(toLength: 21, withPad: " ", startingAt: 0) + cells(baseline))
            }
        }
        if !report.skippedLines.isEmpty {
            lines.append("")
            lines.append("skipped \(report.skippedLines.count) unreadable lines, first: \(report.skippedLines[0])")
        }
        return lines.joined(separator: "\n")
    }
}

/// An event line as scoring reads it: only `type`, `tag`, `zone` and `t` are needed, so that event files written by
/// other systems (converted to our event types) score as well as the hub's own. Other keys are ignored.
struct ScoredEventLine: Decodable {
    var type: ZoneEventType
    var tag: TagID?
    var zone: ZoneID?
    var t: Double

    var event: ZoneEvent {
        ZoneEvent(type: type, tag: tag, zone: zone, t: t, confidence: 1, reason: "")
    }
}
