import BeaconModel

/// Collects sightings into batches: a batch closes at `maxSightings` or `maxDelay` seconds after its first
/// sighting. A pure state machine; time is passed in.
public struct SightingBatcher: Sendable {
    public let maxSightings: Int
    public let maxDelay: Double
    private var open: [Sighting] = []
    private var openedAt: Double?

    public init(maxSightings: Int, maxDelay: Double) {
        self.maxSightings = maxSightings
        self.maxDelay = maxDelay
    }

    /// Adds a sighting; returns a closed batch when this one filled it.
    public mutating func add(_ sighting: Sighting, now: Double) -> [Sighting]? {
        if open.isEmpty { openedAt = now }
        open.append(sighting)
        return open.count >= maxSightings ? close() : nil
    }

    /// The open batch when it is due at `now`.
    public mutating func due(now: Double) -> [Sighting]? {
        guard let openedAt, now - openedAt >= maxDelay else { return nil }
        return close()
    }

    /// Closes whatever is open (at shutdown).
    public mutating func flush() -> [Sighting]? { open.isEmpty ? nil : close() }

    /// When the open batch will be due, if any.
    public var deadline: Double? { openedAt.map { $0 + maxDelay } }

    private mutating func close() -> [Sighting] {
        defer {
            open.removeAll(keepingCapacity: true)
            openedAt = nil
        }
        return open
    }
}
