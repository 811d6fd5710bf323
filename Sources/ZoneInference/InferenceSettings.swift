/// hub.yaml's `inference:` section: every threshold of the zone engine, with defaults reasoned in
/// docs/configuration.md ("inference"). Times are seconds of sighting time, never sample counts, because tags
/// advertise anywhere from 10 Hz to once every 30 s.
public struct InferenceSettings: Sendable, Hashable, Decodable {
    /// How a tag's zone is chosen.
    public enum Method: String, Sendable, Hashable, Decodable, CaseIterable {
        /// Probabilistic: an HMM forward filter over zones and "no zone", with hysteresis.
        case hmm
        /// A Bayes filter over each tag's position on the floor plan (cells of `cellMetres`), walking only through
        /// doors, weighing every reading against the expected level at each cell; a zone's probability is the mass
        /// inside it.
        case position
        /// The baseline people run today: the zone of the strongest gateway, after it has led for `confirmSeconds`.
        case strongest
    }

    public var method = Method.position
    /// Time constant of the per-(tag, gateway) RSSI smoothing.
    public var smoothingSeconds = 1.5
    /// A gateway that has not heard a tag for this long (or 3 advertising intervals, if longer) stops counting.
    public var staleSeconds = 3.0
    /// A new zone must stay the most likely, with at least `enterProbability`, for this long before it is reported.
    public var confirmSeconds = 1.0
    /// Posterior probability a new zone needs before its confirmation time starts…
    public var enterProbability = 0.7
    /// …or this many times the reported zone's (0: only `enterProbability`), for `leadSeconds`. Where the belief is
    /// spread over three zones or more (an open hall's quadrants, a tag between rooms), no zone may reach
    /// `enterProbability` for long while the reported one has long lost it: the leader is taken once it has clearly led
    /// the reported zone for a while.
    public var leadRatio = 2.0
    public var leadSeconds = 5.0
    /// A tag heard by no gateway for this long (or 4 advertising intervals, if longer) exits its zone.
    public var absenceSeconds = 12.0
    /// Expected rate of leaving a zone through a door, per second (the HMM's transition prior).
    public var moveRatePerSecond = 0.1
    /// How much one second of evidence counts (emission tempering: smoothed RSSI is strongly autocorrelated).
    public var emissionWeight = 0.3
    /// Uncalibrated model: path-loss exponent n of P0 − 10·n·log10(d).
    public var pathLossExponent = 2.0
    /// Uncalibrated model: loss per zone boundary between a tag and a gateway (rooms have walls), dB.
    public var boundaryLossDB = 6.0
    /// Uncalibrated model error, dB (added to the spread of levels across a zone).
    public var modelSigmaDB = 5.0
    /// Measured power at 1 m assumed for tags that do not advertise one, dBm.
    public var referencePower = -59.0
    /// Gateways hear nothing below this, dBm.
    public var sensitivity = -95.0
    /// Spread of a tag's unknown power offset (orientation, body, battery), dB: estimated per update.
    public var tagOffsetSigmaDB = 2.0
    /// The same for a tag that advertises no measured power and has none configured: its power is a guess, dB.
    public var unknownPowerSigmaDB = 10.0
    /// A shortfall this large at one gateway costs nothing: the carrier's body may be in the way, dB.
    public var bodyLossDB = 6.0
    /// Most one gateway's residual may cost, in nats (z²/2): a reflection or a deep fade cannot veto a zone alone.
    public var residualCap = 8.0
    /// With a calibration: how much a zone's measured level counts against the model's, 0…1. A profile is taken
    /// at one spot; the model averages the whole zone.
    public var calibrationWeight = 0.5
    /// Default dwell before a `stayed` event, for tags of no region (AMap's Stayed: 10 minutes).
    public var stayedSeconds = 600.0
    /// Sightings older than the newest by more than this are kept for storage but not applied.
    public var reorderWindowSeconds = 10.0
    /// Fastest plausible walk between zones, m/s: faster moves between non-adjacent zones are `suspect`.
    public var maxWalkingSpeed = 2.5
    /// A tag heard within `strongMarginDB` of its 1 m power by two gateways at least `cloneDistanceMetres` apart,
    /// in zones without a door between them, is `suspect` (a cloned or spoofed beacon).
    public var strongMarginDB = 10.0
    public var cloneDistanceMetres = 15.0
    /// How often the engine updates its beliefs, seconds of sighting time.
    public var tickSeconds = 0.5
    /// `position`: side of the floor grid's square cells, metres.
    public var cellMetres = 0.5
    /// `position`: how much one reading counts (tempering: a reading's error lasts longer than the reading).
    public var readingWeight = 0.5
    /// `position`: share of a cell's probability that stays put per tick; the rest walks to the cells within
    /// `maxWalkingSpeed · tickSeconds`.
    public var stayShare = 0.3
    /// `position`: most cells one tag's belief keeps (the least likely are dropped): bounds memory and time per tag.
    public var maxCells = 400.0
    /// `position`: how long the evidence for a power offset of a tag that advertises none lasts, seconds.
    public var offsetSeconds = 300.0
    /// `position`: weigh several path-loss exponents against each other on the first `probeTags` tags heard, and use
    /// the one the readings favour; off: `pathLossExponent` alone.
    public var learnsExponent = true
    public var probeTags = 16
    /// `position`: weigh several observation models (the readings' spread about a cell's level and its tails) against
    /// each other by how well they predict the next readings of the first tags heard, and use the best; off: the one
    /// the engine starts from (`ObservationModel.start`). Off by default: on the training data the best predictor
    /// placed tags worse (docs/inference.md).
    public var learnsNoise = false
    /// `position`: take each gateway's sensitivity from the quietest of its readings (never below `sensitivity`): a
    /// gateway that hears nothing below −85 dBm is not expected to hear a tag at −90.
    public var learnsSensitivity = true
    /// `position`: learn per gateway and 3 m tile what the map misses (gains, antennas, shadowing) from tags the
    /// engine is sure of.
    public var learnsMap = false
    /// Gateways' own beacons: how often the links are fitted and what they taught is applied to the levels
    /// the engine expects (seconds of sighting time; 0: never applied, the fit is still reported), and how much of the
    /// links' past the fit takes (seconds).
    public var linkFitSeconds = 300.0
    public var linkWindowSeconds = 1800.0
    /// Whether the walls' losses the links measured go into the `position` map too (off: docs/inference.md says why).
    public var linkWallLosses = false
    /// Shade a gateway's levels in the `position` map by the antenna pattern the links fitted, for gateways whose
    /// venue entry says which way their antenna faces (the gain the links give them is the gain straight ahead).
    public var linkAntennas = true

