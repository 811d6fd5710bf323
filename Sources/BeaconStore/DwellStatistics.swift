/// Dwell statistics of a set of closed visits: count, distinct tags, total, mean, median and 90th percentile of
/// their durations (seconds). Percentiles interpolate linearly between the nearest ranks, as numpy's default does.
public struct DwellStatistics: Sendable, Hashable, Codable {
    public var visits: Int
    public var tags: Int
    public var total: Double
    public var mean: Double
    public var median: Double
    public var p90: Double

    public init(visits: Int, tags: Int, total: Double, mean: Double, median: Double, p90: Double) {
        self.visits = visits
        self.tags = tags
        self.total = total
        self.mean = mean
        self.median = median
        self.p90 = p90
    }

    /// `nil` for no visits.
    public init?(_ visits: [(tag: String, duration: Double)]) {
        guard !visits.isEmpty else { return nil }
        let durations = visits.map(\.duration).sorted()
        self.visits = durations.count
        tags = Set(visits.map(\.tag)).count
        total = durations.reduce(0, +)
        mean = total / Double(durations.count)
        median = Self.percentile(0.5, ofSorted: durations)
        p90 = Self.percentile(0.9, ofSorted: durations)
    }

    /// The `p` quantile (0…1) of ascending `values` (not empty).
    public static func percentile(_ p: Double, ofSorted values: [Double]) -> Double {
        let position = p * Double(values.count - 1)
        let lower = Int(position.rounded(.down))
        let upper = min(lower + 1, values.count - 1)
        return values[lower] + (values[upper] - values[lower]) * (position - Double(lower))
    }
}
