/// What `beacon-hub check` or `beacon-agent check` found in a configuration and the files it names: what it sets up,
/// or every problem found, each naming its file, key and what to do. Nothing is started to find them.
public struct ConfigCheckReport: Sendable, Hashable {
    /// One line of the summary, e.g. `zones` / `9: entrance, egypt, …`.
    public struct Line: Sendable, Hashable {
        public var label: String
        public var value: String

        public init(_ label: String, _ value: String) {
            self.label = label
            self.value = value
        }
    }

    /// The configuration file as given.
    public var file: String
    /// What the configuration sets up; printed only when there is no problem.
    public var summary: [Line]
    /// What stops the program from starting (exit status 78 from `check`).
    public var problems: [ConfigError]
    /// What does not stop it but is probably not meant (a missing Chart.js, a calibration of other zones).
    public var warnings: [ConfigError]

    public init(file: String, summary: [Line] = [], problems: [ConfigError] = [], warnings: [ConfigError] = []) {
        self.file = file
        self.summary = summary
        self.problems = problems
        self.warnings = warnings
    }

    /// True when the program would start with this configuration.
    public var passed: Bool { problems.isEmpty }

    /// The report as `check` prints it: every problem as `error: file: key: message`; or `file: ok` and the summary.
    /// Warnings either way.
    public var text: String {
        let warningLines = warnings.map { "warning: \($0)" }
        guard passed else {
            let count = problems.count == 1 ? "1 problem" : "\(problems.count) problems"
            return (problems.map { "error: \($0)" } + warningLines + ["\(file): \(count)"]).joined(separator: "\n")
        }
        let width = summary.map(\.label.count).max() ?? 0
        let lines = summary.map { line in
            "  " + line.label + String(repeating: " ", count: width - line.label.count + 2) + line.value
        }
        return (["\(file): ok"] + lines + warningLines).joined(separator: "\n")
    }

    /// How many names, and the first `limit` of them: `9: entrance, egypt, greece, cafe, rome, …`.
    public static func list(_ names: [String], limit: Int = 5) -> String {
        guard !names.isEmpty else { return "none" }
        let shown = names.prefix(limit).joined(separator: ", ")
        return names.count > limit ? "\(names.count): \(shown), …" : "\(names.count): \(shown)"
    }

    /// `72` rather than `72.0`.
    public static func number(_ value: Double) -> String {
        value == value.rounded() && abs(value) < 1e15 ? String(Int64(value)) : "\(value)"
    }

    /// `64 MiB`, or the bytes when not a whole number of MiB.
    public static func bytes(_ count: Int) -> String {
        count % 1_048_576 == 0 ? "\(count / 1_048_576) MiB" : "\(count) bytes"
    }
}
