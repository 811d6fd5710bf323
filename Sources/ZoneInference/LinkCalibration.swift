import BeaconModel

#if canImport(Glibc)
    import Glibc
#endif

/// What gateway-to-gateway links tell about the radio: every gateway advertises its own beacon from a known
/// place with a known nominal power, so each directed link (gateway i heard by gateway j) is a measurement
///
///     mean RSSI − measuredPower_i = T_i + G_j − 10·n·log10(d_ij) − Σ_w a_w·[link crosses wall w] + ε
///
/// with T_i how far i's transmitter is off its nominal power, G_j how much louder j hears than the others (what the
/// engine subtracts: `Calibration.gatewayOffsets`), n the path-loss exponent and a_w the loss of each straight wall w
/// (pieces drawn on one line are one wall: `straightWalls`); and, for a gateway whose venue entry says which way its
/// antenna faces, −F·(1 − cos θ)/2 at both ends of its links (F its front-to-back ratio, θ off its facing), so that its
/// G is the gain straight ahead. Only differences of the G are measurable (T_i + c, G_j − c fit alike), so they are
/// reported with Σ G = 0. Solved as a weighted least squares with weak priors (the nominal exponent, each wall's
/// material default, offsets near 0, ratios near 10 dB), whose posterior gives each estimate's uncertainty. ε is the
/// link's own shadowing and what the model misses of the antennas: a few dB, which is why every gain is estimated from
/// all the links into (and out of) its gateway.
public enum LinkCalibration {
    /// One directed link over some period: gateway `tx`'s beacon heard by gateway `rx`.
    public struct Link: Sendable, Hashable {
        public var tx: GatewayID
        public var rx: GatewayID
        /// Mean RSSI of the receptions, dBm.
        public var meanRSSI: Double
        /// Receptions, and how many advertisements were sent meanwhile (for the share heard).
        public var received: Int
        public var sent: Int
        /// The power at 1 m the transmitter's frame carries, dBm.
        public var measuredPower: Double
        /// The standard deviation of the receptions' RSSI, dB, when known: with the share heard it undoes the
        /// receiver's sensitivity cutting off a weak link's quiet packets (`uncensoredMean`).
        public var rssiSigma: Double?

        public init(
            tx: GatewayID, rx: GatewayID, meanRSSI: Double, received: Int, sent: Int, measuredPower: Double,
            rssiSigma: Double? = nil
        ) {
            self.tx = tx
            self.rx = rx
            self.meanRSSI = meanRSSI
            self.received = received
            self.sent = sent
            self.measuredPower = measuredPower
            self.rssiSigma = rssiSigma
        }

        /// The mean the link would show without the receiver's sensitivity. A link heard only in part hears its loud
        /// packets: taking the RSSI as normal and cut off below, the share heard p gives the cut at α = Φ⁻¹(1 − p)
        /// standard deviations, and the mean and spread of what was heard give the whole distribution's
        /// (μ = m − σλ, σ = s / √(1 + αλ − λ²), λ = φ(α) / (1 − Φ(α))). Without a spread, the heard mean.
        /// `delivered`: the share of advertisements a receiver hears well above its sensitivity (what it loses
        /// whatever the level, collisions and scan gaps, is not a cut: `LinkCalibration.deliveredShare`); the share
        /// heard is taken against it.
        public func uncensoredMean(delivered: Double) -> Double {
            let share = min(shareHeard / min(max(delivered, 0.05), 1), 1)
            guard let rssiSigma, share < 0.98, share > 0.01 else { return meanRSSI }
            let alpha = inverseNormal(1 - share)
            let tail = 1 - normalCDF(alpha)
            let lambda = exp(-alpha * alpha / 2) / (2 * Double.pi).squareRoot() / tail
            let shrink = 1 + alpha * lambda - lambda * lambda
            guard shrink > 0.05 else { return meanRSSI }
            let sigma = rssiSigma / shrink.squareRoot()
            return meanRSSI - sigma * lambda
        }

        /// `uncensoredMean(delivered:)` for a receiver that hears every advertisement above its sensitivity.
        public var uncensoredMean: Double { uncensoredMean(delivered: 1) }

        var shareHeard: Double { Double(received) / Double(max(sent, 1)) }
    }

    /// The share of advertisements the receivers hear of a link well above their sensitivity: a high quantile
    /// (`deliveredQuantile`) of the links' shares heard, between `deliveredRange`'s bounds. Most venues have links
    /// between neighbours far above sensitivity, and those lose only what every link loses (collisions, scan gaps:
    /// 10–20 %); taken for the sensitivity's cut, a loss of 15 % lowers a strong link of 4 dB spread by 1.4 dB.
    public static func deliveredShare(_ links: [Link]) -> Double {
        let shares = links.map(\.shareHeard).sorted()
        guard !shares.isEmpty else { return 1 }
        let quantile = shares[min(Int(Double(shares.count) * deliveredQuantile), shares.count - 1)]
        return min(max(quantile, deliveredRange.lowerBound), deliveredRange.upperBound)
    }

