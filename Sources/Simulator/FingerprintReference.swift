import BeaconModel
import Foundation

/// The reference that labelled recordings allow where no oracle exists: a naive-Bayes fingerprint of each zone,
/// trained on labelled runs (sightings and truth) and nothing else, followed by a filter that moves only through the
/// venue's doors. It knows no propagation law, no gateway position and no noise shape, so it shares no assumption with
/// the engine or the simulator: it says what the labelled data alone can tell.
///
/// Per window of `Settings.window` seconds, each gateway either heard the tag (its mean level in the window) or did
/// not. Per zone and gateway the model holds the share of the zone's training windows in which the gateway heard the
/// tag and the spread of the levels it heard (a histogram of 1 dB bins smoothed by a kernel of `Settings.kernel` dB,
/// mixed with a uniform share). A zone with fewer than `Settings.minimumWindows` training windows takes the model of
/// all training windows pooled: it is known to exist but not how it sounds. The filter starts uniform, moves from one
/// zone to a zone through a door at the rate of zone changes in the training truth, and reports its most likely zone
/// at the end of every window.
public struct FingerprintReference: Sendable {
    public struct Settings: Sendable {
        public var window: Double = 1
        /// Standard deviation of the kernel that smooths each level histogram, dB.
        public var kernel: Double = 3
        /// Share of every level density spread uniformly over the bins: one reading far from training costs a
        /// bounded amount.
        public var uniformShare: Double = 0.05
        public var minimumWindows = 10
        /// Chance per window of a move to any zone, doors or not: the filter recovers from a wrong start.
        public var jump: Double = 0.001

        public init() {}
    }

    /// One labelled run: its sighting lines and the truth.
    public struct LabelledRun: Sendable {
        public var sightings: [SightingLine]
        public var truth: [TruthInterval]

        public init(sightings: [SightingLine], truth: [TruthInterval]) {
            self.sightings = sightings
            self.truth = truth
        }
    }

    /// What training found: windows per zone (zones below the minimum use the pooled model) and the move rate.
    public struct Summary: Sendable, Codable {
        public var windowsPerZone: [String: Int]
        public var pooledZones: [String]
        public var movesPerSecond: Double
    }

    static let lowestLevel = -120
    static let highestLevel = -10
    static var bins: Int { highestLevel - lowestLevel + 1 }

    /// Log-probabilities of one gateway in one zone: not heard, and heard at each level bin.
    struct GatewayModel: Sendable {
        var missed: Double
        var heard: [Double]

        func logLikelihood(_ level: Double?) -> Double {
            guard let level else { return missed }
            let bin = min(
                max(Int(level.rounded()) - FingerprintReference.lowestLevel, 0), FingerprintReference.bins - 1)
            return heard[bin]
        }
    }

    let zones: [ZoneID]
    let gateways: [GatewayID]
    /// models[zone][gateway], in the order of `zones` and `gateways`.
    let models: [[GatewayModel]]
    /// neighbours[zone]: the zones one door away, as indices of `zones`.
    let neighbours: [[Int]]
    let movesPerWindow: Double
    let settings: Settings
    let beaconTags: [String: TagID]
    public let summary: Summary

