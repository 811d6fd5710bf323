import ArgumentParser
import BeaconModel
import Foundation
import Simulator

struct RadioMapCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "radio-map",
        abstract: "Write the exact radio map of a run as a calibration file: the hub given the map no walk can better.",
        discussion: """
            Every gateway's mean level at every cell (shadowing, gains, antennas, walls: all the run's radio but the \
            tags' own powers), for the seed's run. hub.yaml's calibration: takes the file. docs/simulator.md.
            """)

    @Argument(help: "The venue file (config/venues/*.yaml).")
    var venue: String

    @Option(help: "Where to write the calibration file (YAML).")
    var out: String

    @Option(help: "Random seed: the radio of `beacon-sim run` with the same seed.")
    var seed: UInt64 = 1

    @Option(help: "Side of the map's cells, metres: the hub's own grid at its default (cellMetres 0.5).")
    var cellMetres: Double = 0.5

    @Option(
        help: ArgumentHelp(
            "How much of the run's shadowing the map holds: exact (all), zone-mean (each zone's mean per gateway, none "
                + "outside the zones: the limit of calibrating by zones), none (the true geometry alone), "
                + "engine-zone-mean (the hub's own geometry at --exponent plus each zone's mean difference of the exact "
                + "map to it: a walk by zones measured exactly).",
            valueName: "exact|zone-mean|none|engine-zone-mean"))
    var shadowing: ExactRadioMap.Shadowing = .exact

    @Option(
        help: ArgumentHelp(
            "With --shadowing engine-zone-mean: the hub's path-loss exponent (the one its replay ends with; default "
                + "the hub's default setting)."))
    var exponent: Double?

    func validate() throws {
        guard cellMetres >= 0.1, cellMetres <= 5 else {
            throw ValidationError("--cell-metres \(cellMetres): give 0.1 to 5 metres (the hub's cells are 0.5)")
        }
        if let exponent {
            guard shadowing == .engineZoneMean else {
                throw ValidationError("--exponent is for --shadowing engine-zone-mean only")
            }
            guard (1...6).contains(exponent) else {
                throw ValidationError("--exponent \(exponent): give 1 to 6 (as hub.yaml's pathLossExponent)")
            }
        }
    }

    /// The exponent the map's hub geometry takes.
    var hubExponent: Double { exponent ?? ExactRadioMap.hubExponent }

    func run() throws {
        let loaded = try loadVenueFile(venue)
        let calibration = ExactRadioMap.calibration(
            venue: loaded, seed: seed, cellMetres: cellMetres, created: Date().timeIntervalSince1970.rounded(.down),
            shadowing: shadowing, exponent: hubExponent)
        do {
            try ExactRadioMap.yaml(calibration, seed: seed, shadowing: shadowing, exponent: hubExponent).write(
                toFile: out, atomically: true, encoding: .utf8)
        } catch {
            printError("cannot write \(out) (\(error.localizedDescription)): check the folder exists and is writable")
            throw ExitCode(73)
        }
        let map = calibration.map
        let kind = shadowing == .exact ? "exact" : shadowing.rawValue
        print(
            "beacon-sim: \(kind) radio map of \(loaded.site), seed \(seed): \(loaded.gateways.count) gateways over"
                + " \(map?.columns ?? 0) × \(map?.rows ?? 0) cells of \(cellMetres) m → \(out)")
    }
}

extension ExactRadioMap.Shadowing: ExpressibleByArgument {}
