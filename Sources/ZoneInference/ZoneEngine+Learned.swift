import BeaconModel

extension ZoneEngine {
    /// Folds what the gateways' links taught into the levels the engine expects, live: the `hmm` tables take the
    /// gains (where the calibration file has no offset), the `position` maps are rebuilt with the gains and the walls'
    /// losses. Tags keep their beliefs and states (the grid is the same), the probe tags' evidence and the map learned
    /// so far stay; the learned exponent is where the maps start only while no probe has said anything.
    public mutating func apply(_ learned: LearnedRadio) {
        guard learned != self.learned else { return }
        self.learned = learned
        model = VenueModel(venue: venue, settings: settings, calibration: calibration, learned: learned)
        guard settings.method == .position, !position.maps.isEmpty else { return }
        let (maps, start) = Self.positionMaps(
            venue: venue, settings: settings, calibration: calibration, learned: learned)
        let heard = position.evidence.contains { $0 != 0 }
        for k in maps.indices {
            var map = maps[k]
            map.correction = position.maps[k].correction
            map.corrected = position.maps[k].corrected
            position.maps[k] = map
        }
        if !heard { position.choice = start }
    }
}