    static let deliveredQuantile = 0.9
    static let deliveredRange = 0.5...1.0

    /// Each wall's straight wall: walls of one material and loss that lie on one line and touch, overlap or leave a
    /// door's gap (`straightWallGap`) between them are one partition drawn in pieces, and the link fit gives them one
    /// loss: a loss per piece lets the walls take up what the exponent should. Returns per wall the index of its
    /// straight wall's first piece.
    public static func straightWalls(_ walls: [Venue.Wall]) -> [Int] {
        var parent = Array(walls.indices)
        func root(_ i: Int) -> Int {
            var i = i
            while parent[i] != i {
                parent[i] = parent[parent[i]]
                i = parent[i]
            }
            return i
        }
        for i in walls.indices {
            for j in walls.indices where j > i && sameStraightWall(walls[i], walls[j]) {
                let (a, b) = (root(i), root(j))
                parent[max(a, b)] = min(a, b)
            }
        }
        return walls.indices.map(root)
    }

    /// How far apart (metres) two pieces of one line may be and still be one wall, and how far off the line (metres)
    /// and off its direction (sine of the angle) a piece may be.
    static let straightWallGap = 2.0
    static let straightWallOffset = 0.05
    static let straightWallAngle = 0.035

    static func sameStraightWall(_ first: Venue.Wall, _ second: Venue.Wall) -> Bool {
        guard first.material == second.material, abs(first.attenuation - second.attenuation) < 1e-9 else {
            return false
        }
        let dx = first.to.x - first.from.x
        let dy = first.to.y - first.from.y
        let length = (dx * dx + dy * dy).squareRoot()
        let ex = second.to.x - second.from.x
        let ey = second.to.y - second.from.y
        let otherLength = (ex * ex + ey * ey).squareRoot()
        guard length > 1e-9, otherLength > 1e-9 else { return false }
        let (ux, uy) = (dx / length, dy / length)
        guard abs(ux * ey - uy * ex) / otherLength <= straightWallAngle else { return false }
        // Both ends of the second piece on the first's line, and their span along it near the first's [0, length].
        var along: [Double] = []
        for point in [second.from, second.to] {
            let px = point.x - first.from.x
            let py = point.y - first.from.y
            guard abs(ux * py - uy * px) <= straightWallOffset else { return false }
            along.append(ux * px + uy * py)
        }
        let low = along.min()!
        let high = along.max()!
        return low <= length + straightWallGap && high >= -straightWallGap
    }

    /// An estimate and its standard deviation.
    public struct Estimate: Sendable, Hashable {
        public var value: Double
        public var sigma: Double
    }

    public struct Result: Sendable {
        /// G: how much louder each gateway hears, dB, summing to 0 (`Calibration.gatewayOffsets`).
        public var receiveGains: [GatewayID: Estimate]
        /// T: how far each gateway's transmitter is off the power in its frame, dB (with the G's gauge).
        public var transmitOffsets: [GatewayID: Estimate]
        public var pathLossExponent: Estimate
        /// Each crossed straight wall's loss (`straightWalls`), dB, under the index of each of its pieces in the
        /// venue's walls (walls of a straight wall no link crosses are left out).
        public var wallLosses: [Int: Estimate]
        /// The front-to-back ratio of each gateway whose venue entry gives its antenna's facing, dB.
        public var antennaFrontToBack: [GatewayID: Estimate] = [:]
        /// The links used, and the RMS of what the model leaves of them, dB.
        public var linksUsed: Int
        public var residualSigma: Double
    }

    /// The model's settings: priors and which links count.
    public struct Settings: Sendable, Hashable {
        /// A link counts when at least this share of the advertisements was heard: a link near the receiver's
        /// sensitivity hears only its loud packets, and `uncensoredMean` corrects its mean for that. Chosen on the
        /// training seeds: each link more is one more sample of the receiver's shadowing. Over training seeds 1–100
        /// (docs/inference.md) 0.2 with 20 packets gave a median gain error of 1.68 dB, 0.01 with 5 packets 1.47 dB…
        public var minimumShareHeard = 0.01
        /// …and at least this many.
        public var minimumReceptions = 5
        /// What one link's mean misses by, dB (static shadowing, antenna patterns): its weight is 1/σ².
        public var linkSigma = 4.0
        /// Priors: the exponent around the engine's nominal one, each wall around its material's default loss, the
        /// offsets around 0.
        public var exponentPriorSigma = 1.0
        public var wallPriorSigma = 5.0
        public var offsetPriorSigma = 8.0
        /// A gateway whose venue entry says which way its antenna faces (`antenna.facing`) gets its front-to-back
        /// ratio fitted, around this prior (the ratio the venue entry gives is not read: an installer knows which way
        /// a Pi on a wall faces, not how much its board and the wall shade it). Its gain is then the gain straight
        /// ahead, as the venue file defines it; without the term the fit took the level towards the other gateways.
        public var antennaPriorDB = 10.0
        public var antennaPriorSigma = 10.0
        public var fitsAntennas = true

