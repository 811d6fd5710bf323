import BeaconModel

/// The `position` method's engine-wide state: one value, so the engine stays a handful of fields.
struct PositionState: Sendable {
    /// One map per candidate exponent (one without `learnsExponent`), and the one in use.
    var maps: [PositionMap] = []
    var choice = 0
    /// Each candidate map's evidence from the probe tags, and how many tags probe.
    var evidence: [Double] = []
    var probeTracks = 0
    var scratch = PositionScratch(cells: 0, gateways: 0, states: 0)
    /// The noise model's mean residual: what fades and bodies take off a reading on average.
    var noiseBias: Float = 0
    /// The observation models weighed against each other (`ObservationModel.candidates`), their tables, their
    /// evidence from the noise-probing tags' predictions, the one in use, how many tags probe, and when the evidence
    /// last faded (sighting time).
    var noiseModels: [ObservationModel] = []
    var noises: [ReadingNoise] = []
    var noiseEvidence: [Double] = []
    var noiseChoice = 0
    var noiseProbeTracks = 0
    var noiseEvidenceAt = -Double.infinity
    /// Per gateway, how many readings it heard at each whole dBm from `floorLowest` up (`floorBins` of them), and when
    /// the sensitivities were last taken from them (sighting time).
    var floorCounts: [Int32] = []
    var floorsAt = -Double.infinity
    static let floorLowest = -130
    static let floorBins = 111
    /// Residual sums and counts per (gateway, tile) of confident tags, and when the map last took them.
    var mapSums: [Float] = []
    var mapWeights: [Float] = []
    var mapRefreshedAt = -Double.infinity

    init() {}

    /// The maps of every candidate exponent for `venue`, and their buffers.
    init(
        venue: Venue, model: VenueModel, settings: InferenceSettings, calibration: Calibration? = nil,
        learned: LearnedRadio? = nil
    ) {
        let (maps, choice) = ZoneEngine.positionMaps(
            venue: venue, settings: settings, calibration: calibration, learned: learned)
        self.maps = maps
        self.choice = choice
        evidence = [Double](repeating: 0, count: maps.count)
        mapSums = [Float](repeating: 0, count: maps[0].correction.count)
        mapWeights = mapSums
        scratch = PositionScratch(
            cells: maps[0].grid.count, gateways: model.gateways.count, states: model.zones.count + 1)
        noiseBias = maps[0].noise.meanOffset
        if settings.learnsSensitivity {
            floorCounts = [Int32](repeating: 0, count: model.gateways.count * Self.floorBins)
        }
        if settings.learnsNoise {
            noiseModels = ObservationModel.candidates(settings: settings)
            noises = noiseModels.map(\.tables)
            noiseEvidence = [Double](repeating: 0, count: noiseModels.count)
        }
    }
}
