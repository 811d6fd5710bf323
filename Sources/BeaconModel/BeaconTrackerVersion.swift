/// The version every program reports with `--version` and puts in its status payloads.
public enum BeaconTrackerVersion {
    /// Semantic version of this source tree.
    public static let current = "0.1.0"
}
