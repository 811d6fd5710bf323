import BeaconModel
import Foundation

extension LinkCalibration {
    /// What one of a gateway's links hears now: the other gateway, which way (`outgoing`: the gateway's own beacon
    /// heard by the other), and the mean RSSI of the receptions, nil for a link that was heard before and is not now.
    public struct Heard: Sendable, Hashable {
        public var other: GatewayID
        public var outgoing: Bool
        public var meanRSSI: Double?
        /// The power at 1 m in the transmitter's frame, dBm.
        public var measuredPower: Double

        public init(other: GatewayID, outgoing: Bool, meanRSSI: Double?, measuredPower: Double) {
            self.other = other
            self.outgoing = outgoing
            self.meanRSSI = meanRSSI
            self.measuredPower = measuredPower
        }
    }

    /// Where a gateway's links say it is now.
    public struct Fix: Sendable, Hashable {
        public var position: Point
        /// How far from `position` it may be (the places that explain the links about as well), metres.
        public var withinMetres: Double
        /// From its place in the venue (the file's, or its placement's), metres.
        public var movedMetres: Double
        /// The links it rests on.
        public var links: Int
        /// How much better the fix explains the links than the gateway's place in the venue file does (Δχ², in the
        /// links' scatter at the fix, 0 when the place does as well): small for a gateway that has not moved.
        public var evidence: Double

        public init(position: Point, withinMetres: Double, movedMetres: Double, links: Int, evidence: Double) {
            self.position = position
            self.withinMetres = withinMetres
            self.movedMetres = movedMetres
            self.links = links
            self.evidence = evidence
        }
    }

    /// Where `gateway` is now, from what its links hear now (`heard`) and what the last fit knows of the others:
    /// each link is expected at the transmitter's power, offset and the receiver's gain, less the path loss at the
    /// fit's exponent, the venue's walls and the other end's antenna, from a place on a half-metre grid over the
    /// venue; the gateway's own gain and transmitter offset may have changed with it (an antenna turned), around the
    /// fit's values (σ `ownOffsetSigma`). A link no longer heard counts against places where it would be heard above
    /// `sensitivity`. The place that explains the links best is the fix; `withinMetres` reaches the farthest place
    /// within Δχ² 2.3 of it (68 % for two coordinates), with the links' scatter taken from the fit at its best when
    /// it is wider than `linkSigma`. Nil without three links heard, or when `gateway` or the fit lacks it.
    public static func locate(
        _ gateway: GatewayID, heard: [Heard], venue: Venue, fit: Result, sensitivity: Double,
        settings: Settings = Settings(), ownOffsetSigma: Double = 4
    ) -> Fix? {
        guard let own = venue.gateways.first(where: { $0.id == gateway }),
            let ownGain = fit.receiveGains[gateway]?.value, let ownOffset = fit.transmitOffsets[gateway]?.value
        else { return nil }
        let byID = Dictionary(uniqueKeysWithValues: venue.gateways.map { ($0.id, $0) })
        let links = heard.filter { $0.other != gateway && byID[$0.other] != nil }
        guard links.filter({ $0.meanRSSI != nil }).count >= 3 else { return nil }
        let exponent = fit.pathLossExponent.value
        let points = venue.zones.flatMap(\.shape.vertices) + venue.gateways.map(\.position)
        guard let minX = points.map(\.x).min(), let maxX = points.map(\.x).max(),
            let minY = points.map(\.y).min(), let maxY = points.map(\.y).max()
        else { return nil }
        let step = 0.5
        let columns = Int(((maxX - minX) / step).rounded(.down)) + 1
        let rows = Int(((maxY - minY) / step).rounded(.down)) + 1
        let variance = settings.linkSigma * settings.linkSigma
        // The own offset's prior, as so many links' worth of weight.
        let priorWeight = variance / (ownOffsetSigma * ownOffsetSigma)

        // The links' cost (χ² in `linkSigma`) of `place`, and the RMS residual of the heard links there.
        func cost(at place: Point) -> (chiSquared: Double, residual: Double) {
            // Residuals of the heard links by direction, before the own offsets; and the expected levels of the links
            // not heard, with their direction.
            var residuals: [[Double]] = [[], []]
            var unheard: [(expected: Double, direction: Int)] = []
            for link in links {
                let other = byID[link.other]!
                let dx = place.x - other.position.x
                let dy = place.y - other.position.y
                let dz = own.height - other.height
                let distance = max(0.1, (dx * dx + dy * dy + dz * dz).squareRoot())
                var expected = link.measuredPower - 10 * exponent * log10(distance)
                expected +=
                    link.outgoing
                    ? ownOffset + (fit.receiveGains[link.other]?.value ?? 0)
                    : ownGain + (fit.transmitOffsets[link.other]?.value ?? 0)
                let path = Segment(place, other.position)
                for (index, wall) in venue.walls.enumerated() where path.intersects(wall.segment) {
                    expected -= fit.wallLosses[index]?.value ?? wall.attenuation
                }
                if let antenna = other.antenna {
                    let ratio = fit.antennaFrontToBack[link.other]?.value ?? antenna.frontToBackDB
                    expected -= ratio * (1 - antenna.cosine(towardsX: dx, y: dy, distance: distance)) / 2
                }
                let direction = link.outgoing ? 0 : 1
                if let level = link.meanRSSI {
                    residuals[direction].append(level - expected)
                } else {
                    unheard.append((expected, direction))
                }
            }
            var cost = 0.0
            var offsets = [0.0, 0.0]
            for direction in 0..<2 where !residuals[direction].isEmpty {
                let sum = residuals[direction].reduce(0, +)
                offsets[direction] = sum / (Double(residuals[direction].count) + priorWeight)
                cost += residuals[direction].map { ($0 - offsets[direction]) * ($0 - offsets[direction]) }
                    .reduce(0, +)
                cost += priorWeight * offsets[direction] * offsets[direction]
            }
            for link in unheard {
                let excess = link.expected + offsets[link.direction] - sensitivity
                if excess > 0 { cost += excess * excess }
            }
            let heardCount = residuals[0].count + residuals[1].count
            return (cost / variance, (cost / Double(max(1, heardCount))).squareRoot())
        }

        var costs = [Double](repeating: .infinity, count: columns * rows)
        var best = (cost: Double.infinity, cell: -1)
        var residualAtBest = 0.0
        for row in 0..<rows {
            for column in 0..<columns {
                let cell = row * columns + column
                let here = cost(at: Point(minX + Double(column) * step, minY + Double(row) * step))
                costs[cell] = here.chiSquared
                if here.chiSquared < best.cost {
                    best = (here.chiSquared, cell)
                    residualAtBest = here.residual
                }
            }
        }
        guard best.cell >= 0 else { return nil }
        func place(_ cell: Int) -> Point {
            Point(minX + Double(cell % columns) * step, minY + Double(cell / columns) * step)
        }
        let fix = place(best.cell)
        let scale = max(1, residualAtBest / settings.linkSigma)
        let reach = best.cost + 2.3 * scale * scale
        var within = step / 2
        for cell in costs.indices where costs[cell] <= reach {
            within = max(within, place(cell).distance(to: fix))
        }
        return Fix(
            position: fix, withinMetres: within, movedMetres: fix.distance(to: own.position),
            links: links.filter { $0.meanRSSI != nil }.count,
            evidence: max(0, cost(at: own.position).chiSquared - best.cost) / (scale * scale))
    }
}
