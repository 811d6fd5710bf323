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
    }

    /// The map of `beacon-sim run`'s radio with the same `seed` over cells of `cellMetres`: the hub's own grid at the
    /// hub's default cell size, so each of its cells reads the level at its own centre.
    public static func calibration(
        venue: Venue, seed: UInt64, cellMetres: Double, created: Double, shadowing: Shadowing = .exact
    ) -> Calibration {
        // The radio is the first stream split off the seed, exactly as in VenueSimulation.
        var rng = SeededGenerator(seed: seed)
        var radioStream = rng.split()
        let radio = RadioModel(venue: venue, using: &radioStream)
        let grid = FloorGrid(venue: venue, reach: 0, cellSide: cellMetres)
        let power = Double(CalibrationWalk.txPower)
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

    /// `bare` (a gateway's levels without shadowing, per cell) plus, in each zone's cells, the zone's mean shadowing
    /// (`exact` − `bare` over its cells); outside the zones, `bare`.
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
        }
    }

    /// The calibration as the YAML file hub.yaml's `calibration` reads: one line per gateway's levels.
    public static func yaml(_ calibration: Calibration, seed: UInt64, shadowing: Shadowing = .exact) -> String {
        guard let map = calibration.map else { return "" }
        func number(_ value: Double) -> String {
            value == value.rounded() ? String(Int(value)) : String(format: "%.1f", value)
        }
        var lines = [
            "# beacon-sim radio-map --seed \(seed)\(shadowing == .exact ? "" : " --shadowing \(shadowing.rawValue)"): "
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
