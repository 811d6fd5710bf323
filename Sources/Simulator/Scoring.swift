import BeaconModel

/// What one tag's reported zone was over time: a step function, nil meaning "no zone".
public struct ZoneTimeline: Sendable, Hashable {
    /// Changes in time order: from `t` on, the zone is `zone`.
    public private(set) var steps: [(t: Double, zone: ZoneID?)] = []

    public init() {}

    public static func == (lhs: ZoneTimeline, rhs: ZoneTimeline) -> Bool {
        lhs.steps.count == rhs.steps.count
            && zip(lhs.steps, rhs.steps).allSatisfy { $0.t == $1.t && $0.zone == $1.zone }
    }

    public func hash(into hasher: inout Hasher) {
        for step in steps {
            hasher.combine(step.t)
            hasher.combine(step.zone)
        }
    }

    /// Records that from `t` on the zone is `zone` (a repeat of the current zone is not a change).
    /// An exit and an enter decided at the same instant are one change.
    public mutating func set(_ zone: ZoneID?, at t: Double) {
        if let last = steps.last, last.t == t {
            steps.removeLast()
        }
        if let last = steps.last, last.zone == zone { return }
        steps.append((t, zone))
    }

    /// The zone at time `t` (nil before the first step).
    public func zone(at t: Double) -> ZoneID? {
        var low = 0
        var high = steps.count
        while low < high {
            let mid = (low + high) / 2
            if steps[mid].t <= t { low = mid + 1 } else { high = mid }
        }
        return low == 0 ? nil : steps[low - 1].zone
    }

    /// Applies one event line: enter sets the zone, exit and unknown clear it, stayed and the rest change nothing.
    public mutating func apply(_ event: ZoneEvent) {
        switch event.type {
        case .enter: set(event.zone, at: event.t)
        case .exit, .unknown: set(nil, at: event.t)
        case .stayed, .suspect, .alert: break
        }
    }

    /// Applies one event line to its tag's timeline (events without a tag change nothing).
    public static func apply(_ event: ZoneEvent, to timelines: inout [TagID: ZoneTimeline]) {
        if let tag = event.tag { timelines[tag, default: ZoneTimeline()].apply(event) }
    }
}

/// The scorer's numbers for one tag or for all (docs/simulator.md, `score`).
public struct ZoneScore: Sendable, Hashable, Codable {
    /// Share of tag-time the reported zone is the true one (no zone counts when both agree).
    public var accuracy: Double
    /// Seconds from a true crossing to the decision that reported it (median, 90th percentile); nil without any.
    public var latencyMedian: Double?
    public var latencyP90: Double?
    /// Reported changes into a zone the tag was not in, per tag-hour.
    public var falseTransitionsPerTagHour: Double
    public var falseTransitions: Int
    public var missedTransitions: Int
    public var trueTransitions: Int
    /// Share of tag-time with no zone reported while the tag was in one.
    public var noZoneShare: Double
    public var tagHours: Double
    /// Scored with the near-boundary intervals of the run (nil without them): the accuracy over the tag-time the tag
    /// was away from every zone boundary (nil when it never was), and that time's share of all scored tag-time.
    public var awayAccuracy: Double? = nil
    public var awayShare: Double? = nil
}

/// Compares reported zone timelines with the ground truth.
public enum Scorer {
    /// Evaluation starts this long after each tag's first truth interval (the hub needs a few packets).
    public static let startGrace = 2.0

    /// Scores every tag of `truth` against the event lines reported for it; tags without reports count as never
    /// reported. Returns the overall score and one per tag. With `nearBoundary` (the run's near-boundary intervals;
    /// a tag without any was never near), the scores also carry the accuracy away from boundaries.
    public static func score(
        truth: [TruthInterval], events: some Sequence<ZoneEvent>, nearBoundary: [NearBoundaryInterval]? = nil
    ) -> (overall: ZoneScore, perTag: [TagID: ZoneScore]) {
        var timelines: [TagID: ZoneTimeline] = [:]
        for event in events { ZoneTimeline.apply(event, to: &timelines) }
        return score(truth: truth, reported: timelines, nearBoundary: nearBoundary)
    }

    /// Scores every tag of `truth` against its reported timeline.
    public static func score(
        truth: [TruthInterval], reported: [TagID: ZoneTimeline], nearBoundary: [NearBoundaryInterval]? = nil
    ) -> (overall: ZoneScore, perTag: [TagID: ZoneScore]) {
        let near = nearBoundary.map { intervals in
            Dictionary(grouping: intervals, by: \.tag).mapValues { $0.sorted { $0.from < $1.from } }
        }
        var perTag: [TagID: ZoneScore] = [:]
        var totals = Accumulator(scoresAway: near != nil)
        for (tag, intervals) in Dictionary(grouping: truth, by: \.tag) {
            var accumulator = Accumulator(scoresAway: near != nil)
            accumulate(
                intervals.sorted { $0.enter < $1.enter }, reported[tag] ?? ZoneTimeline(), near: near?[tag] ?? [],
                into: &accumulator)
            perTag[tag] = accumulator.score
            totals.merge(accumulator)
        }
        return (totals.score, perTag)
    }