        public init() {}
    }

    /// Fits the model to `links` in `venue`; nil when no link counts. `nominalExponent`: the exponent the engine
    /// assumes (the prior's centre).
    public static func solve(
        venue: Venue, links: [Link], nominalExponent: Double, settings: Settings = Settings()
    ) -> Result? {
        let gateways = venue.gateways.sorted { $0.id.rawValue < $1.id.rawValue }
        let index = Dictionary(uniqueKeysWithValues: gateways.enumerated().map { ($0.element.id, $0.offset) })
        let used = links.filter { link in
            link.tx != link.rx && index[link.tx] != nil && index[link.rx] != nil
                && link.received >= settings.minimumReceptions
                && Double(link.received) >= settings.minimumShareHeard * Double(max(link.sent, 1))
        }
        guard !used.isEmpty else { return nil }
        // The straight walls each link crosses (each once: where two pieces meet, a path through the joint touches
        // both); only crossed walls are unknowns.
        let straight = straightWalls(venue.walls)
        let crossings = used.map { link -> [Int] in
            let path = Segment(gateways[index[link.tx]!].position, gateways[index[link.rx]!].position)
            return Array(
                Set(venue.walls.indices.filter { path.intersects(venue.walls[$0].segment) }.map { straight[$0] })
            )
            .sorted()
        }
        let walls = Array(Set(crossings.joined())).sorted()
        let delivered = deliveredShare(used)
        let wallColumn = Dictionary(uniqueKeysWithValues: walls.enumerated().map { ($0.element, $0.offset) })
        let count = gateways.count
        let exponentColumn = 2 * count
        let directional = settings.fitsAntennas ? gateways.indices.filter { gateways[$0].antenna != nil } : []
        let antennaColumn = Dictionary(
            uniqueKeysWithValues: directional.enumerated().map { ($0.element, 2 * count + 1 + walls.count + $0.offset) }
        )
        let parameters = 2 * count + 1 + walls.count + directional.count

        var normal = SymmetricSystem(size: parameters)
        let linkWeight = 1 / (settings.linkSigma * settings.linkSigma)
        var rows: [(columns: [(Int, Double)], value: Double)] = []
        for (link, crossed) in zip(used, crossings) {
            let tx = gateways[index[link.tx]!]
            let rx = gateways[index[link.rx]!]
            let dx = tx.position.x - rx.position.x
            let dy = tx.position.y - rx.position.y
            let dz = tx.height - rx.height
            let distance = max(0.1, (dx * dx + dy * dy + dz * dz).squareRoot())
            var columns: [(Int, Double)] = [(count + index[link.tx]!, 1), (index[link.rx]!, 1)]
            columns.append((exponentColumn, -10 * log10(distance)))
            for wall in crossed { columns.append((2 * count + 1 + wallColumn[wall]!, -1)) }
            // A cardioid: −F·(1 − cos θ)/2, θ between where the antenna faces and the line to the other gateway.
            for (end, towards) in [(index[link.rx]!, (dx, dy)), (index[link.tx]!, (-dx, -dy))] {
                guard let column = antennaColumn[end], let antenna = gateways[end].antenna else { continue }
                let cosine = antenna.cosine(towardsX: towards.0, y: towards.1, distance: distance)
                columns.append((column, -(1 - cosine) / 2))
            }
            let row = (columns: columns, value: link.uncensoredMean(delivered: delivered) - link.measuredPower)
            rows.append(row)
            normal.add(row.columns, value: row.value, weight: linkWeight)
        }
        // Priors, as observations of single parameters; and the gauge, Σ G = 0, as a stiff one.
        let offsetWeight = 1 / (settings.offsetPriorSigma * settings.offsetPriorSigma)
        for column in 0..<(2 * count) { normal.add([(column, 1)], value: 0, weight: offsetWeight) }
        normal.add([(exponentColumn, 1)], value: nominalExponent, weight: 1 / pow(settings.exponentPriorSigma, 2))
        for (column, wall) in walls.enumerated() {
            normal.add(
                [(2 * count + 1 + column, 1)], value: venue.walls[wall].material.defaultAttenuation,
                weight: 1 / pow(settings.wallPriorSigma, 2))
        }
        for column in antennaColumn.values {
            normal.add([(column, 1)], value: settings.antennaPriorDB, weight: 1 / pow(settings.antennaPriorSigma, 2))
        }
        normal.add((0..<count).map { ($0, 1) }, value: 0, weight: 1e6)
        guard let (solution, inverse) = normal.solve() else { return nil }

        var squares = 0.0
        for row in rows {
            let fitted = row.columns.reduce(0) { $0 + $1.1 * solution[$1.0] }
            squares += (row.value - fitted) * (row.value - fitted)
        }
        let residual = (squares / Double(rows.count)).squareRoot()
        // The uncertainties assume `linkSigma`; when the links scatter more, they are scaled up.
        let scale = max(1, residual / settings.linkSigma)
        func estimate(_ column: Int) -> Estimate {
            Estimate(value: solution[column], sigma: max(inverse[column], 0).squareRoot() * scale)
        }
        var gains: [GatewayID: Estimate] = [:]
        var offsets: [GatewayID: Estimate] = [:]
        for (position, gateway) in gateways.enumerated() {
            gains[gateway.id] = estimate(position)
            offsets[gateway.id] = estimate(count + position)
        }
        var wallLosses: [Int: Estimate] = [:]
        for (column, wall) in walls.enumerated() {
            for piece in venue.walls.indices where straight[piece] == wall {
                wallLosses[piece] = estimate(2 * count + 1 + column)
            }
        }
        var antennas: [GatewayID: Estimate] = [:]
        for (position, column) in antennaColumn { antennas[gateways[position].id] = estimate(column) }
        return Result(
            receiveGains: gains, transmitOffsets: offsets, pathLossExponent: estimate(exponentColumn),
            wallLosses: wallLosses, antennaFrontToBack: antennas, linksUsed: rows.count, residualSigma: residual)
    }
}

