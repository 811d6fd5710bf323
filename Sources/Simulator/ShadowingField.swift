import BeaconModel

#if canImport(Glibc)
    import Glibc
#endif

/// Static shadowing around one gateway: a Gaussian field over the floor with standard deviation σ, correlated over
/// `correlation` metres (white noise on a grid, smoothed with a Gaussian kernel, rescaled to σ, read bilinearly).
/// A tag standing still keeps its shadowing; one walking through it sees it change smoothly.
public struct ShadowingField: Sendable {
    let origin: Point
    let cell: Double
    let columns: Int
    let rows: Int
    let values: [Double]

    public init(
        covering bounds: (min: Point, max: Point), sigma: Double, correlation: Double, using rng: inout SeededGenerator
    ) {
        let cell = max(0.25, correlation / 4)
        // A margin of three correlation lengths keeps the smoothing's edge effects off the venue.
        let margin = 3 * correlation
        let columns = Int(((bounds.max.x - bounds.min.x + 2 * margin) / cell).rounded(.up)) + 1
        let rows = Int(((bounds.max.y - bounds.min.y + 2 * margin) / cell).rounded(.up)) + 1
        self.cell = cell
        self.columns = columns
        self.rows = rows
        origin = Point(bounds.min.x - margin, bounds.min.y - margin)
        guard sigma > 0 else {
            values = [Double](repeating: 0, count: columns * rows)
            return
        }
        var noise = [Double](repeating: 0, count: columns * rows)
        for index in noise.indices { noise[index] = rng.gaussian() }
        // Separable Gaussian smoothing; kernel σ chosen so the field's correlation falls to e^-1 near `correlation`.
        // Gaussian-smoothed white noise correlates as exp(−r²/4σₖ²): σₖ = L/2 puts e⁻¹ at r = L.
        let kernelSigma = correlation / (2 * cell)
        let radius = Int((3 * kernelSigma).rounded(.up))
        let kernel = (-radius...radius).map { exp(-Double($0 * $0) / (2 * kernelSigma * kernelSigma)) }
        func smooth(_ input: [Double], horizontal: Bool) -> [Double] {
            var output = [Double](repeating: 0, count: input.count)
            for row in 0..<rows {
                for column in 0..<columns {
                    var sum = 0.0
                    for (offset, weight) in zip(-radius...radius, kernel) {
                        let c = horizontal ? column + offset : column
                        let r = horizontal ? row : row + offset
                        guard c >= 0, c < columns, r >= 0, r < rows else { continue }
                        sum += weight * input[r * columns + c]
                    }
                    output[row * columns + column] = sum
                }
            }
            return output
        }
        let smoothed = smooth(smooth(noise, horizontal: true), horizontal: false)
        let mean = smoothed.reduce(0, +) / Double(smoothed.count)
        let deviation = (smoothed.map { ($0 - mean) * ($0 - mean) }.reduce(0, +) / Double(smoothed.count)).squareRoot()
        values = smoothed.map { ($0 - mean) / max(deviation, 1e-12) * sigma }
    }

    /// The field's value at `point`, dB.
    public func value(at point: Point) -> Double {
        let fx = min(max((point.x - origin.x) / cell, 0), Double(columns - 1) - 1e-9)
        let fy = min(max((point.y - origin.y) / cell, 0), Double(rows - 1) - 1e-9)
        let c = Int(fx)
        let r = Int(fy)
        let tx = fx - Double(c)
        let ty = fy - Double(r)
        let c1 = min(c + 1, columns - 1)
        let r1 = min(r + 1, rows - 1)
        let top = values[r * columns + c] * (1 - tx) + values[r * columns + c1] * tx
        let bottom = values[r1 * columns + c] * (1 - tx) + values[r1 * columns + c1] * tx
        return top * (1 - ty) + bottom * ty
    }
}
