import Foundation
import Simulator
import Testing

/// `beacon-sim bench` as a user runs it: the built beacon-sim generating, running and scoring small venues, replayed
/// through the built beacon-hub beside it.
@Suite(.timeLimit(.minutes(10)))
struct BenchCommandTests {
    /// Seeds 64 and 65 draw two of the smallest training venues (5 and 4 zones), so the test stays short.
    static let arguments = ["bench", "--venues", "2", "--seeds", "64..65", "--duration", "30s"]

    static func run(_ extra: [String]) async throws -> (status: Int32?, output: String) {
        let running = try Programs.Running("beacon-sim", arguments + extra)
        let status = await running.waitForExit(timeout: .seconds(300))
        return (status, running.text)
    }

    @Test func printsARowPerVenueAndASummaryPerFamily() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("bench-\(UUID())")
        defer { try? FileManager.default.removeItem(at: directory) }
        let (status, output) = try await Self.run(["--json", "--out", directory.path])
        #expect(status == 0, "\(output)")
        // Notes go to standard error, mixed into the output here: the JSON is the block from "{" to "}".
        let lines = output.split(separator: "\n").map(String.init).filter { !$0.hasPrefix("beacon-sim bench:") }
        let first = try #require(lines.firstIndex(of: "{"), "\(output)")
        let last = try #require(lines.lastIndex(of: "}"), "\(output)")
        let report = try JSONDecoder().decode(
            BenchReport.self, from: Data(lines[first...last].joined(separator: "\n").utf8))
        #expect(report.rows.map(\.seed) == [64, 65])
        for row in report.rows {
            #expect((0...1).contains(row.hub.accuracy))
            let baseline = try #require(row.baseline)
            #expect((0...1).contains(baseline.accuracy))
            if let oracle = row.oracle {
                #expect((0...1).contains(oracle.accuracy))
                // The run that wrote the oracle wrote the nominal reference too, and both were scored.
                let nominal = try #require(row.nominal)
                #expect((0...1).contains(nominal.accuracy) && nominal.awayShare != nil)
            }
            #expect(row.hub.tagHours > 0)
            // Every score also away from zone boundaries, over the same share of tag-time.
            let share = try #require(row.hub.awayShare)
            #expect(share > 0 && share <= 1 && baseline.awayShare == share)
        }
        #expect(report.families.last?.medianAwayShare != nil)
        #expect(report.families.last?.family == "all")
        #expect(report.families.last?.venues == 2)
        #expect(report.seedSet.contains("training set"))
        // The replay ran as a user runs it, in the venue's folder, and its files were kept (--out).
        for seed in [64, 65] {
            let folder = directory.appendingPathComponent("seed-\(seed)")
            #expect(FileManager.default.fileExists(atPath: folder.appendingPathComponent("events.jsonl").path))
            let replay = try String(contentsOf: folder.appendingPathComponent("replay.out"), encoding: .utf8)
            #expect(replay.hasPrefix("beacon-hub replay:"))
            #expect(
                FileManager.default.fileExists(atPath: folder.appendingPathComponent("run/near-boundary.jsonl").path))
        }
    }

    /// The JSON report in a bench's output (its notes, on standard error, are mixed in).
    static func report(_ output: String) throws -> BenchReport {
        let lines = output.split(separator: "\n").map(String.init).filter { !$0.hasPrefix("beacon-sim bench:") }
        let first = try #require(lines.firstIndex(of: "{"), "\(output)")
        let last = try #require(lines.lastIndex(of: "}"), "\(output)")
        return try JSONDecoder().decode(BenchReport.self, from: Data(lines[first...last].joined(separator: "\n").utf8))
    }

    /// A phone-walk bench that takes its runs from an earlier bench scores exactly what the same bench run from scratch
    /// scores, and links the run instead of making it again; an earlier bench of other venues is refused.
    @Test func aBenchTakesTheRunsOfAnEarlierOneAndScoresTheSame() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("bench-\(UUID())")
        defer { try? FileManager.default.removeItem(at: directory) }
        let earlier = directory.appendingPathComponent("earlier").path
        let first = try await Self.run(["--also-calibrated", "--json", "--out", earlier])
        #expect(first.status == 0, "\(first.output)")
        let phone = ["--also-calibrated", "--phone-walk", "20", "--phone-stroll", "--exact-map", "--json", "--out"]
        let reused = try await Self.run(
            phone + [directory.appendingPathComponent("reused").path, "--runs-from", earlier])
        let fresh = try await Self.run(phone + [directory.appendingPathComponent("fresh").path])
        #expect(reused.status == 0 && fresh.status == 0, "\(reused.output)\n\(fresh.output)")
        let (a, b) = (try Self.report(reused.output), try Self.report(fresh.output))
        #expect(a.rows == b.rows && a.families == b.families)
        #expect(a.rows.allSatisfy { $0.calibratedHub != nil && $0.exactMapHub != nil })
        for seed in [64, 65] {
            let folder = directory.appendingPathComponent("reused/seed-\(seed)")
            let run = try FileManager.default.destinationOfSymbolicLink(
                atPath: folder.appendingPathComponent("run").path)
            #expect(run.hasSuffix("earlier/seed-\(seed)/run"))
            let record = try String(contentsOf: folder.appendingPathComponent("steps.jsonl"), encoding: .utf8)
            #expect(record.contains("\"name\":\"replay-calibrated\"") && record.contains("\"name\":\"run\""))
        }
        // The same seeds with the foreign radio are other venues: their runs are not these.
        let foreign = try await Self.run(["--radio", "foreign", "--runs-from", earlier])
        #expect(foreign.status == 64, "\(foreign.output)")
        #expect(foreign.output.contains("is another venue than seed 64"), "\(foreign.output)")
    }

    @Test func tableHasRowsAndFamilies() async throws {
        let (status, output) = try await Self.run([])
        #expect(status == 0, "\(output)")
        let lines = output.split(separator: "\n").map(String.init)
        #expect(lines.contains { $0.hasPrefix("  seed  family") })
        #expect(lines.contains { $0.hasPrefix("    64  ") })
        #expect(lines.contains { $0.hasPrefix("    65  ") })
        #expect(lines.contains { $0.hasPrefix("all               2") })
        #expect(output.contains("2 venues in"))
    }

    @Test func testSeedsAreLabelledAndBadRangesRefused() async throws {
        let bad = try await Programs.run("beacon-sim", ["bench", "--seeds", "1-100"])
        #expect(bad.status == 64)
        #expect(bad.output.contains("write A..B"))
        let help = try await Programs.run("beacon-sim", ["bench", "--help"])
        #expect(help.output.contains("1..100") && help.output.contains("1001..1100"))
        // Tapping points as the walker strolls is a kind of strolling walk.
        let points = try await Programs.run(
            "beacon-sim", ["bench", "--also-calibrated", "--phone-walk", "60", "--phone-stroll-points"])
        #expect(points.status == 64)
        #expect(points.output.contains("give --phone-stroll too"), "\(points.output)")
    }
}