    /// Trains on `runs`. The venue gives the zones, the doors and which beacon is which tag.
    public init(venue: Venue, runs: [LabelledRun], settings: Settings = Settings()) {
        self.settings = settings
        let zones = venue.zones.map(\.id)
        let gateways = venue.gateways.map(\.id)
        self.zones = zones
        self.gateways = gateways
        beaconTags = Dictionary(venue.namedTags.map { ($0.beacon, $0.id) }, uniquingKeysWith: { first, _ in first })
        let zoneIndex = Dictionary(uniqueKeysWithValues: zones.enumerated().map { ($0.element, $0.offset) })
        var neighbours = Array(repeating: Set<Int>(), count: zones.count)
        for door in venue.doors {
            guard let a = zoneIndex[ZoneID(unchecked: door.between[0])],
                let b = zoneIndex[ZoneID(unchecked: door.between[1])]
            else {
                continue
            }
            neighbours[a].insert(b)
            neighbours[b].insert(a)
        }
        self.neighbours = neighbours.map { $0.sorted() }

        // Training windows: the levels heard per gateway, labelled with the true zone at the window's end.
        var levels = Array(repeating: Array(repeating: [Double](), count: gateways.count), count: zones.count)
        var windowCount = Array(repeating: 0, count: zones.count)
        var changes = 0
        var seconds = 0.0
        let gatewayIndex = Dictionary(uniqueKeysWithValues: gateways.enumerated().map { ($0.element, $0.offset) })
        for run in runs {
            let truth = run.truth.sorted { $0.enter < $1.enter }
            changes += zip(truth, truth.dropFirst()).filter { $0.zone != $1.zone }.count
            seconds += truth.reduce(0) { $0 + $1.exit - $1.enter }
            for window in Self.windows(run.sightings, width: settings.window, gateways: gatewayIndex) {
                guard let interval = truth.first(where: { $0.enter <= window.end && window.end < $0.exit }),
                    let zone = interval.zone, let z = zoneIndex[zone]
                else { continue }
                windowCount[z] += 1
                for (g, level) in window.levels.enumerated() {
                    if let level { levels[z][g].append(level) }
                }
            }
        }
        let pooledLevels = (0..<gateways.count).map { g in levels.flatMap { $0[g] } }
        let pooledWindows = windowCount.reduce(0, +)
        var models: [[GatewayModel]] = []
        var pooledZones: [String] = []
        for z in zones.indices {
            let pooled = windowCount[z] < settings.minimumWindows
            if pooled { pooledZones.append(zones[z].rawValue) }
            models.append(
                gateways.indices.map { g in
                    pooled
                        ? Self.model(levels: pooledLevels[g], windows: pooledWindows, settings: settings)
                        : Self.model(levels: levels[z][g], windows: windowCount[z], settings: settings)
                })
        }
        self.models = models
        let rate = seconds > 0 ? Double(changes) / seconds : 0
        movesPerWindow = min(max(rate, 1.0 / 600), 0.2) * settings.window
        summary = Summary(
            windowsPerZone: Dictionary(
                uniqueKeysWithValues: zones.indices.map { (zones[$0].rawValue, windowCount[$0]) }),
            pooledZones: pooledZones, movesPerSecond: rate)
    }

    /// One gateway's model from the levels it heard in `windows` windows of a zone.
    static func model(levels: [Double], windows: Int, settings: Settings) -> GatewayModel {
        let heardShare = (Double(levels.count) + 0.5) / (Double(windows) + 1)
        var density = Array(repeating: 0.0, count: bins)
        let reach = Int((settings.kernel * 4).rounded(.up))
        for level in levels {
            let centre = Int(level.rounded()) - lowestLevel
            for bin in max(centre - reach, 0)...min(centre + reach, bins - 1) {
                let distance = Double(bin + lowestLevel) - level
                density[bin] += exp(-distance * distance / (2 * settings.kernel * settings.kernel))
            }
        }
        let total = density.reduce(0, +)
        let uniform = 1 / Double(bins)
        let heard = density.map { mass in
            let share =
                total > 0 ? (1 - settings.uniformShare) * mass / total + settings.uniformShare * uniform : uniform
            return log(heardShare) + log(share)
        }
        return GatewayModel(missed: log(1 - heardShare), heard: heard)
    }

    /// The run's windows: each window's end and each gateway's mean level in it (nil: not heard). Windows run from
    /// the first sighting to the last, every one of them, heard or not.
    static func windows(_ sightings: [SightingLine], width: Double, gateways: [GatewayID: Int])
        -> [(end: Double, levels: [Double?])]
    {
        let sorted = sightings.sorted { $0.t < $1.t }
        guard let first = sorted.first?.t, let last = sorted.last?.t else { return [] }
        var windows: [(end: Double, levels: [Double?])] = []
        var next = 0
        var end = first + width
        while end - width <= last {
            var sums = Array(repeating: 0.0, count: gateways.count)
            var counts = Array(repeating: 0, count: gateways.count)
            while next < sorted.count, sorted[next].t < end {
                if let g = gateways[sorted[next].gateway] {
                    sums[g] += Double(sorted[next].rssi)
                    counts[g] += 1
                }
                next += 1
            }
            windows.append((end, zip(sums, counts).map { $1 > 0 ? $0 / Double($1) : nil }))
            end += width
        }
        return windows
    }

