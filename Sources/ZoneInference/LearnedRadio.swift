import BeaconModel

/// What the hub learned of the radio apart from the tags (from the gateways' links, `LinkCalibration`): per
/// gateway how much louder it hears than the geometric model says, each wall's loss, and the path-loss exponent. The
/// engine folds it into the levels it expects (`ZoneEngine.apply(_:)`), live.
public struct LearnedRadio: Sendable, Hashable, Codable {
    /// dB, by gateway: what `Calibration.gatewayOffsets` means, learned instead of walked. A calibration file's own
    /// offset for a gateway wins over it (a walk measures the tags' own levels).
    public var gains: [String: Double]
    /// dB, by the wall's index in the venue file's `walls`: replaces the material's default loss in the `position`
    /// map.
    public var wallLosses: [Int: Double]
    /// The exponent the links favour: where the `position` method starts before its probe tags have said anything.
    public var pathLossExponent: Double?
    /// dB, by gateway: the front-to-back ratio of a gateway whose venue entry says which way its antenna faces. The
    /// `position` map shades its levels by it (a cardioid: −F·(1 − cos θ)/2 off the facing); `gains` are then the
    /// gain straight ahead.
    public var antennas: [String: Double]

    public init(
        gains: [String: Double] = [:], wallLosses: [Int: Double] = [:], pathLossExponent: Double? = nil,
        antennas: [String: Double] = [:]
    ) {
        self.gains = gains
        self.wallLosses = wallLosses
        self.pathLossExponent = pathLossExponent
        self.antennas = antennas
    }

    enum CodingKeys: String, CodingKey { case gains, wallLosses, pathLossExponent, antennas }

    /// `antennas` may be missing (what was stored before the links fitted antennas).
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        gains = try container.decode([String: Double].self, forKey: .gains)
        wallLosses = try container.decode([Int: Double].self, forKey: .wallLosses)
        pathLossExponent = try container.decodeIfPresent(Double.self, forKey: .pathLossExponent)
        antennas = try container.decodeIfPresent([String: Double].self, forKey: .antennas) ?? [:]
    }

    /// What a link fit found, keeping only what it knows to within `maximumSigma` dB (a gateway few others hear stays
    /// at the geometric model); the exponent within 0.3. The walls' losses only with `walls`: the hub leaves them out.
    /// Chosen on the training venues (docs/accuracy.md, "Self-calibration from the gateways' links"): the walls'
    /// losses on top of the gains took back what the gains had won, since a wall that few links cross takes their
    /// shadowing for its loss and the map carries that error to every cell behind it.
    /// With `antennas` (hub.yaml `linkAntennas`) a gateway's fitted pattern goes with its applied gain, which is then
    /// the gain straight ahead.
    public init(
        _ result: LinkCalibration.Result, maximumSigma: Double = 3, walls: Bool = false,
        antennas useAntennas: Bool = true
    ) {
        let gains = Dictionary(
            uniqueKeysWithValues: result.receiveGains.filter { $0.value.sigma <= maximumSigma }.map {
                ($0.key.rawValue, $0.value.value)
            })
        self.gains = gains
        let patterns = result.antennaFrontToBack.filter { useAntennas && gains[$0.key.rawValue] != nil }
        antennas = Dictionary(uniqueKeysWithValues: patterns.map { ($0.key.rawValue, max(0, $0.value.value)) })
        wallLosses =
            walls ? result.wallLosses.filter { $0.value.sigma <= maximumSigma }.mapValues { max(0, $0.value) } : [:]
        pathLossExponent = result.pathLossExponent.sigma <= 0.3 ? result.pathLossExponent.value : nil
    }

    public var isEmpty: Bool { gains.isEmpty && wallLosses.isEmpty && pathLossExponent == nil && antennas.isEmpty }
}
