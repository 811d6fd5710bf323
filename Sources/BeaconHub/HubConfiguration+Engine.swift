import BeaconConfig
import BeaconModel
import ZoneInference

extension HubConfiguration {
    /// The venue file: as `load(from:)` read it, or read now (a configuration decoded without `load`).
    public func venueFile() throws(ConfigError) -> Venue {
        if let loadedVenue { return loadedVenue }
        guard let venuePath = venue else {
            throw ConfigError(
                .missingKey, file: "hub.yaml", key: "venue",
                "zone inference needs the venue file (zones, doors, gateways): add `venue: venues/<site>.yaml`")
        }
        return try VenueLoader.load(from: venuePath)
    }

    /// The zone engine this configuration describes: its venue, tags, regions, settings and calibration.
    public func makeEngine() throws(ConfigError) -> ZoneEngine {
        let venue = try venueFile()
        var calibrationFile = loadedCalibration
        if calibrationFile == nil, let calibration {
            calibrationFile = try ConfigLoader.load(Calibration.self, from: calibration)
        }
        let named =
            tags.map { (beacon: $0.beacon, tag: $0.id) } + venue.namedTags.map { (beacon: $0.beacon, tag: $0.id) }
        return ZoneEngine(
            venue: venue, settings: inference, directory: TagDirectory(named: named, regions: regions.map(\.region)),
            calibration: calibrationFile)
    }
}
