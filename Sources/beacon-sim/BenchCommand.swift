import ArgumentParser
import BeaconConfig
import Foundation
import Simulator

/// `beacon-sim bench`: random venues generated, run, replayed through the built `beacon-hub replay` (as a user runs
/// it, in a child process) and scored; a row per venue and a summary per family. The steps, the seed sets and the
/// report are `Bench`'s (Simulator); this command only starts programs and moves files.
struct BenchCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "bench",
        abstract: "Generate, run, replay (beacon-hub replay) and score many random venues; a row per venue and a"
            + " summary per family.",
        discussion: """
            Training set: seeds \(Bench.rangeText(Bench.trainingSeeds)) — tune defaults here. Test set: seeds \
            \(Bench.rangeText(Bench.testSeeds)) — report only, never choose a setting from them \
            (docs/accuracy.md). beacon-hub must sit beside beacon-sim (build both). docs/simulator.md.
            """)

    @Option(help: "How many venues: the first N seeds of --seeds (of --family, if given).")
    var venues = 10

    @Option(
        help:
            "Venue seeds A..B (training set \(Bench.rangeText(Bench.trainingSeeds)), test set \(Bench.rangeText(Bench.testSeeds)))."
    )
    var seeds = Bench.rangeText(Bench.trainingSeeds)

    @Option(help: "Simulated time per venue: 90s, 30m, 1h, or seconds.")
    var duration = Bench.defaultDuration

    @Option(help: "Only venues of this family (the seed still draws the venue; others are skipped).")
    var family: String?

    @Option(
        help: """
            The venues' radio: standard (the simulator's own) or foreign (one the engine does not model: \
            docs/simulator.md); the seed's layout either way.
            """)
    var radio = RandomVenue.Radio.standard.rawValue

    @Flag(help: "Calibrate the hub of each venue first from a strolling calibration walk (same seed).")
    var calibrated = false

    @Flag(
        help:
            "Score the hub uncalibrated and, over the same run, calibrated from a strolling walk (rows carry both).")
    var alsoCalibrated = false

    @Option(
        help: """
            With --calibrated or --also-calibrated: calibrate from a phone walk of this many seconds a zone (standing, \
            one tap a zone, as the calibration page records it) instead of the strolling walk.
            """)
    var phoneWalk: Double?

    @Flag(
        help: "With --phone-walk: the walker strolls round each zone and taps the zone, instead of standing at a point."
    )
    var phoneStroll = false

    @Flag(
        help: """
            With --phone-stroll: the walker taps where they are every 5 s as they stroll (points), instead of the \
            zone.
            """)
    var phoneStrollPoints = false

    @Option(
        help: """
            With --calibrated or --also-calibrated: the walk leaves out every K-th zone of the venue (K ≥ 2), as a \
            venue calibrated only in part is.
            """)
    var walkSkipEvery: Int?

    @Flag(
        help: """
            Also replay each venue's run with the hub given the run's exact radio map (beacon-sim radio-map): the \
            limit of any calibration.
            """)
    var exactMap = false

    @Option(help: "Keep every venue's files in this folder (default: a temporary folder, removed).")
    var out: String?

    @Option(
        help: """
            The --out folder of an earlier bench of the same venues: its runs, uncalibrated replays and reference \
            scores are taken from there (linked) instead of being made again, where it made them exactly so.
            """)
    var runsFrom: String?

    @Option(help: "Venues run at the same time.")
    var jobs = ProcessInfo.processInfo.activeProcessorCount

    @Flag(help: "Print JSON instead of tables.")
    var json = false

    func validate() throws {
        if calibrated && alsoCalibrated {
            throw ValidationError(
                "--calibrated and --also-calibrated: give one (--also-calibrated scores the hub both ways)")
        }
        if phoneStrollPoints && !phoneStroll {
            throw ValidationError("--phone-stroll-points is a kind of strolling walk: give --phone-stroll too")
        }
        if let walkSkipEvery {
            guard calibrated || alsoCalibrated else {
                throw ValidationError("--walk-skip-every is about the walk: give --calibrated or --also-calibrated too")
            }
            guard walkSkipEvery >= 2 else {
                throw ValidationError(
                    "--walk-skip-every \(walkSkipEvery): K must be at least 2 (a walk enters some zone)")
            }
        }
        if phoneStroll && phoneWalk == nil {
            throw ValidationError("--phone-stroll is a kind of phone walk: give --phone-walk SECONDS too")
        }
        if let phoneWalk {
            guard calibrated || alsoCalibrated else {
                throw ValidationError("--phone-walk is how to calibrate: give --calibrated or --also-calibrated too")
            }
            guard (5...600).contains(phoneWalk) else {
                throw ValidationError("--phone-walk \(phoneWalk): seconds a zone, 5 to 600")
            }
        }
        if SimulatedDuration.parse(duration) == nil {
            throw ValidationError("--duration \(duration): expected e.g. 90s, 30m, 1h, 2h30m, or seconds")
        }
        if let family, RandomVenue.Family(rawValue: family) == nil {
            let known = RandomVenue.Family.allCases.map(\.rawValue).joined(separator: ", ")
            throw ValidationError("--family \(family): expected one of \(known)")
        }
        if RandomVenue.Radio(rawValue: radio) == nil {
            let known = RandomVenue.Radio.allCases.map(\.rawValue).joined(separator: ", ")
            throw ValidationError("--radio \(radio): expected one of \(known)")
        }
        guard jobs > 0 else { throw ValidationError("--jobs must be at least 1") }
        do {
            _ = try Bench.parseSeeds(seeds)
        } catch {
            throw ValidationError(error.message)
        }
    }

    func run() async throws {
        let began = ContinuousClock.now
        let range: ClosedRange<UInt64>
        let chosen: [RandomVenue]
        do {
            range = try Bench.parseSeeds(seeds)
            chosen = try Bench.venues(
                count: venues, from: range, family: family.flatMap(RandomVenue.Family.init(rawValue:)),
                radio: RandomVenue.Radio(rawValue: radio) ?? .standard)
        } catch {
            throw ValidationError(error.message)
        }
        if let runsFrom {
            try Self.checkEarlierBench(runsFrom, of: chosen)
        }
        let programs = try Self.programFolder()
        let root = URL(
            fileURLWithPath: out
                ?? FileManager.default.temporaryDirectory.appendingPathComponent(
                    "beacon-sim-bench-\(UUID())"
                ).path)
        try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
        defer { if out == nil { try? FileManager.default.removeItem(at: root) } }
        if chosen.count < venues {
            Self.note("only \(chosen.count) venues of \(family ?? "any family") in seeds \(Bench.rangeText(range))")
        }
        Self.note("\(chosen.count) venues, seeds \(Bench.rangeText(range)): \(Bench.seedSetNote(range))")

        var rows: [BenchReport.Row] = []
        var failures: [String] = []
        await withTaskGroup(of: Outcome.self) { group in
            var pending = chosen[...]
            func startNext() {
                guard let venue = pending.popFirst() else { return }
                group.addTask {
                    let folder = root.appendingPathComponent("seed-\(venue.seed)")
                    do {
                        return Outcome(
                            seed: venue.seed,
                            result: .success(try await benchVenue(venue, in: folder, programs: programs)))
                    } catch {
                        return Outcome(seed: venue.seed, result: .failure(error))
                    }
                }
            }
            for _ in 0..<jobs { startNext() }
            while let outcome = await group.next() {
                switch outcome.result {
                case .success(let row):
                    rows.append(row)
                    Self.note(
                        "seed \(outcome.seed) (\(row.family)): hub \(String(format: "%.1f", row.hub.accuracy * 100)) %")
                case .failure(let error):
                    failures.append("seed \(outcome.seed): \(error)")
                    Self.note("seed \(outcome.seed): failed: \(error)")
                }
                startNext()
            }
        }
        var report = BenchReport(
            seeds: Bench.rangeText(range), seedSet: Bench.seedSetNote(range),
            durationSeconds: SimulatedDuration.parse(duration) ?? 0, calibrated: calibrated, rows: rows)
        if radio != RandomVenue.Radio.standard.rawValue { report.radio = radio }
        if let phoneWalk {
            report.walk =
                "a phone walk, \(Int(phoneWalk)) s a zone, "
                + (phoneStroll
                    ? (phoneStrollPoints
                        ? "strolling round each zone, tapping where they are every 5 s"
                        : "strolling round each zone and tapping it")
                    : "standing at a tapped point")
        }
        if let walkSkipEvery {
            report.walk =
                (report.walk ?? "a strolling walk") + ", leaving out every \(Self.ordinal(walkSkipEvery)) zone"
        }
        var text = report.table
        if json {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.sortedKeys, .prettyPrinted]
            text = String(decoding: try encoder.encode(report), as: UTF8.self)
        }
        // Written at once, unbuffered: the notes on standard error come after it when both go to one file.
        FileHandle.standardOutput.write(Data((text + "\n").utf8))
        let wall = (ContinuousClock.now - began) / .seconds(1)
        Self.note(
            "\(rows.count) venues in \(String(format: "%.0f", wall)) s wall time, \(jobs) at a time"
                + (out.map { "; files in \($0)" } ?? ""))
        if !failures.isEmpty {
            Self.note("\(failures.count) venues failed (their logs: NAME.err in each seed's folder with --out)")
            throw ExitCode(70)
        }
    }

    /// "2nd", "3rd", "4th", … for `--walk-skip-every`.
    static func ordinal(_ k: Int) -> String {
        let suffix = (11...13).contains(k % 100) ? "th" : [1: "st", 2: "nd", 3: "rd"][k % 10] ?? "th"
        return "\(k)\(suffix)"
    }

    /// What one venue's task hands back. A struct rather than a `(UInt64, Result)` tuple: release builds (Swift 6.3)
    /// read the tuple's seed wrong, printing garbage seeds in the progress notes.
    struct Outcome: Sendable {
        var seed: UInt64
        var result: Result<BenchReport.Row, any Error>
    }

    /// One venue: its files written, its steps run in its folder, its scores read.
    func benchVenue(_ venue: RandomVenue, in folder: URL, programs: URL) async throws -> BenchReport.Row {
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let site = try VenueLoader.decode(venue.yaml, file: Bench.Files.venue).site.rawValue
        try venue.yaml.write(to: folder.appendingPathComponent(Bench.Files.venue), atomically: true, encoding: .utf8)
        try Bench.hubConfiguration(site: site, venueFile: Bench.Files.venue).write(
            to: folder.appendingPathComponent(Bench.Files.hub), atomically: true, encoding: .utf8)
        if calibrated || alsoCalibrated {
            try Bench.hubConfiguration(
                site: site, venueFile: Bench.Files.venue, calibrationFile: Bench.Files.calibration
            ).write(to: folder.appendingPathComponent(Bench.Files.calibratedHub), atomically: true, encoding: .utf8)
        }
        if exactMap {
            try Bench.hubConfiguration(
                site: site, venueFile: Bench.Files.venue, calibrationFile: Bench.Files.exactMap
            ).write(to: folder.appendingPathComponent(Bench.Files.exactMapHub), atomically: true, encoding: .utf8)
        }
        let earlier = runsFrom.map { URL(fileURLWithPath: $0).appendingPathComponent("seed-\(venue.seed)") }
        let recorded = try earlier.map(Self.recordedSteps(in:)) ?? []
        var record: [Bench.RecordedStep] = []
        for step in Bench.steps(
            seed: venue.seed, duration: duration, calibrated: calibrated, alsoCalibrated: alsoCalibrated,
            phoneWalk: phoneWalk, phoneStroll: phoneStroll, strollPoints: phoneStrollPoints,
            walkSkipEvery: walkSkipEvery, exactMap: exactMap)
        {
            if let earlier, Bench.reusable(step, recorded: recorded) {
                try Self.reuse(step, from: earlier, in: folder)
            } else {
                if let required = step.requires,
                    !FileManager.default.fileExists(atPath: folder.appendingPathComponent(required).path)
                {
                    continue
                }
                try await Self.run(step, in: folder, programs: programs)
            }
            record.append(Bench.RecordedStep(step))
            try Self.write(record, in: folder)
        }
        func score(_ name: String) throws -> (
            hub: ZoneScore, baseline: ZoneScore?, still: ZoneScore?, baselineStill: ZoneScore?
        )? {
            let file = folder.appendingPathComponent(name + ".out")
            guard FileManager.default.fileExists(atPath: file.path) else { return nil }
            return try Bench.decodeScore(try Data(contentsOf: file))
        }
        guard let hub = try score(Bench.Files.hubScore) else {
            throw BenchError(.stepFailed, "no score printed")
        }
        // Each score read before the row is built: assigning the calibrated score to a `var row` afterwards crashed
        // the release compiler (Swift 6.3.1, splitting this async function).
        let oracle = try score(Bench.Files.oracleScore)
        let nominal = try score(Bench.Files.nominalScore)?.hub
        let unshadowed = try score(Bench.Files.unshadowedScore)?.hub
        let calibratedHub = try score(Bench.Files.calibratedScore)?.hub
        let exactMapHub = try score(Bench.Files.exactMapScore)?.hub
        return BenchReport.Row(
            seed: venue.seed, family: venue.family.rawValue, zones: venue.zones, gateways: venue.gateways,
            hub: hub.hub, baseline: hub.baseline, oracle: oracle?.hub, nominal: nominal, calibratedHub: calibratedHub,
            hubStill: hub.still, baselineStill: hub.baselineStill, oracleStill: oracle?.still, unshadowed: unshadowed,
            exactMapHub: exactMapHub)
    }

    /// Refuses `--runs-from DIR` unless DIR holds each chosen venue's folder with the same venue file: runs of other
    /// venues (another seed range, the other radio) would be scored against the wrong truth.
    static func checkEarlierBench(_ directory: String, of venues: [RandomVenue]) throws {
        for venue in venues {
            let file = URL(fileURLWithPath: directory).appendingPathComponent("seed-\(venue.seed)")
                .appendingPathComponent(Bench.Files.venue)
            guard let text = try? String(contentsOf: file, encoding: .utf8) else {
                throw ValidationError(
                    "--runs-from \(directory): no \(file.path); give the --out folder of a bench of the same seeds")
            }
            guard text == venue.yaml else {
                throw ValidationError(
                    "--runs-from \(directory): \(file.path) is another venue than seed \(venue.seed) draws here (another"
                        + " --radio, or a generator of another version); run the bench without --runs-from")
            }
        }
    }

    /// The steps an earlier bench recorded in `folder` (none when it recorded nothing).
    static func recordedSteps(in folder: URL) throws -> [Bench.RecordedStep] {
        let file = folder.appendingPathComponent(Bench.stepRecord)
        guard let data = try? Data(contentsOf: file) else { return [] }
        return try data.split(separator: UInt8(ascii: "\n")).map {
            do {
                return try JSONDecoder().decode(Bench.RecordedStep.self, from: Data($0))
            } catch {
                throw BenchError(.stepFailed, "\(file.path): a line is not a recorded step; run that bench again")
            }
        }
    }

    static func write(_ record: [Bench.RecordedStep], in folder: URL) throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        var data = Data()
        for step in record {
            data.append(try encoder.encode(step))
            data.append(UInt8(ascii: "\n"))
        }
        try data.write(to: folder.appendingPathComponent(Bench.stepRecord))
    }

    /// Takes `step`'s outputs from the earlier bench's `earlier` folder instead of running it: its folders linked,
    /// its files hard-linked (copied where links cannot be made), its `NAME.out` and `NAME.err` copied.
    static func reuse(_ step: Bench.Step, from earlier: URL, in folder: URL) throws {
        let files = FileManager.default
        for name in step.writes + [step.name + ".out", step.name + ".err"] {
            let source = earlier.appendingPathComponent(name).resolvingSymlinksInPath()
            let target = folder.appendingPathComponent(name)
            var isFolder: ObjCBool = false
            guard files.fileExists(atPath: source.path, isDirectory: &isFolder) else {
                throw BenchError(
                    .stepFailed,
                    "--runs-from: \(source.path) is missing though its bench ran \(step.name); run the bench without"
                        + " --runs-from")
            }
            try? files.removeItem(at: target)
            if isFolder.boolValue {
                try files.createSymbolicLink(at: target, withDestinationURL: source)
            } else if (try? files.linkItem(at: source, to: target)) == nil {
                try files.copyItem(at: source, to: target)
            }
        }
    }

    /// Runs one step's program in `folder`, its output to `NAME.out` and `NAME.err` there; throws unless it exits 0.
    static func run(_ step: Bench.Step, in folder: URL, programs: URL) async throws {
        let process = Process()
        process.executableURL = programs.appendingPathComponent(step.program.rawValue)
        process.arguments = step.arguments
        process.currentDirectoryURL = folder
        let output = folder.appendingPathComponent(step.name + ".out")
        let errors = folder.appendingPathComponent(step.name + ".err")
        for file in [output, errors] where !FileManager.default.createFile(atPath: file.path, contents: nil) {
            throw BenchError(.stepFailed, "cannot create \(file.path); check the folder is writable")
        }
        let outputHandle = try FileHandle(forWritingTo: output)
        let errorHandle = try FileHandle(forWritingTo: errors)
        defer {
            try? outputHandle.close()
            try? errorHandle.close()
        }
        process.standardOutput = outputHandle
        process.standardError = errorHandle
        process.standardInput = FileHandle.nullDevice
        let (status, signalled): (Int32, Bool) = try await withCheckedThrowingContinuation { continuation in
            process.terminationHandler = { finished in
                continuation.resume(
                    returning: (finished.terminationStatus, finished.terminationReason == .uncaughtSignal))
            }
            do {
                try process.run()
            } catch {
                process.terminationHandler = nil
                continuation.resume(throwing: error)
            }
        }
        guard status == 0 else {
            let said = (try? String(contentsOf: output, encoding: .utf8)) ?? ""
            let complained = (try? String(contentsOf: errors, encoding: .utf8)) ?? ""
            let last = (said + complained).split(separator: "\n").suffix(3).joined(separator: " | ")
            throw BenchError(
                .stepFailed,
                "\(step.program.rawValue) \(step.arguments.joined(separator: " ")) "
                    + (signalled ? "was killed by signal \(status) (out of memory?)" : "exited \(status)")
                    + (last.isEmpty ? "" : ": \(last)"))
        }
    }

    /// The folder of the running beacon-sim, where beacon-hub must be too.
    static func programFolder() throws -> URL {
        let running = Bundle.main.executableURL ?? URL(fileURLWithPath: CommandLine.arguments[0])
        let folder = running.resolvingSymlinksInPath().deletingLastPathComponent()
        let hub = folder.appendingPathComponent(Bench.Step.Program.hub.rawValue)
        guard FileManager.default.isExecutableFile(atPath: hub.path) else {
            printError(
                "\(hub.path) not found: bench replays through the beacon-hub beside beacon-sim; build it too"
                    + " (swift build, or swift build --product beacon-hub with the same -c)")
            throw ExitCode(69)
        }
        return folder
    }

    /// Progress and notes go to standard error, so that --json output stays clean.
    static func note(_ text: String) {
        FileHandle.standardError.write(Data("beacon-sim bench: \(text)\n".utf8))
    }
}
