import BeaconModel

#if canImport(Glibc)
    import Glibc
#endif

/// What the engine knows of the venue, as flat tables: zones (state `noZone` is "in no zone"), gateways, which
/// states a tag may move between, how far apart zones are on foot, and for every (state, gateway) the RSSI a tag of
/// the reference power would show — from geometry, or from a calibration where one exists.
public struct VenueModel: Sendable {
    public let zones: [ZoneID]
    public let gateways: [GatewayID]
    public let gatewayIndex: [GatewayID: Int]
    /// The zone each gateway serves, if any.
    public let gatewayZone: [Int?]
    /// Index of the "no zone" state: `zones.count`.
    public var noZone: Int { zones.count }
    /// Per state, the states one door away (the HMM's transitions; "no zone" borders zones with an entrance).
    let neighbours: [[Int]]
    /// Shortest walk between two zones through doors, metres (0 when they share a door).
    let walkDistance: [[Double]]
    /// Row-major (state × gateway) tables.
    let mean: [Float]
    let sigma: [Float]
    /// log P(a gateway hears nothing of a tag for a few seconds | the tag is in the state).
    let missPenalty: [Float]
    /// Per state, the gateways whose silence says something (missPenalty below −0.05).
    let audible: [[Int32]]
    /// Calibration's gateway offsets, dB, or where it has none what was learned (`LearnedRadio.gains`); else 0.
    public let gatewayOffset: [Double]
    public let referencePower: Double
    public let calibrated: Bool
    /// The gateways' own beacons the venue file names (`beacon:`), by gateway.
    public let gatewayBeacons: [GatewayID: String]

    /// `learned`: gains learned from the gateways' links, for the gateways the calibration gives no offset.
    public init(
        venue: Venue, settings: InferenceSettings, calibration: Calibration? = nil, learned: LearnedRadio? = nil
    ) {
        zones = venue.zones.map(\.id)
        gateways = venue.gateways.map(\.id)
        gatewayIndex = Dictionary(uniqueKeysWithValues: gateways.enumerated().map { ($1, $0) })
        let zoneIndex = Dictionary(uniqueKeysWithValues: zones.enumerated().map { ($1, $0) })
        gatewayZone = venue.gateways.map { $0.zone.flatMap { zoneIndex[$0] } }
        let reference = calibration?.referencePower ?? settings.referencePower
        let offsets = venue.gateways.map {
            calibration?.gatewayOffsets[$0.id.rawValue] ?? learned?.gains[$0.id.rawValue] ?? 0
        }
        referencePower = reference
        // Gateways placed and nothing measured (a placement with no calibration before it) is no calibration.
        calibrated = calibration.map { !$0.isPlacementsOnly } ?? false
        gatewayOffset = offsets
        gatewayBeacons = Dictionary(
            venue.gateways.compactMap { gateway in gateway.beacon.map { (gateway.id, $0) } },
            uniquingKeysWith: { first, _ in first })

        let noZone = zones.count
        var neighbours = [[Int]](repeating: [], count: zones.count + 1)
        for door in venue.doors {
            let sides = door.between.map { zoneIndex[ZoneID(unchecked: $0)] ?? noZone }
            neighbours[sides[0]].append(sides[1])
            neighbours[sides[1]].append(sides[0])
        }
        self.neighbours = neighbours.map { Array(Set($0)).sorted() }
        walkDistance = Self.walkDistances(venue: venue, zoneIndex: zoneIndex)

        // Expected levels: the mean over points spread across each zone (and just outside each entrance for "no
        // zone"), plus that spread itself in sigma, since a tag may stand anywhere in its zone.
        let samples = venue.zones.map { Self.samplePoints($0.shape) } + [Self.outsidePoints(venue, zoneIndex)]
        let boundaries = venue.zones.map(\.shape)
        let count = zones.count + 1
        var mean = [Float](repeating: Float(settings.sensitivity - 20), count: count * gateways.count)
        var sigma = [Float](repeating: Float(settings.modelSigmaDB), count: count * gateways.count)
        var missPenalty = [Float](repeating: 0, count: count * gateways.count)
        for state in 0..<count {
            for (g, gateway) in venue.gateways.enumerated() {
                let cell = state * gateways.count + g
                let points = samples[state]
                guard !points.isEmpty else { continue }
                let levels = points.map { point in
                    Self.modelLevel(
                        at: point, gateway: gateway, settings: settings, boundaries: boundaries,
                        reference: reference) + offsets[g]
                }
                let average = levels.reduce(0, +) / Double(levels.count)
                let spread = (levels.map { ($0 - average) * ($0 - average) }.reduce(0, +) / Double(levels.count))
                    .squareRoot()
                var level = average
                let sd = (spread * spread + settings.modelSigmaDB * settings.modelSigmaDB).squareRoot()
                var heardShare: Double? = nil
                if state < zones.count,
                    let profile = calibration?.zones[zones[state].rawValue]?[gateway.id.rawValue]
                {
                    // A profile was taken at one spot: keep the zone's spatial spread, replace the model error.
                    heardShare = profile.heard
                    if profile.heard >= 0.2 && profile.samples >= 3 {
                        // One spot is not the whole zone: blend it with the (offset-corrected) model of the zone.
                        let weight = settings.calibrationWeight
                        level = weight * profile.mean + (1 - weight) * level
                    } else {
                        level = min(level, settings.sensitivity - 3)
                    }
                } else if state < zones.count, calibration?.zones[zones[state].rawValue] != nil {
                    // The zone was calibrated and this gateway never heard the tag there.
                    heardShare = 0
                    level = min(level, settings.sensitivity - 3)
                }
                mean[cell] = Float(level)
                sigma[cell] = Float(sd)
                missPenalty[cell] = Float(
                    Self.missPenalty(
                        level: level, sd: sd, heardShare: heardShare, sensitivity: settings.sensitivity))
            }
        }
        self.mean = mean
        self.sigma = sigma
        self.missPenalty = missPenalty
        audible = (0..<count).map { state in
            (0..<venue.gateways.count).filter { missPenalty[state * venue.gateways.count + $0] < -0.05 }.map {
                Int32($0)
            }
        }
    }

