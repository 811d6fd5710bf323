import BeaconModel

extension Venue {
    /// The venue with its gateways where `placements` (a calibration's) put them, and serving the zones it names;
    /// gateways it does not name stay where the file says.
    public func placed(by placements: [String: Calibration.Placement]?) -> Venue {
        guard let placements, !placements.isEmpty else { return self }
        var venue = self
        for index in venue.gateways.indices {
            guard let placement = placements[venue.gateways[index].id.rawValue] else { continue }
            venue.gateways[index].position = Point(placement.x, placement.y)
            venue.gateways[index].zone = placement.zone
        }
        return venue
    }
}
