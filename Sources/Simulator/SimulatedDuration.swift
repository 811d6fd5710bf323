import BeaconModel

/// Durations as the simulator's command lines write them.
public enum SimulatedDuration {
    /// Plain seconds, or a sum of d, h, m and s parts ("90s", "30m", "2h30m"); `nil` for anything else or for zero.
    public static func parse(_ text: String) -> Double? {
        DurationText.seconds(text).flatMap { $0 > 0 ? $0 : nil }
    }
}
