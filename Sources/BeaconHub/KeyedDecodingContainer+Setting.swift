extension KeyedDecodingContainer {
    /// A number of hub.yaml: `fallback` when absent, an error naming the allowed range when outside it.
    func setting(_ key: Key, _ fallback: Double, in range: ClosedRange<Double>) throws -> Double {
        let value = try decodeIfPresent(Double.self, forKey: key) ?? fallback
        guard range.contains(value) else {
            throw DecodingError.dataCorruptedError(
                forKey: key, in: self,
                debugDescription: "must be between \(range.lowerBound) and \(range.upperBound), found \(value)")
        }
        return value
    }
}
