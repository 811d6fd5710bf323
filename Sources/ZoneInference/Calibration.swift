import BeaconModel

/// A calibration file (`beacon-hub calibrate --out`): what a tag standing in each zone really showed each gateway, and,
/// when the plan had a route, what each gateway showed at points along it. hub.yaml's `calibration` points at it. The
/// `hmm` method uses the zones' profiles in place of the geometric model, and the gateway offsets wherever a zone has
/// no profile; the `position` method fits its radio map to the route's points and corrects each walked-about zone's
/// levels from its area (docs/inference.md, "Calibration").
public struct Calibration: Sendable, Hashable, Codable {
    /// What one gateway showed while the tag stood in one zone.
    public struct Profile: Sendable, Hashable, Codable {
        /// Mean RSSI over the seconds it heard the tag, dBm (for a tag of `referencePower` at 1 m).
        public var mean: Double
        /// Standard deviation of those readings, dB.
        public var sd: Double
        /// Share of the standing time's seconds in which it heard the tag at least once (0…1).
        public var heard: Double
        public var samples: Int

        public init(mean: Double, sd: Double, heard: Double, samples: Int) {
            self.mean = mean
            self.sd = sd
            self.heard = heard
            self.samples = samples
        }
    }

    /// What the gateways showed over a few seconds of the route, around one place.
    public struct Point: Sendable, Hashable, Codable {
        /// Where the tag was (interpolated between the plan's route points), venue metres.
        public var x: Double
        public var y: Double
        /// Per gateway that heard it: mean level, spread, share of the window's seconds with a reading, number of
        /// readings.
        public var levels: [String: Profile]
        /// The way the tag's carrier was walking (degrees anticlockwise from the venue's x axis: 0 east, 90 north),
        /// from the route; absent where the route pauses or turns within the window. The map's fit takes the carrier's
        /// body out of the levels with it.
        public var heading: Double?

        public init(x: Double, y: Double, levels: [String: Profile], heading: Double? = nil) {
            self.x = x
            self.y = y
            self.levels = levels
            self.heading = heading
        }
    }

    /// What the gateways showed while the walker went about one zone, their place in it unknown (a phone walk's zone
    /// taps) or known but taken as the whole zone's too (a route that went about the zone: `Calibrator.walksAbout`):
    /// the `position` method corrects each gateway's level evenly over the zone's cells from it, and fits no gain to it
    /// (`PositionMap.areaWeight`).
    public struct Area: Sendable, Hashable, Codable {
        public var zone: ZoneID
        /// The stays' seconds in the zone (less their settling seconds).
        public var seconds: Double
        /// Per gateway that heard it, as a point's.
        public var levels: [String: Profile]

        public init(zone: ZoneID, seconds: Double, levels: [String: Profile]) {
            self.zone = zone
            self.seconds = seconds
            self.levels = levels
        }
    }

    /// A radio map given outright: what each gateway would show a tag of `referencePower` at 1 m (no body in the way)
    /// over a grid of square cells, row by row from `originX`, `originY` (the grid's lower left corner, venue metres),
    /// `columns` cells a row. The `position` method takes each gateway's level at a cell from the map's cell that holds
    /// the cell's centre, in place of the geometry; gateways the map does not list, and cells off its grid, keep the
    /// geometry. Route points and areas, if any, are then fitted on top of it. `beacon-sim radio-map` writes the
    /// simulator's exact map this way: the engine given the map no calibration could better (docs/simulator.md).
    public struct RadioMap: Sendable, Hashable, Codable {
        public var cellMetres: Double
        public var originX: Double
        public var originY: Double
        public var columns: Int
        public var rows: Int
        /// Per gateway: `columns` × `rows` levels, dBm, the first row the lowest (smallest y).
        public var levels: [String: [Double]]

        public init(
            cellMetres: Double, originX: Double, originY: Double, columns: Int, rows: Int, levels: [String: [Double]]
        ) {
            self.cellMetres = cellMetres
            self.originX = originX
            self.originY = originY
            self.columns = columns
            self.rows = rows
            self.levels = levels
        }

        /// What is wrong with the map's shape, if anything: a sentence naming the key and what to write.
        public var problem: String? {
            guard cellMetres > 0, cellMetres.isFinite else {
                return "map.cellMetres must be a positive number of metres"
            }
            guard columns > 0, rows > 0 else { return "map.columns and map.rows must be at least 1" }
            for (gateway, values) in levels.sorted(by: { $0.key < $1.key }) where values.count != columns * rows {
                return "map.levels.\(gateway) has \(values.count) levels, but columns × rows is \(columns * rows)"
            }
            return nil
        }

