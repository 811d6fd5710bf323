import BeaconConfig
import BeaconModel
import ZoneInference

extension HubConfiguration {
    /// The zone engine this configuration describes: its venue, tags, regions, settings and calibration.
    public func makeEngine() throws(ConfigError) -> ZoneEngine {
        guard let venuePath = venue else {
            throw ConfigError(
                .missingKey, file: "hub.yaml", key: "venue",
                "zone inference needs the venue file (zones, doors, gateways): add `venue: venues/<site>.yaml`")
        }
        let loaded = try VenueLoader.load(from: venuePath)
        let calibrationFile = try calibration.map { path throws(ConfigError) in
            try ConfigLoader.load(Calibration.self, from: path)
        }
        let named =
            tags.map { (beacon: $0.beacon, tag: $0.id) } + loaded.namedTags.map { (beacon: $0.beacon, tag: $0.id) }
        return ZoneEngine(
            venue: loaded, settings: inference, directory: TagDirectory(named: named, regions: regions.map(\.region)),
            calibration: calibrationFile)
    }
}
