import Foundation
import Testing

/// Replays the fuzzer's corpus (Tests/Fuzz/corpus) and every crash it ever found (Tests/Fuzz/crashes) through the same
/// entry point as the fuzzer (scripts/fuzz.sh): each must now return. A regression crashes this test process.
@Suite struct FuzzRegressionTests {
    static let fuzz = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Fuzz")

    static func inputs(_ folder: String) throws -> [(name: String, bytes: [UInt8])] {
        let directory = fuzz.appendingPathComponent(folder)
        return try FileManager.default.contentsOfDirectory(atPath: directory.path).sorted()
            .filter { !$0.hasPrefix(".") && !$0.hasSuffix(".md") }
            .map { ($0, Array(try Data(contentsOf: directory.appendingPathComponent($0)))) }
    }

    @Test func theCorpusCoversEveryParserAndRunsClean() throws {
        let corpus = try Self.inputs("corpus")
        let parsers = Set(corpus.compactMap { $0.bytes.first.map { Int($0) % FuzzInput.parsers.count } })
        #expect(parsers.count == FuzzInput.parsers.count, "corpus reaches parsers \(parsers.sorted())")
        for input in corpus { FuzzInput.run(input.bytes) }
    }

    @Test func everyCrashFoundStaysFixed() throws {
        for input in try Self.inputs("crashes") { FuzzInput.run(input.bytes) }
    }

    @Test func theSeedsAreValidInputsOfEachKind() {
        let seeds = FuzzInput.seeds()
        #expect(Set(seeds.compactMap(\.first)) == [0, 1, 2, 3, 4])
        for seed in seeds { FuzzInput.run(seed) }
    }
}