func normalCDF(_ x: Double) -> Double { 0.5 * erfc(-x / 2.0.squareRoot()) }

/// Φ⁻¹(p) by bisection: called once per link.
func inverseNormal(_ p: Double) -> Double {
    var low = -10.0
    var high = 10.0
    for _ in 0..<60 {
        let middle = (low + high) / 2
        if normalCDF(middle) < p { low = middle } else { high = middle }
    }
    return (low + high) / 2
}

/// The normal equations of a small weighted least-squares problem (tens of unknowns), solved by Cholesky.
struct SymmetricSystem {
    let size: Int
    /// Row-major, size × size.
    private var matrix: [Double]
    private var vector: [Double]

    init(size: Int) {
        self.size = size
        matrix = [Double](repeating: 0, count: size * size)
        vector = [Double](repeating: 0, count: size)
    }

    /// Adds the observation Σ coefficient·x[column] = value with `weight`.
    mutating func add(_ columns: [(Int, Double)], value: Double, weight: Double) {
        for (i, a) in columns {
            vector[i] += weight * a * value
            for (j, b) in columns { matrix[i * size + j] += weight * a * b }
        }
    }

    /// The solution and the diagonal of the inverse; nil when the system is not positive definite.
    func solve() -> (solution: [Double], inverseDiagonal: [Double])? {
        var lower = [Double](repeating: 0, count: size * size)
        for i in 0..<size {
            for j in 0...i {
                var sum = matrix[i * size + j]
                for k in 0..<j { sum -= lower[i * size + k] * lower[j * size + k] }
                if i == j {
                    guard sum > 1e-12 else { return nil }
                    lower[i * size + i] = sum.squareRoot()
                } else {
                    lower[i * size + j] = sum / lower[j * size + j]
                }
            }
        }
        func solveWith(_ right: [Double]) -> [Double] {
            var y = right
            for i in 0..<size {
                for k in 0..<i { y[i] -= lower[i * size + k] * y[k] }
                y[i] /= lower[i * size + i]
            }
            for i in stride(from: size - 1, through: 0, by: -1) {
                for k in (i + 1)..<size { y[i] -= lower[k * size + i] * y[k] }
                y[i] /= lower[i * size + i]
            }
            return y
        }
        let solution = solveWith(vector)
        var diagonal = [Double](repeating: 0, count: size)
        for i in 0..<size {
            var unit = [Double](repeating: 0, count: size)
            unit[i] = 1
            diagonal[i] = solveWith(unit)[i]
        }
        return (solution, diagonal)
    }
}
