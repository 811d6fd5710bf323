import BeaconModel
import Foundation
import ZoneInference

/// `beacon-sim radio-map`: the exact radio map of a run — what each gateway's mean level is at every cell of the floor
/// for the calibration tag (`CalibrationWalk.txPower` at 1 m, no body in the way), with the run's shadowing, gateway
/// gains, antennas and walls — as a calibration file holding only that map (`Calibration.RadioMap`). The hub given it
/// is the engine with the map no calibration can better: the limit of calibrating, where the oracle is the limit of
/// the engine too. The tags' own powers stay unknown to it, as to every hub.
public enum ExactRadioMap {
    /// How much of the run's static shadowing the map holds (`beacon-sim radio-map --shadowing`).
    public enum Shadowing: String, Sendable, CaseIterable {
        /// All of it: the exact map.
        case exact
        /// In each zone, each gateway's shadowing averaged over the zone's cells; none outside the zones. Everything
        /// a walk that learns one level per zone and gateway (zones tapped) could know at best, with the venue's true
        /// geometry besides: the limit of calibrating by zones.
        case zoneMean = "zone-mean"
        /// None: the true geometry, gains, antennas and walls alone.
        case none
        /// The hub's own geometry (its path-loss law at a given exponent, no gains nor antennas, the walls' materials'
        /// losses: what an uncalibrated hub expects) plus, in each zone, each gateway's mean difference of the exact
        /// map to it over the zone's cells; outside the zones the hub's geometry. What a walk by zones would teach the
        /// hub if it measured each zone's mean level exactly: the walk's own limit, where `zoneMean` also gives it
        /// the true geometry.
        case engineZoneMean = "engine-zone-mean"
    }

    /// The hub's default path-loss exponent (hub.yaml's `pathLossExponent`).
    public static var hubExponent: Double { InferenceSettings().pathLossExponent }

    /// The map of `beacon-sim run`'s radio with the same `seed` over cells of `cellMetres`: the hub's own grid at the
    /// hub's default cell size, so each of its cells reads the level at its own centre. `exponent` is the hub's
    /// path-loss exponent for `engineZoneMean` (default: the hub's default setting).
    public static func calibration(
        venue: Venue, seed: UInt64, cellMetres: Double, created: Double, shadowing: Shadowing = .exact,
        exponent: Double = hubExponent
    ) -> Calibration {
        // The radio is the first stream split off the seed, exactly as in VenueSimulation.
        var rng = SeededGenerator(seed: seed)
        var radioStream = rng.split()
        let radio = RadioModel(venue: venue, using: &radioStream)
        let grid = FloorGrid(venue: venue, reach: 0, cellSide: cellMetres)
        let power = Double(CalibrationWalk.txPower)
        let hubGeometry =
            shadowing == .engineZoneMean
            ? PositionMap.geometricLevels(
                venue: venue, settings: InferenceSettings(), exponent: exponent, at: (0..<grid.count).map(grid.centre))
            : [:]
        var levels: [String: [Double]] = [:]
        for gateway in venue.gateways {
            func mean(shadowed: Bool) -> [Double?] {
                (0..<grid.count).map { cell in
                    radio.meanRSSI(
                        tagP0: power, at: grid.centre(cell), gateway: gateway.id, bodyFactor: 0, shadowed: shadowed)
                }
            }
            let level: [Double?]
            switch shadowing {
            case .exact: level = mean(shadowed: true)
            case .none: level = mean(shadowed: false)
            case .zoneMean:
                level = zoneMean(exact: mean(shadowed: true), bare: mean(shadowed: false), grid: grid, venue: venue)
            case .engineZoneMean:
                let hub = (hubGeometry[gateway.id] ?? []).map { $0.map { $0 + power } }
                level = zoneMean(exact: mean(shadowed: true), bare: hub, grid: grid, venue: venue)
            }
            levels[gateway.id.rawValue] = level.map { (($0 ?? -200) * 10).rounded() / 10 }
        }
        let map = Calibration.RadioMap(
            cellMetres: grid.cellSize, originX: grid.origin.x, originY: grid.origin.y, columns: grid.columns,
            rows: grid.rows, levels: levels)
        return Calibration(
            site: venue.site, created: created, referencePower: Double(CalibrationWalk.txPower), gatewayOffsets: [:],
            zones: [:], map: map)
    }

    /// `bare` (a gateway's levels without shadowing, or the hub's geometry, per cell) plus, in each zone's cells, the
    /// zone's mean of `exact` − `bare` over its cells; outside the zones, `bare`.
    static func zoneMean(exact: [Double?], bare: [Double?], grid: FloorGrid, venue: Venue) -> [Double?] {
        var sums = [(total: Double, cells: Int)](repeating: (0, 0), count: venue.zones.count)
        for cell in 0..<grid.count {
            let zone = Int(grid.zoneOfCell[cell])
            guard zone < venue.zones.count, let shadowed = exact[cell], let plain = bare[cell] else { continue }
            sums[zone].total += shadowed - plain
            sums[zone].cells += 1
        }
        return (0..<grid.count).map { cell in
            let zone = Int(grid.zoneOfCell[cell])
            guard zone < venue.zones.count, sums[zone].cells > 0, let plain = bare[cell] else { return bare[cell] }
            return plain + sums[zone].total / Double(sums[zone].cells)
        }
    }

    /// What the file's first line says the map is.
    static func description(_ shadowing: Shadowing) -> String {
        switch shadowing {
        case .exact: "the exact radio map of the run with this seed"
        case .zoneMean: "the radio map of the run with this seed, its shadowing averaged over each zone"
        case .none: "the radio map of the run with this seed, its shadowing left out"
        case .engineZoneMean:
            "the hub's geometry at the given exponent plus each zone's mean difference of the exact radio map of the run "
                + "with this seed to it"
        }
    }

    /// The calibration as the YAML file hub.yaml's `calibration` reads: one line per gateway's levels.
    /// `exponent`, for `engineZoneMean`, goes into the first line.
    public static func yaml(
        _ calibration: Calibration, seed: UInt64, shadowing: Shadowing = .exact, exponent: Double? = nil
    ) -> String {
        guard let map = calibration.map else { return "" }
        func number(_ value: Double) -> String {
            value == value.rounded() ? String(Int(value)) : String(format: "%.1f", value)
        }
        var lines = [
            "# beacon-sim radio-map --seed \(seed)\(shadowing == .exact ? "" : " --shadowing \(shadowing.rawValue)")"
                + (shadowing == .engineZoneMean ? exponent.map { " --exponent \(number($0))" } ?? "" : "") + ": "
                + description(shadowing) + " (docs/simulator.md).",
            "site: \(calibration.site.rawValue)", "created: \(number(calibration.created))",
            "referencePower: \(number(calibration.referencePower))", "gatewayOffsets: {}", "zones: {}", "map:",
            "  cellMetres: \(map.cellMetres)", "  originX: \(map.originX)", "  originY: \(map.originY)",
            "  columns: \(map.columns)", "  rows: \(map.rows)", "  levels:",
        ]
        for (gateway, values) in map.levels.sorted(by: { $0.key < $1.key }) {
            lines.append("    \"\(gateway)\": [\(values.map(number).joined(separator: ", "))]")
        }
        return lines.joined(separator: "\n") + "\n"
    }
}
