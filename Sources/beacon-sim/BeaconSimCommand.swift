import ArgumentParser
import BeaconModel

@main
struct BeaconSimCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "beacon-sim",
        abstract: "BeaconTracker venue simulator: gateways, zones and walking tags with ground truth.",
        discussion: """
            The simulator's commands (run, score) arrive with the simulator issue; docs/architecture.md lists
            what exists today.
            """,
        version: BeaconTrackerVersion.current
    )
}