    struct Accumulator {
        var seconds = 0.0
        var correct = 0.0
        var noZone = 0.0
        var latencies: [Double] = []
        var falseTransitions = 0
        var missed = 0
        var trueTransitions = 0
        /// Whether near-boundary intervals were given; then the time away from boundaries, and of it the correct.
        var scoresAway = false
        var awaySeconds = 0.0
        var awayCorrect = 0.0

        mutating func merge(_ other: Accumulator) {
            seconds += other.seconds
            correct += other.correct
            noZone += other.noZone
            latencies += other.latencies
            falseTransitions += other.falseTransitions
            missed += other.missed
            trueTransitions += other.trueTransitions
            awaySeconds += other.awaySeconds
            awayCorrect += other.awayCorrect
        }

        var score: ZoneScore {
            let sorted = latencies.sorted()
            func percentile(_ p: Double) -> Double? {
                sorted.isEmpty ? nil : sorted[min(sorted.count - 1, Int((p * Double(sorted.count - 1)).rounded()))]
            }
            let hours = seconds / 3600
            return ZoneScore(
                accuracy: seconds > 0 ? correct / seconds : 0, latencyMedian: percentile(0.5),
                latencyP90: percentile(0.9),
                falseTransitionsPerTagHour: hours > 0 ? Double(falseTransitions) / hours : 0,
                falseTransitions: falseTransitions, missedTransitions: missed, trueTransitions: trueTransitions,
                noZoneShare: seconds > 0 ? noZone / seconds : 0, tagHours: hours,
                awayAccuracy: scoresAway && awaySeconds > 0 ? awayCorrect / awaySeconds : nil,
                awayShare: scoresAway ? (seconds > 0 ? awaySeconds / seconds : 0) : nil)
        }
    }

    /// Adds one tag's figures; `near` is its near-boundary intervals in time order.
    static func accumulate(
        _ truth: [TruthInterval], _ reported: ZoneTimeline, near: [NearBoundaryInterval] = [],
        into result: inout Accumulator
    ) {
        guard let first = truth.first, let last = truth.last else { return }
        let begin = first.enter + startGrace
        let end = last.exit
        guard end > begin else { return }
        // Time shares: walk the union of truth boundaries, report steps and near-boundary intervals.
        var cuts = Set(
            truth.flatMap { [$0.enter, $0.exit] } + reported.steps.map(\.t) + near.flatMap { [$0.from, $0.to] })
        cuts.insert(begin)
        let points = cuts.filter { $0 >= begin && $0 <= end }.sorted()
        var truthIndex = 0
        var nearIndex = 0
        for (a, b) in zip(points, points.dropFirst()) where b > a {
            let middle = (a + b) / 2
            while truthIndex < truth.count - 1 && truth[truthIndex].exit <= middle { truthIndex += 1 }
            let actual = truth[truthIndex].zone
            let shown = reported.zone(at: middle)
            result.seconds += b - a
            if shown == actual { result.correct += b - a }
            if shown == nil && actual != nil { result.noZone += b - a }
            while nearIndex < near.count && near[nearIndex].to <= middle { nearIndex += 1 }
            if result.scoresAway && !(nearIndex < near.count && near[nearIndex].from <= middle) {
                result.awaySeconds += b - a
                if shown == actual { result.awayCorrect += b - a }
            }
        }
        // Transitions: each true crossing is matched by the first reported change into the new zone before the next
        // crossing; a reported change into a zone the tag was not in at that moment is false.
        let crossings = zip(truth, truth.dropFirst()).map { (t: $0.exit, to: $1.zone) }.filter { $0.t >= begin }
        for (index, crossing) in crossings.enumerated() {
            result.trueTransitions += 1
            let until = index + 1 < crossings.count ? crossings[index + 1].t : end
            if let match = reported.steps.first(where: { $0.t >= crossing.t && $0.t < until && $0.zone == crossing.to })
            {
                result.latencies.append(match.t - crossing.t)
            } else {
                result.missed += 1
            }
        }
        var truthCursor = 0
        for step in reported.steps where step.t >= begin && step.t <= end {
            while truthCursor < truth.count - 1 && truth[truthCursor].exit <= step.t { truthCursor += 1 }
            if step.zone != nil && step.zone != truth[truthCursor].zone { result.falseTransitions += 1 }
        }
    }
}
