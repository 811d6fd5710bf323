import BeaconModel

/// Reads a venue file strictly and checks what the decoder cannot: unique ids, references between sections,
/// gateways inside their zones, tag beacons in the contract's format.
public enum VenueLoader {
    /// The id a door uses for "no zone" (an entrance).
    public static let outside = "outside"

    public static func load(from path: String) throws(ConfigError) -> Venue {
        let venue = try ConfigLoader.load(Venue.self, from: path)
        try validate(venue, file: path)
        return venue
    }

    public static func decode(_ text: String, file: String) throws(ConfigError) -> Venue {
        let venue = try ConfigLoader.decode(Venue.self, from: text, file: file)
        try validate(venue, file: file)
        return venue
    }

    /// Why `beacon` is not a beacon id in the contract's format (docs/mqtt.md), or `nil`; for every file that names
    /// tags (the venue's and hub.yaml's `tags:`).
    public static func beaconProblem(_ beacon: String) -> String? {
        let prefixes = ["ibeacon:", "altbeacon:", "eddystone-uid:"]
        guard prefixes.contains(where: beacon.hasPrefix), beacon.split(separator: ":").count >= 3 else {
            return "expected a beacon id such as ibeacon:<uuid>:<major>:<minor> (docs/mqtt.md), found \"\(beacon)\""
        }
        return nil
    }

    static func validate(_ venue: Venue, file: String) throws(ConfigError) {
        func fail(_ key: String, _ message: String) -> ConfigError {
            ConfigError(.invalidValue, file: file, key: key, message)
        }
        guard !venue.zones.isEmpty else { throw fail("zones", "a venue needs at least one zone") }
        var zoneIDs: Set<String> = []
        for (index, zone) in venue.zones.enumerated() {
            guard zone.id.rawValue != outside else {
                throw fail("zones[\(index)].id", "\"outside\" is reserved for doors to no zone")
            }
            guard zoneIDs.insert(zone.id.rawValue).inserted else {
                throw fail("zones[\(index)].id", "zone id \"\(zone.id)\" is used twice")
            }
        }
        for (index, door) in venue.doors.enumerated() {
            for side in door.between where side != outside && !zoneIDs.contains(side) {
                throw fail(
                    "doors[\(index)].between",
                    "no zone \"\(side)\" (zones: \(zoneIDs.sorted().joined(separator: ", ")))")
            }
        }
        var gatewayIDs: Set<GatewayID> = []
        for (index, gateway) in venue.gateways.enumerated() {
            guard gatewayIDs.insert(gateway.id).inserted else {
                throw fail("gateways[\(index)].id", "gateway id \"\(gateway.id)\" is used twice")
            }
            guard let zoneID = gateway.zone else { continue }
            guard let zone = venue.zones.first(where: { $0.id == zoneID }) else {
                throw fail("gateways[\(index)].zone", "no zone \"\(zoneID)\"")
            }
            // Wall-mounted gateways sit on the boundary: allow half a metre outside the shape.
            let near =
                zone.shape.contains(gateway.position)
                || zone.shape.vertices.indices.contains { i in
                    Segment(zone.shape.vertices[i], zone.shape.vertices[(i + 1) % zone.shape.vertices.count])
                        .distance(to: gateway.position) <= 0.5
                }
            guard near else {
                throw fail(
                    "gateways[\(index)].position",
                    "gateway \(gateway.id) at (\(gateway.position.x), \(gateway.position.y)) is not in zone \(zoneID)")
            }
        }
        var tagIDs: Set<TagID> = []
        for (index, tag) in venue.tags.enumerated() {
            guard tagIDs.insert(tag.id).inserted else {
                throw fail("tags[\(index)].id", "tag id \"\(tag.id)\" is used twice")
            }
            if let problem = beaconProblem(tag.beacon) { throw fail("tags[\(index)].beacon", problem) }
            if let start = tag.start, !zoneIDs.contains(start.rawValue) {
                throw fail("tags[\(index)].start", "no zone \"\(start)\"")
            }
            if tag.carrier != .still {
                for zone in venue.zones where venue.neighbours(of: zone.id).isEmpty && venue.zones.count > 1 {
                    throw fail("doors", "zone \(zone.id) has no door, so walking tags can never reach it")
                }
            }
        }
    }
}
