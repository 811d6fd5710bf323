import ArgumentParser
import BeaconConfig
import Foundation
import Simulator

/// `beacon-sim venue --random --seed S [--family F] [--radio R] [--out FILE]`: writes a venue drawn from a seed.
struct VenueCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "venue",
        abstract: "Write a random venue file drawn from a seed (the same seed gives the same file).",
        discussion:
            "Families: \(RandomVenue.Family.allCases.map(\.rawValue).joined(separator: ", ")). docs/simulator.md.")

    @Flag(help: "Draw the venue at random (the only kind this command makes so far).")
    var random = false

    @Option(help: "Random seed: the same seed (and family) gives the same file.")
    var seed: UInt64

    @Option(help: "Force the family instead of letting the seed choose it.")
    var family: String?

    @Option(help: "The radio: standard (the simulator's own) or foreign (one the engine does not model).")
    var radio = RandomVenue.Radio.standard.rawValue

    @Option(help: "Where to write the venue file (default: standard output).")
    var out: String?

    @Flag(
        help: ArgumentHelp(
            "Name each gateway's own beacon (beacon:), the ids `beacon-sim run --gateway-beacons` advertises, so that "
                + "`beacon-hub replay` keeps them as links."))
    var gatewayBeacons = false

    func validate() throws {
        guard random else { throw ValidationError("give --random: only random venues can be made so far") }
        if let family, RandomVenue.Family(rawValue: family) == nil {
            let known = RandomVenue.Family.allCases.map(\.rawValue).joined(separator: ", ")
            throw ValidationError("--family \(family): expected one of \(known)")
        }
        if RandomVenue.Radio(rawValue: radio) == nil {
            let known = RandomVenue.Radio.allCases.map(\.rawValue).joined(separator: ", ")
            throw ValidationError("--radio \(radio): expected one of \(known)")
        }
    }

    func run() throws {
        let drawn = RandomVenue.generate(
            seed: seed, family: family.flatMap(RandomVenue.Family.init(rawValue:)),
            radio: RandomVenue.Radio(rawValue: radio) ?? .standard)
        let text = gatewayBeacons ? GatewayBeacons.namingBeacons(inVenueFile: drawn.yaml) : drawn.yaml
        do {
            _ = try VenueLoader.decode(text, file: out ?? "<stdout>")
        } catch {
            printError("the drawn venue does not load (a generator bug; please report the seed): \(error)")
            throw ExitCode(70)
        }
        guard let out else {
            print(text, terminator: "")
            return
        }
        do {
            try text.write(toFile: out, atomically: true, encoding: .utf8)
        } catch {
            printError("cannot write \(out): \(error.localizedDescription); check the folder exists and is writable")
            throw ExitCode(73)
        }
        print(
            "beacon-sim: \(drawn.family.rawValue) venue (seed \(seed)): \(drawn.zones) zones, \(drawn.gateways) gateways,"
                + " \(drawn.tags) tags → \(out)")
    }
}
