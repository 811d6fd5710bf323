import Foundation

/// `beacon-sim bench`: many random venues generated, run, replayed through the built `beacon-hub replay` and scored.
/// This type holds the pure parts — the seed sets, seed ranges, the choice of venues and the steps run per venue —
/// so that they are tested; the command only starts the programs and moves files.
public enum Bench {
    /// Venue seeds to tune defaults on: choose settings by looking at these (and at the training recordings).
    public static let trainingSeeds: ClosedRange<UInt64> = 1...100
    /// Venue seeds to report on only: never choose a setting by looking at these.
    public static let testSeeds: ClosedRange<UInt64> = 1001...1100

    /// Simulated time per venue unless `--duration` says otherwise (docs/simulator.md: 40 venues in well under
    /// 20 minutes in a release build on two cores).
    public static let defaultDuration = "20m"
    /// Unix time every bench run starts at, so that a seed gives the same files on every machine and day.
    public static let start = 1_763_812_800.0
    /// Unix time the calibration walk (`--calibrated`) starts at: before the run, as a walk would be.
    public static let walkStart = 1_763_800_000.0

    /// `A..B` (or `A...B`) as a closed range of seeds, or an error saying what to write.
    public static func parseSeeds(_ text: String) throws(BenchError) -> ClosedRange<UInt64> {
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        let parts = trimmed.replacingOccurrences(of: "...", with: "..").components(separatedBy: "..")
        let example =
            "write A..B with whole numbers A ≤ B, e.g. \(rangeText(trainingSeeds)) (training) or "
            + "\(rangeText(testSeeds)) (test)"
        guard parts.count == 2, let low = UInt64(parts[0]), let high = UInt64(parts[1]) else {
            throw BenchError(.badSeedRange, "--seeds \(text): not a range; \(example)")
        }
        guard low <= high else {
            throw BenchError(.badSeedRange, "--seeds \(text): \(low) is above \(high); \(example)")
        }
        return low...high
    }

    /// A range as `--seeds` takes it.
    public static func rangeText(_ range: ClosedRange<UInt64>) -> String {
        "\(range.lowerBound)..\(range.upperBound)"
    }

    /// What the seeds are for, to print beside the figures: the rule of docs/accuracy.md.
    public static func seedSetNote(_ range: ClosedRange<UInt64>) -> String {
        let training = rangeText(trainingSeeds)
        let test = rangeText(testSeeds)
        if trainingSeeds.contains(range.lowerBound) && trainingSeeds.contains(range.upperBound) {
            return "training set (seeds \(training)): tune defaults here"
        }
        if testSeeds.contains(range.lowerBound) && testSeeds.contains(range.upperBound) {
            return "TEST SET (seeds \(test)): report these figures; never choose a setting from them"
        }
        if range.overlaps(testSeeds) {
            return "seeds overlap the TEST SET (\(test)): never choose a setting from these figures"
        }
        return "seeds outside the training (\(training)) and test (\(test)) sets"
    }

    /// The first `count` venues of `range`, only those of `family` if given (the seed still chooses the family, so
    /// seed S is the same venue with or without the filter), with the simulator's own radio or a foreign one. Fewer than `count` when the range has no more.
    public static func venues(
        count: Int, from range: ClosedRange<UInt64>, family: RandomVenue.Family? = nil,
        radio: RandomVenue.Radio = .standard
    ) throws(BenchError) -> [RandomVenue] {
        // `span` is the range's size minus one, so that 0...UInt64.max does not overflow.
        let span = range.upperBound - range.lowerBound
        guard count > 0, UInt64(count) - 1 <= span else {
            let most = span == .max ? "\(span)" : "\(span + 1)"
            throw BenchError(
                .badVenueCount,
                "--venues \(count): ask for 1 to \(most) venues of --seeds \(rangeText(range)), or widen --seeds")
        }
        var chosen: [RandomVenue] = []
        for seed in range where chosen.count < count {
            let venue = RandomVenue.generate(seed: seed, radio: radio)
            if family == nil || venue.family == family { chosen.append(venue) }
        }
        return chosen
    }

    /// A minimal hub.yaml for a generated venue: its site, its file, default inference, an optional calibration.
    public static func hubConfiguration(site: String, venueFile: String, calibrationFile: String? = nil) -> String {
        var text = "# beacon-sim bench: default settings for a generated venue.\nhub: bench\nsite: \(site)\n"
        text += "venue: \(venueFile)\n"
        if let calibrationFile { text += "calibration: \(calibrationFile)\n" }
        return text
    }

    /// One program run of a venue's bench, in the venue's folder (paths are relative to it).
    public struct Step: Sendable, Hashable {
        /// The built program to run; both sit in the same folder.
        public enum Program: String, Sendable, Hashable {
            case sim = "beacon-sim"
            case hub = "beacon-hub"
        }

