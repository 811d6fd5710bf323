import BeaconConfig
import BeaconModel

extension HubConfiguration {
    /// What decoding each section alone cannot see: tags named twice or in a malformed beacon id, region ids used
    /// twice, and — with the venue read — foreign-gateway mappings and webhook zone filters naming what the venue does
    /// not have. Each would otherwise go unnoticed: a second name for a beacon is ignored, a reading from an unknown
    /// gateway is rejected, a webhook filtering on a zone that does not exist never fires.
    func crossCheckProblems(file: String) -> [ConfigError] {
        var problems: [ConfigError] = []
        func problem(_ key: String, _ message: String) {
            problems.append(ConfigError(.invalidValue, file: file, key: key, message))
        }
        let venueTags = loadedVenue?.namedTags ?? []
        var tagIDs = Dictionary(venueTags.map { ($0.id, "the venue") }, uniquingKeysWith: { first, _ in first })
        var beacons = Dictionary(
            venueTags.map { ($0.beacon.lowercased(), "the venue's tag \($0.id)") },
            uniquingKeysWith: { first, _ in first })
        for (index, tag) in tags.enumerated() {
            if let message = VenueLoader.beaconProblem(tag.beacon) { problem("tags[\(index)].beacon", message) }
            if let other = tagIDs[tag.id] {
                problem("tags[\(index)].id", "tag id \"\(tag.id)\" is also named in \(other): give each tag one id")
            }
            tagIDs[tag.id] = tagIDs[tag.id] ?? "tags[\(index)]"
            let beacon = tag.beacon.lowercased()
            if let other = beacons[beacon] {
                problem(
                    "tags[\(index)].beacon",
                    "beacon \(tag.beacon) is also named by \(other); only the first name counts: remove one")
            }
            beacons[beacon] = beacons[beacon] ?? "tags[\(index)] (\(tag.id))"
        }
        var regionIDs: Set<String> = []
        for (index, settings) in regions.enumerated() where !regionIDs.insert(settings.region.id).inserted {
            problem(
                "regions[\(index)].id", "region id \"\(settings.region.id)\" is used twice: give each region its own")
        }
        guard let venue = loadedVenue else { return problems }
        let gateways = Set(venue.gateways.map(\.id))
        let gatewayList = venue.gateways.map(\.id.rawValue).joined(separator: ", ")
        for (room, gateway) in (espresense?.rooms ?? [:]).sorted(by: { $0.key < $1.key })
        where !gateways.contains(gateway) {
            problem(
                "espresense.rooms.\(room)",
                "gateway \(gateway) is not in the venue, so its readings would be rejected: use one of \(gatewayList)")
        }
        for (name, gateway) in (openMQTTGateway?.gateways ?? [:]).sorted(by: { $0.key < $1.key })
        where !gateways.contains(gateway) {
            problem(
                "openMQTTGateway.gateways.\(name)",
                "gateway \(gateway) is not in the venue, so its readings would be rejected: use one of \(gatewayList)")
        }
        let zones = Set(venue.zones.map(\.id))
        for (index, webhook) in webhooks.enumerated() {
            for zone in (webhook.zones ?? []).sorted(by: { $0.rawValue < $1.rawValue }) where !zones.contains(zone) {
                problem(
                    "webhooks[\(index)].zones",
                    "zone \(zone) is not in the venue, so this filter never matches: use one of "
                        + venue.zones.map(\.id.rawValue).joined(separator: ", "))
            }
        }
        return problems
    }
}