    public init() {}

    /// How long a leader other than the reported state, at `probability` against the reported state's `reported`,
    /// must lead before it is reported: `confirmSeconds` once it holds `enterProbability`, `leadSeconds` (at least
    /// `confirmSeconds`) while it only leads the reported state by `leadRatio` (and `leads`); nil when it does neither.
    public func confirmation(_ probability: Double, reported: Double, leads: Bool = true) -> Double? {
        if probability >= enterProbability { return confirmSeconds }
        if leads && leadRatio > 0 && probability >= leadRatio * reported { return max(leadSeconds, confirmSeconds) }
        return nil
    }

    /// The strongest-gateway baseline as `beacon-sim score` runs it (roughly ESPresense with mqtt_room): plain EMA
    /// of τ 2 s, a 5 s lead to switch, 30 s of silence to leave, gateways stale after 10 s.
    public static var strongestBaseline: InferenceSettings {
        var settings = InferenceSettings()
        settings.method = .strongest
        settings.smoothingSeconds = 2
        settings.confirmSeconds = 5
        settings.absenceSeconds = 30
        settings.staleSeconds = 10
        return settings
    }

    enum CodingKeys: String, CodingKey, CaseIterable {
        case method, smoothingSeconds, staleSeconds, confirmSeconds, enterProbability, leadRatio, leadSeconds
        case absenceSeconds, moveRatePerSecond, emissionWeight, pathLossExponent, boundaryLossDB, modelSigmaDB,
            referencePower
        case sensitivity, tagOffsetSigmaDB, stayedSeconds, reorderWindowSeconds, maxWalkingSpeed, strongMarginDB
        case cloneDistanceMetres, tickSeconds, bodyLossDB, residualCap, calibrationWeight, unknownPowerSigmaDB
        case cellMetres, readingWeight, stayShare, maxCells, offsetSeconds, learnsExponent, probeTags, learnsNoise
        case learnsSensitivity
        case learnsMap, linkFitSeconds, linkWindowSeconds, linkWallLosses, linkAntennas
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        func value(_ key: CodingKeys, _ current: Double, _ range: ClosedRange<Double>) throws -> Double {
            guard let found = try container.decodeIfPresent(Double.self, forKey: key) else { return current }
            guard range.contains(found) else {
                throw DecodingError.dataCorruptedError(
                    forKey: key, in: container, debugDescription: "expected \(range.lowerBound)...\(range.upperBound)")
            }
            return found
        }
        method = try container.decodeIfPresent(Method.self, forKey: .method) ?? method
        smoothingSeconds = try value(.smoothingSeconds, smoothingSeconds, 0.1...120)
        staleSeconds = try value(.staleSeconds, staleSeconds, 0.5...600)
        confirmSeconds = try value(.confirmSeconds, confirmSeconds, 0...600)
        enterProbability = try value(.enterProbability, enterProbability, 0.34...0.999)
        leadRatio = try value(.leadRatio, leadRatio, 0...1000)
        leadSeconds = try value(.leadSeconds, leadSeconds, 0...600)
        guard leadRatio == 0 || leadRatio >= 1.1 else {
            throw DecodingError.dataCorruptedError(
                forKey: .leadRatio, in: container, debugDescription: "expected 0 (off) or 1.1...1000")
        }
        absenceSeconds = try value(.absenceSeconds, absenceSeconds, 1...3600)
        moveRatePerSecond = try value(.moveRatePerSecond, moveRatePerSecond, 0.0001...10)
        emissionWeight = try value(.emissionWeight, emissionWeight, 0.01...10)
        pathLossExponent = try value(.pathLossExponent, pathLossExponent, 1...6)
        boundaryLossDB = try value(.boundaryLossDB, boundaryLossDB, 0...40)
        modelSigmaDB = try value(.modelSigmaDB, modelSigmaDB, 0.5...30)
        referencePower = try value(.referencePower, referencePower, -100...0)
        sensitivity = try value(.sensitivity, sensitivity, -120 ... -40)
        tagOffsetSigmaDB = try value(.tagOffsetSigmaDB, tagOffsetSigmaDB, 0.1...30)
        unknownPowerSigmaDB = try value(.unknownPowerSigmaDB, unknownPowerSigmaDB, 0.1...30)
        stayedSeconds = try value(.stayedSeconds, stayedSeconds, 1...86_400)
        reorderWindowSeconds = try value(.reorderWindowSeconds, reorderWindowSeconds, 0...3600)
        maxWalkingSpeed = try value(.maxWalkingSpeed, maxWalkingSpeed, 0.1...50)
        strongMarginDB = try value(.strongMarginDB, strongMarginDB, 0...60)
        cloneDistanceMetres = try value(.cloneDistanceMetres, cloneDistanceMetres, 1...10_000)
        tickSeconds = try value(.tickSeconds, tickSeconds, 0.05...10)
        bodyLossDB = try value(.bodyLossDB, bodyLossDB, 0...30)
        residualCap = try value(.residualCap, residualCap, 0.5...100)
        calibrationWeight = try value(.calibrationWeight, calibrationWeight, 0...1)
        cellMetres = try value(.cellMetres, cellMetres, 0.25...5)
        readingWeight = try value(.readingWeight, readingWeight, 0.01...2)
        stayShare = try value(.stayShare, stayShare, 0...0.99)
        maxCells = try value(.maxCells, maxCells, 16...100_000).rounded()
        offsetSeconds = try value(.offsetSeconds, offsetSeconds, 1...86_400)
        learnsExponent = try container.decodeIfPresent(Bool.self, forKey: .learnsExponent) ?? learnsExponent
        learnsNoise = try container.decodeIfPresent(Bool.self, forKey: .learnsNoise) ?? learnsNoise
        learnsSensitivity =
            try container.decodeIfPresent(Bool.self, forKey: .learnsSensitivity) ?? learnsSensitivity
        learnsMap = try container.decodeIfPresent(Bool.self, forKey: .learnsMap) ?? learnsMap
        probeTags = Int(try value(.probeTags, Double(probeTags), 1...1000))
        linkFitSeconds = try value(.linkFitSeconds, linkFitSeconds, 0...86_400)
        linkWindowSeconds = try value(.linkWindowSeconds, linkWindowSeconds, 60...604_800)
        linkWallLosses = try container.decodeIfPresent(Bool.self, forKey: .linkWallLosses) ?? linkWallLosses
        linkAntennas = try container.decodeIfPresent(Bool.self, forKey: .linkAntennas) ?? linkAntennas
    }
}