        /// Names the step and its output files (`NAME.out`, `NAME.err`).
        public var name: String
        public var program: Program
        public var arguments: [String]
        /// The step is skipped unless this file exists when its turn comes (`oracle.jsonl` is written only by
        /// `beacon-sim run`s that know the oracle).
        public var requires: String?
        /// What the step writes in the folder besides `NAME.out` and `NAME.err` (a file or a folder).
        public var writes: [String] = []
        /// Whether the step depends on nothing but the venue, the seed and the run (not on the calibration walk):
        /// `--runs-from` may take it from an earlier bench of the same venue instead of running it again.
        public var walkFree = false
    }

    /// What `beacon-sim bench` writes in each venue's folder, one line per step it ran (JSON): what `--runs-from`
    /// reads to know which steps an earlier bench ran, exactly so.
    public static let stepRecord = "steps.jsonl"

    /// One line of `stepRecord`.
    public struct RecordedStep: Sendable, Hashable, Codable {
        public var name: String
        public var program: String
        public var arguments: [String]

        public init(_ step: Step) {
            name = step.name
            program = step.program.rawValue
            arguments = step.arguments
        }
    }

    /// Whether `step` may be taken from an earlier bench's folder whose record is `recorded`: it depends on nothing
    /// the walk changes, and that bench ran it with the same program and arguments (the folders' venue.yaml and
    /// hub.yaml are the caller's to compare).
    public static func reusable(_ step: Step, recorded: [RecordedStep]) -> Bool {
        step.walkFree && recorded.contains(RecordedStep(step))
    }

    /// The files of a venue's folder that steps and the command share.
    public enum Files {
        public static let venue = "venue.yaml"
        public static let hub = "hub.yaml"
        public static let calibratedHub = "hub-calibrated.yaml"
        public static let calibratedEvents = "events-calibrated.jsonl"
        public static let calibration = "calibration.yaml"
        public static let events = "events.jsonl"
        public static let oracle = "run/oracle.jsonl"
        public static let nominal = "run/nominal.jsonl"
        /// With a calibration: the oracle that knows all but the shadowing (`beacon-sim run --unshadowed-oracle`).
        public static let unshadowed = "run/unshadowed.jsonl"
        public static let nearBoundary = "run/near-boundary.jsonl"
        /// Score steps print JSON (`beacon-sim score --json`) to `NAME.out`.
        public static let hubScore = "score"
        public static let oracleScore = "score-oracle"
        public static let nominalScore = "score-nominal"
        public static let unshadowedScore = "score-unshadowed"
        /// `--also-calibrated`: the calibrated hub's score, beside the uncalibrated one in `hubScore`.
        public static let calibratedScore = "score-calibrated"
        /// `--exact-map`: the run's exact radio map as a calibration (`beacon-sim radio-map`), the hub.yaml that
        /// takes it, its replay's events and their score.
        public static let exactMap = "calibration-exact.yaml"
        public static let exactMapHub = "hub-exact.yaml"
        public static let exactMapEvents = "events-exact.jsonl"
        public static let exactMapScore = "score-exact"
    }