    /// The expected level at one gateway from a point: log-distance path loss in 3D, and a loss per zone boundary
    /// crossed (the hub does not know the walls; rooms usually have them).
    static func modelLevel(
        at point: Point, gateway: Venue.Gateway, settings: InferenceSettings, boundaries: [Polygon],
        reference: Double
    ) -> Double {
        let dx = point.x - gateway.position.x
        let dy = point.y - gateway.position.y
        let dz = gateway.height - 1.2
        let distance = max(0.5, (dx * dx + dy * dy + dz * dz).squareRoot())
        var level = reference - 10 * settings.pathLossExponent * log10(distance)
        if settings.boundaryLossDB > 0 {
            let path = Segment(point, gateway.position)
            var crossings = 0
            for polygon in boundaries {
                var j = polygon.vertices.count - 1
                for i in polygon.vertices.indices {
                    if path.intersects(Segment(polygon.vertices[j], polygon.vertices[i])) { crossings += 1 }
                    j = i
                }
            }
            // Two rooms sharing a wall both count it.
            level -= settings.boundaryLossDB * Double((crossings + 1) / 2)
        }
        return level
    }

    /// log P(silence for ~3 s): each second heard with probability `heardShare` (calibrated) or as the level and its
    /// spread against the sensitivity suggest; floored so that one silent gateway cannot veto a zone alone.
    static func missPenalty(level: Double, sd: Double, heardShare: Double?, sensitivity: Double) -> Double {
        let perSecond = heardShare ?? (0.85 * normalCDF((level - sensitivity) / max(sd, 1)))
        return max(3 * log(max(1 - perSecond, 1e-6)), -4.5)
    }

    static func normalCDF(_ x: Double) -> Double { 0.5 * erfc(-x / 2.0.squareRoot()) }

    /// A grid over the polygon, about 100 points (the centroid for slivers).
    static func samplePoints(_ shape: Polygon) -> [Point] {
        let xs = shape.vertices.map(\.x)
        let ys = shape.vertices.map(\.y)
        guard let minX = xs.min(), let maxX = xs.max(), let minY = ys.min(), let maxY = ys.max() else { return [] }
        let step = max(0.5, (abs(shape.area) / 100).squareRoot())
        var points: [Point] = []
        var y = minY + step / 2
        while y < maxY {
            var x = minX + step / 2
            while x < maxX {
                let point = Point(x, y)
                if shape.contains(point) { points.append(point) }
                x += step
            }
            y += step
        }
        return points.isEmpty ? [shape.centroid] : points
    }

    /// Where a tag in no zone most likely is: 2, 4 and 6 m beyond each entrance. None without entrances.
    static func outsidePoints(_ venue: Venue, _ zoneIndex: [ZoneID: Int]) -> [Point] {
        var points: [Point] = []
        for door in venue.doors where door.between.contains("outside") {
            guard let inside = door.between.first(where: { $0 != "outside" }),
                let zone = zoneIndex[ZoneID(unchecked: inside)]
            else { continue }
            let centre = venue.zones[zone].shape.centroid
            let dx = door.at.x - centre.x
            let dy = door.at.y - centre.y
            let length = max((dx * dx + dy * dy).squareRoot(), 1e-9)
            for metres in [2.0, 4.0, 6.0] {
                points.append(Point(door.at.x + dx / length * metres, door.at.y + dy / length * metres))
            }
        }
        return points
    }

    /// Shortest walks between zones through doors (Floyd–Warshall over the doors), metres.
    static func walkDistances(venue: Venue, zoneIndex: [ZoneID: Int]) -> [[Double]] {
        let doors = venue.doors
        let n = doors.count
        var distance = [[Double]](repeating: [Double](repeating: .infinity, count: n), count: n)
        for i in 0..<n {
            distance[i][i] = 0
            for j in 0..<n where i != j && !Set(doors[i].between).isDisjoint(with: doors[j].between) {
                distance[i][j] = doors[i].at.distance(to: doors[j].at)
            }
        }
        for k in 0..<n {
            for i in 0..<n where distance[i][k] < .infinity {
                for j in 0..<n where distance[i][k] + distance[k][j] < distance[i][j] {
                    distance[i][j] = distance[i][k] + distance[k][j]
                }
            }
        }
        let zoneCount = venue.zones.count
        var result = [[Double]](repeating: [Double](repeating: .infinity, count: zoneCount), count: zoneCount)
        for a in 0..<zoneCount {
            result[a][a] = 0
            let doorsOfA = doors.indices.filter { doors[$0].between.contains(venue.zones[a].id.rawValue) }
            for b in 0..<zoneCount where b != a {
                let doorsOfB = doors.indices.filter { doors[$0].between.contains(venue.zones[b].id.rawValue) }
                for i in doorsOfA {
                    for j in doorsOfB { result[a][b] = min(result[a][b], distance[i][j]) }
                }
            }
        }
        return result
    }

    /// The level a tag of the reference power is expected to show `gateway` in `state`, dBm.
    public func expectedLevel(state: Int, gateway: Int) -> Double { Double(mean[state * gateways.count + gateway]) }

    /// True when a door joins the two states.
    public func adjacent(_ a: Int, _ b: Int) -> Bool { neighbours[a].contains(b) }
}
