import BeaconModel

/// Everything the engine holds for one tracked tag. Owned by `ZoneEngine`; never shared.
struct TagTrack: Sendable {
    let tag: TagID
    let beacon: String
    let region: Int?
    /// One filter per gateway that has heard the tag (a handful; searched linearly).
    var readings: [RSSIFilter] = []
    /// Posterior over the states (zones, then "no zone"); empty for the strongest-gateway method.
    var posterior: [Float]
    /// The reported state: a zone index, or the model's `noZone`.
    var state: Int
    /// When the tag entered `state`: its zone, or (outside every zone) the move out or its first sighting;
    /// -infinity for a tag never heard, whose state began when the engine started tracking (`ZoneEngine.startedAt`).
    var since = -Double.infinity
    var confidence: Double = 0
    var everHeard = false
    var lastHeard = -Double.infinity
    /// Advertised measured power at 1 m, when the tag sends one.
    var txPower: Double?
    /// Estimated advertising interval, seconds (0 until two advertisements were seen).
    var interval = 0.0
    var lastAdvertisement = -Double.infinity
    var lastStep = -Double.infinity
    var dirty = false
    /// The state leading (other than the reported one) and since when.
    var candidate = -1
    var candidateSince = 0.0
    /// Last time the reported zone had at least even odds.
    var lastConfident = -Double.infinity
    /// Last time the zones with an entrance held at least `ZoneEngine.entranceShare` of the belief together (the
    /// `position` method's belief, the `hmm` method's posterior).
    var lastAtEntrance = -Double.infinity
    var stayedReported = false
    /// No switch before this (a suspect move is being held back, or a clone is heard).
    var holdUntil = -Double.infinity
    var nextSuspectReport = -Double.infinity
    /// In its zone as far as anyone knows, but last heard only by gateways that are now offline.
    var unknown = false
    /// Absence is counted from here when later than `lastHeard`: a gateway came back, or the state was restored.
    var resumeAt = -Double.infinity
    /// When the state was last taken from a previous hub's (`ZoneEngine.restore`): the lead rule waits `leadSeconds`
    /// of readings after it.
    var restoredAt = -Double.infinity
    /// Changed or heard since the last `takeTouched()`.
    var touched = false
    /// `position`: the belief over the floor grid, the readings since the last update, and the advertising interval
    /// as one gateway sees it (a low quantile of its gaps: clock offsets between gateways do not shorten it).
    var belief = PositionBelief()
    /// A probe tag's beliefs, one per candidate map (empty for other tags).
    var probes: [PositionBelief] = []
    /// Whether this tag's predictions weigh the observation models against each other (`ZoneEngine.learnNoise`).
    var probesNoise = false
    var noiseUpdates = 0
    var pending: [PendingReading] = []
    var linkInterval = 0.0

    init(tag: TagID, beacon: String, region: Int?, stateCount: Int, noZone: Int, posterior: Bool) {
        self.tag = tag
        self.beacon = beacon
        self.region = region
        self.posterior = posterior ? [Float](repeating: 1 / Float(stateCount), count: stateCount) : []
        state = noZone
    }
}
