import BeaconModel

#if canImport(Glibc)
    import Glibc
#endif

/// When each gateway suffers interference (the radio's `interferenceBurstsPerHour`, `interferenceBurstSeconds`):
/// bursts come as a Poisson process, gaps and lengths exponential, and a run starts in a burst as often as a random
/// moment would. Each gateway draws its schedule from its own stream, so the schedule depends on the seed alone, not
/// on when or how often it is asked.
public struct InterferenceBursts: Sendable {
    /// Per gateway: the current or next burst.
    var bursts: [(start: Double, end: Double)]
    var streams: [SeededGenerator]
    let meanGap: Double
    let meanLength: Double

    /// Schedules for `gateways` gateways (in the venue's order) from `start`; none when the rate is 0.
    public init(settings: RadioSettings, gateways: Int, start: Double, using rng: inout SeededGenerator) {
        self.init(
            perHour: settings.interferenceBurstsPerHour, seconds: settings.interferenceBurstSeconds, count: gateways,
            start: start, using: &rng)
    }

    /// Schedules for `count` receivers or links (in order) from `start`, bursts starting `perHour` times an hour and
    /// lasting `seconds` on average; none when the rate is 0.
    public init(perHour: Double, seconds: Double, count: Int, start: Double, using rng: inout SeededGenerator) {
        meanLength = seconds
        guard perHour > 0 else {
            meanGap = .infinity
            bursts = []
            streams = []
            return
        }
        meanGap = 3600 / perHour
        streams = (0..<count).map { _ in rng.split() }
        bursts = []
        let busy = meanLength / (meanLength + meanGap)
        for index in 0..<count {
            // Exponential lengths are memoryless: a burst under way at the start has a fresh exponential rest.
            if Double.random(in: 0..<1, using: &streams[index]) < busy {
                bursts.append((start, start + Self.exponential(meanLength, using: &streams[index])))
            } else {
                let begin = start + Self.exponential(meanGap, using: &streams[index])
                bursts.append((begin, begin + Self.exponential(meanLength, using: &streams[index])))
            }
        }
    }

    /// Whether gateway `index` is in a burst at `t`. For one gateway `t` may only go forward (the schedule is drawn
    /// as time passes).
    public mutating func isActive(gateway index: Int, at t: Double) -> Bool {
        guard !bursts.isEmpty else { return false }
        while t >= bursts[index].end {
            let begin = bursts[index].end + Self.exponential(meanGap, using: &streams[index])
            bursts[index] = (begin, begin + Self.exponential(meanLength, using: &streams[index]))
        }
        return t >= bursts[index].start
    }

    static func exponential(_ mean: Double, using rng: inout SeededGenerator) -> Double {
        -mean * log(1 - Double.random(in: 0..<1, using: &rng))
    }
}