    /// The programs run for venue `seed`, in order, exactly as a user would type them in the venue's folder: run,
    /// (calibration walk and calibrate,) replay, score hub and baseline, score the oracle and the nominal reference if
    /// the run wrote them; every score also away from zone boundaries. With a calibration the run also writes, and the
    /// bench scores, the oracle that knows all but the shadowing: roughly what a calibration that does not map the
    /// shadowing field everywhere can reach (a reference, not a bound: `PositionOracle.Knowledge.unshadowed`). The
    /// replay's hub.yaml is `Files.calibratedHub` when `calibrated`; the command writes both. `alsoCalibrated` replays
    /// and scores the hub both ways over the same run: uncalibrated as usual, calibrated into `Files.calibratedEvents`
    /// and `Files.calibratedScore`.
    ///
    /// `phoneWalk` (seconds a zone): the calibration is a phone walk instead, one tap a zone — standing and turning,
    /// a point tapped, or with `phoneStroll` strolling round the zone, the zone tapped — or with `strollPoints` too,
    /// where they are tapped every few seconds as they go (`beacon-sim calibration-walk --dwell [--stroll]`,
    /// `beacon-hub calibrate --taps points|zones|route`).
    ///
    /// `walkSkipEvery`: the walk leaves out every K-th zone (`beacon-sim calibration-walk --skip-every`), as a venue
    /// calibrated only in part is.
    ///
    /// `exactMap`: the hub is also replayed over the same run given the run's exact radio map (`beacon-sim radio-map`
    /// into `Files.exactMap`, replayed with `Files.exactMapHub`), the limit of any calibration of this engine.
    public static func steps(
        seed: UInt64, duration: String, calibrated: Bool, alsoCalibrated: Bool = false, phoneWalk: Double? = nil,
        phoneStroll: Bool = false, strollPoints: Bool = false, walkSkipEvery: Int? = nil, exactMap: Bool = false
    ) -> [Step] {
        let score = [
            "score", "--venue", Files.venue, "--truth", "run/truth.jsonl", "--near-boundary", Files.nearBoundary,
            "--json", "--events",
        ]
        var steps = [
            Step(
                name: "run", program: .sim,
                arguments: [
                    "run", Files.venue, "--out", "run", "--duration", duration, "--seed", "\(seed)", "--start",
                    "\(Int(start))",
                ] + (calibrated || alsoCalibrated ? ["--unshadowed-oracle"] : []), writes: ["run"], walkFree: true)
        ]
        if calibrated || alsoCalibrated {
            steps += [
                Step(
                    name: "calibration-walk", program: .sim,
                    arguments: [
                        "calibration-walk", Files.venue, "--out", "walk", "--seed", "\(seed)", "--start",
                        "\(Int(walkStart))",
                    ] + (phoneWalk.map { ["--dwell", "\($0)"] + (phoneStroll ? ["--stroll"] : []) } ?? ["--stroll"])
                        + (walkSkipEvery.map { ["--skip-every", "\($0)"] } ?? []), writes: ["walk"]),
                Step(
                    name: "calibrate", program: .hub,
                    arguments: [
                        "calibrate", "--config", Files.hub, "walk/sightings.jsonl", "--plan", "walk/plan.yaml", "--out",
                        Files.calibration,
                    ]
                        + (phoneWalk == nil
                            ? [] : ["--taps", phoneStroll ? (strollPoints ? "route" : "zones") : "points"]),
                    writes: [Files.calibration]),
            ]
        }
        steps += [
            Step(
                name: "replay", program: .hub,
                arguments: [
                    "replay", "--config", calibrated ? Files.calibratedHub : Files.hub, "run/sightings.jsonl",
                    "--events", Files.events,
                ], writes: [Files.events], walkFree: !calibrated),
            Step(
                name: Files.hubScore, program: .sim,
                arguments: score + [Files.events, "--sightings", "run/sightings.jsonl"], walkFree: !calibrated),
            Step(
                name: Files.oracleScore, program: .sim, arguments: score + [Files.oracle], requires: Files.oracle,
                walkFree: true),
            Step(
                name: Files.nominalScore, program: .sim, arguments: score + [Files.nominal], requires: Files.nominal,
                walkFree: true),
            Step(
                name: Files.unshadowedScore, program: .sim, arguments: score + [Files.unshadowed],
                requires: Files.unshadowed, walkFree: true),
        ]
        // The same run replayed once more with another hub.yaml, and its events scored (no baseline: the first score
        // has it).
        func replayed(_ name: String, config: String, events: String, scored: String, walkFree: Bool) -> [Step] {
            [
                Step(
                    name: name, program: .hub,
                    arguments: ["replay", "--config", config, "run/sightings.jsonl", "--events", events],
                    writes: [events], walkFree: walkFree),
                Step(name: scored, program: .sim, arguments: score + [events], walkFree: walkFree),
            ]
        }
        if alsoCalibrated && !calibrated {
            steps += replayed(
                "replay-calibrated", config: Files.calibratedHub, events: Files.calibratedEvents,
                scored: Files.calibratedScore, walkFree: false)
        }
        if exactMap {
            steps.append(
                Step(
                    name: "radio-map", program: .sim,
                    arguments: ["radio-map", Files.venue, "--out", Files.exactMap, "--seed", "\(seed)"],
                    writes: [Files.exactMap], walkFree: true))
            steps += replayed(
                "replay-exact", config: Files.exactMapHub, events: Files.exactMapEvents, scored: Files.exactMapScore,
                walkFree: true)
        }
        return steps
    }

    /// The scores `beacon-sim score --json` printed: the hub's (the events given) and, with `--sightings`, the
    /// baseline's.
    public static func decodeScore(_ json: Data) throws(BenchError) -> (
        hub: ZoneScore, baseline: ZoneScore?, still: ZoneScore?, baselineStill: ZoneScore?
    ) {
        struct Printed: Decodable {
            var hub: ZoneScore
            var baseline: ZoneScore?
            var still: ZoneScore?
            var baselineStill: ZoneScore?
        }
        do {
            let printed = try JSONDecoder().decode(Printed.self, from: json)
            return (printed.hub, printed.baseline, printed.still, printed.baselineStill)
        } catch {
            let start = String(decoding: json.prefix(200), as: UTF8.self)
            throw BenchError(.stepFailed, "beacon-sim score printed no score: \(start)")
        }
    }
}