        /// The level of `gateway` in the cell holding `point`; nil off the grid, for a gateway it does not list, or
        /// one whose levels do not fill the grid (`problem`: the hub refuses such a file at start).
        func level(_ gateway: String, at point: BeaconModel.Point) -> Double? {
            guard let values = levels[gateway], values.count == columns * rows else { return nil }
            let column = Int(((point.x - originX) / cellMetres).rounded(.down))
            let row = Int(((point.y - originY) / cellMetres).rounded(.down))
            guard column >= 0, column < columns, row >= 0, row < rows else { return nil }
            return values[row * columns + column]
        }
    }

    /// Where a gateway stands when it is no longer where the venue file puts it: placed from the dashboard after it
    /// was moved (`POST /api/gateways/{gateway}/place`), so that the engine's map, the links and the plan take the new
    /// place live, versioned and rolled back with the rest of the calibration.
    public struct Placement: Sendable, Hashable, Codable {
        public var x: Double
        public var y: Double
        /// The zone it serves there; absent for none (a corridor).
        public var zone: ZoneID?
        public init(x: Double, y: Double, zone: ZoneID? = nil) {
            self.x = x
            self.y = y
            self.zone = zone
        }
    }
    public var site: SiteID
    /// When it was computed, unix seconds.
    public var created: Double
    /// The calibration tag's measured power at 1 m, dBm: profiles are rescaled for tags advertising another.
    public var referencePower: Double
    /// Per gateway: how much louder (+) or quieter (−) it reads than the geometric model predicts, dB.
    public var gatewayOffsets: [String: Double]
    /// Per zone, per gateway.
    public var zones: [String: [String: Profile]]
    /// Along the plan's route, every `Calibrator.pointSeconds`; absent when the plan had no route.
    public var points: [Point]?
    /// Per zone the walker was in without saying where in it (a zone tapped, a plan's stop off its route); absent in
    /// older files (whose walks' zones taught offsets only) and when every stay was at a point.
    public var areas: [Area]?
    /// A radio map given outright (`RadioMap`); absent in every calibration a walk makes.
    public var map: RadioMap?
    /// Per gateway placed elsewhere than the venue file says (`Placement`); absent when none is.
    public var placements: [String: Placement]?

    public init(
        site: SiteID, created: Double, referencePower: Double, gatewayOffsets: [String: Double],
        zones: [String: [String: Profile]], points: [Point]? = nil, areas: [Area]? = nil, map: RadioMap? = nil,
        placements: [String: Placement]? = nil
    ) {
        self.site = site
        self.created = created
        self.referencePower = referencePower
        self.gatewayOffsets = gatewayOffsets
        self.zones = zones
        self.points = points
        self.areas = areas
        self.map = map
        self.placements = placements
    }

    /// Whether the calibration has route points or areas: readings taken where the walk was, fitted onto the map.
    var hasWalk: Bool { !(points ?? []).isEmpty || !(areas ?? []).isEmpty }

    /// Whether the calibration has neither route points, areas nor a map: the `position` method then takes only its
    /// offsets.
    var isOffsetsOnly: Bool { !hasWalk && map == nil }
    /// Whether it only places gateways (a gateway placed while no calibration was in force): nothing measured.
    var isPlacementsOnly: Bool { isOffsetsOnly && gatewayOffsets.isEmpty && zones.isEmpty }

    /// The calibration with `gateway` standing at `placement`: what was measured of it at its old place (its zones'
    /// profiles, its levels at the route's points and in the walked-about zones, its column of a given map) no longer
    /// holds and is left out; its offset, the receiver's own gain, goes with it to the new place.
    public func placing(_ gateway: GatewayID, at placement: Placement) -> Calibration {
        let id = gateway.rawValue
        var placed = self
        placed.zones = zones.mapValues { $0.filter { $0.key != id } }.filter { !$0.value.isEmpty }
        placed.points = points?.map { point in
            var point = point
            point.levels[id] = nil
            return point
        }
        placed.areas = areas?.map { area in
            var area = area
            area.levels[id] = nil
            return area
        }
        placed.map?.levels[id] = nil
        placed.placements = (placements ?? [:]).merging([id: placement]) { $1 }
        return placed
    }
}
