/// A reading waiting for the tag's next update.
struct PendingReading: Sendable {
    var gateway: Int32
    var rssi: Int16
}

/// Buffers every tag's update reuses: a dense grid kept at zero between uses, and lists.
struct PositionScratch: Sendable {
    var dense: [Float]
    var list: [Int32] = []
    var likelihood: [Float] = []
    var sorted: [Float] = []
    /// The cells one update reseeds, when thinned.
    var reseed: [Int32] = []
    var heardCount: [Float]
    var masses: [Double]
    /// Per cell, its index in the belief being mixed, or −1.
    var slot: [Int32]
    /// The gateways that heard the update being weighed, each once.
    var heardGateways: [Int32] = []
    /// The readings of `heardGateways[i]` (less the tag's power, in the noise tables' steps from their lower end) are
    /// `groupSteps[groupStart[i] ..< groupStart[i + 1]]`.
    var groupStart: [Int32] = []
    var groupSteps: [Int32] = []
    /// `PositionMap.missedSum` tables by map exponent and tag power (in `missedStepDB` steps), made when first needed.
    var missedSums: [MissedKey: [Float]] = [:]
    /// More tables than this are dropped all at once (tags of many powers and offsets: each table is 4 bytes a cell).
    static let missedSumLimit = 192

    struct MissedKey: Hashable, Sendable {
        var exponent: Double
        var noise: Int
        var step: Int
    }

    init(cells: Int, gateways: Int, states: Int) {
        dense = [Float](repeating: 0, count: cells)
        slot = [Int32](repeating: -1, count: cells)
        heardCount = [Float](repeating: 0, count: gateways)
        masses = [Double](repeating: 0, count: states)
    }
}
