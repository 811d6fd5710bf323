import BrokerTestSupport
import Foundation
import Testing

/// The hub, the broker, the database and a gateway's path broken under the simulated museum's load: killed, stopped,
/// cut off, its disk filled, a standby taking over. Nothing acknowledged may be lost, nothing committed twice. One of
/// the museum round's two lanes (MuseumSuite); HubServiceTests is the other.
@Suite(.serialized) struct HubFaultTests: MuseumSuite {
    let temporaryDirectory: TemporaryDirectory

    init() throws {
        temporaryDirectory = try TemporaryDirectory(prefix: "hub-faults")
    }
}