    /// The reference's zone events for `sightings`, per tag (sightings of beacons the venue does not name are left
    /// out): an enter at the first window, then an exit and an enter whenever the most likely zone changes.
    public func events(for sightings: [SightingLine]) -> [ZoneEvent] {
        let gatewayIndex = Dictionary(uniqueKeysWithValues: gateways.enumerated().map { ($0.element, $0.offset) })
        let byTag = Dictionary(grouping: sightings.compactMap { line in beaconTags[line.beacon].map { ($0, line) } }) {
            $0.0
        }
        var events: [ZoneEvent] = []
        for tag in byTag.keys.sorted(by: { $0.rawValue < $1.rawValue }) {
            var belief = Array(repeating: 1 / Double(zones.count), count: zones.count)
            var reported: Int?
            for window in Self.windows(byTag[tag]!.map(\.1), width: settings.window, gateways: gatewayIndex) {
                belief = step(belief, levels: window.levels)
                let best = belief.indices.max { belief[$0] < belief[$1] }!
                guard best != reported else { continue }
                if let reported {
                    events.append(
                        ZoneEvent(
                            type: .exit, tag: tag, zone: zones[reported], t: window.end, confidence: belief[best],
                            reason: "fingerprint reference"))
                }
                events.append(
                    ZoneEvent(
                        type: .enter, tag: tag, zone: zones[best], previousZone: reported.map { zones[$0] },
                        t: window.end, confidence: belief[best], reason: "fingerprint reference"))
                reported = best
            }
        }
        return events.sorted { $0.t < $1.t }
    }

    /// One window of the filter: the moves through doors, then the window's readings.
    func step(_ belief: [Double], levels: [Double?]) -> [Double] {
        let count = zones.count
        var prior = Array(repeating: settings.jump / Double(count), count: count)
        for (z, mass) in belief.enumerated() {
            let moving = neighbours[z].isEmpty ? 0 : movesPerWindow
            prior[z] += mass * (1 - settings.jump) * (1 - moving)
            for n in neighbours[z] {
                prior[n] += mass * (1 - settings.jump) * moving / Double(neighbours[z].count)
            }
        }
        let logs = prior.indices.map { z in
            log(max(prior[z], 1e-300))
                + levels.enumerated().reduce(0) { $0 + models[z][$1.offset].logLikelihood($1.element) }
        }
        let top = logs.max()!
        let weights = logs.map { exp($0 - top) }
        let total = weights.reduce(0, +)
        return weights.map { $0 / total }
    }
}

extension FingerprintReference {
    /// A labelled run from files: `DIR/sightings.jsonl` and `DIR/truth.jsonl` (each also as `.jsonl.gz`). Unreadable
    /// lines are added to `skipped`.
    public static func labelledRun(directory: String, skipped: inout [String]) throws -> LabelledRun {
        func path(_ name: String) -> String {
            let plain = directory + "/" + name + ".jsonl"
            return FileManager.default.fileExists(atPath: plain) ? plain : plain + ".gz"
        }
        return LabelledRun(
            sightings: try sightingLines(path("sightings"), skipped: &skipped),
            truth: try ScoreTool.records(path("truth"), skipped: &skipped))
    }

    /// The sighting lines of a file; unreadable lines are added to `skipped`.
    public static func sightingLines(_ path: String, skipped: inout [String]) throws -> [SightingLine] {
        var lines: [SightingLine] = []
        try LineFileReader.forEachLine(path) { line, number in
            do {
                lines.append(try SightingLine.decode(line: line))
            } catch {
                skipped.append("\(path):\(number): \(error)")
            }
        }
        return lines
    }
}
