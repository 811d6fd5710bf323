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

    init(cells: Int, gateways: Int, states: Int) {
        dense = [Float](repeating: 0, count: cells)
        slot = [Int32](repeating: -1, count: cells)
        heardCount = [Float](repeating: 0, count: gateways)
        masses = [Double](repeating: 0, count: states)
    }
}
