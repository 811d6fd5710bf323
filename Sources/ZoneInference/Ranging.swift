import BeaconModel

#if canImport(Glibc)
    import Glibc
#endif

/// Distance and CoreLocation's proximity classes from a smoothed RSSI and the tag's measured power at 1 m.
public enum Ranging {
    /// Metres by the log-distance model; nil without a measured power.
    public static func distance(rssi: Double, measuredPower: Double?, pathLossExponent: Double) -> Double? {
        guard let measuredPower else { return nil }
        return pow(10, (measuredPower - rssi) / (10 * pathLossExponent))
    }

    /// CoreLocation's classes: immediate within about half a metre, near within about 3 m, far beyond; unknown when
    /// the distance cannot be estimated or the reading is stale.
    public static func proximity(distance: Double?) -> TagState.Proximity {
        guard let distance, distance.isFinite else { return .unknown }
        if distance < 0.5 { return .immediate }
        if distance < 3 { return .near }
        return .far
    }
}
