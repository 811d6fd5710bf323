import BeaconModel

extension ZoneEngine {
    /// Folds what the gateways' links taught into the levels the engine expects, live: the `hmm` tables take the
    /// gains (where the calibration file has no offset), the `position` maps are rebuilt with the gains and the walls'
    /// losses. Tags keep their beliefs and states (the grid is the same), the probe tags' evidence and the map learned
    /// so far stay; the learned exponent is where the maps start only while no probe has said anything.
    public mutating func apply(_ learned: LearnedRadio) {
        guard learned != self.learned else { return }
        self.learned = learned
        rebuildRadio(calibrated: false)
    }

    /// Swaps the calibration live (a walk finished on the dashboard's calibration page, or a rollback; nil: none), as
    /// a restart with it in hub.yaml would, except that tags keep their beliefs and states and the probe tags' evidence
    /// stays. A calibration with a route also chooses the exponent its points fit best (areas do not).
    /// A calibration that places gateways elsewhere (`Calibration.placements`) moves them in the maps, the clone
    /// check and `venue`; the grid stays the venue file's, so beliefs carry over.
    public mutating func apply(calibration: Calibration?) {
        guard calibration != self.calibration else { return }
        self.calibration = calibration
        venue = venueFile.placed(by: calibration?.placements)
        rebuildRadio(calibrated: calibration?.points?.isEmpty == false)
        // Only a calibration moves gateways: the links' fits leave the pairs as they are.
        distantPairs = Self.distantPairs(venue: venue, model: model, settings: settings)
    }

    /// The model and the `position` maps from the venue, the calibration and what the links taught.
    mutating func rebuildRadio(calibrated: Bool) {
        model = VenueModel(venue: venue, settings: settings, calibration: calibration, learned: learned)
        guard settings.method == .position, !position.maps.isEmpty else { return }
        let (maps, start) = Self.positionMaps(
            venue: venueFile, settings: settings, calibration: calibration, learned: learned)
        let heard = position.evidence.contains { $0 != 0 }
        for k in maps.indices {
            var map = maps[k]
            map.correction = position.maps[k].correction
            map.corrected = position.maps[k].corrected
            // What the readings taught of the radio stays: the gateways' sensitivities and the observation model.
            map.sensitivities = position.maps[k].sensitivities
            map.noise = position.maps[k].noise
            map.noiseID = position.maps[k].noiseID
            position.maps[k] = map
        }
        if !heard || calibrated { position.choice = start }
    }
}
