import BeaconMQTT
import BeaconModel
import BrokerTestSupport
import Foundation

/// What the two suites of the museum round share: `beacon-hub run` and the simulator's agents as programs against a
/// real mosquitto, the hub's configuration, the ledger checks. Each suite is serialized (two museums of one suite at
/// once would also share its temporary folder's files), and the two run side by side: their tests wait at the clock's
/// pace, so the machine has room for two (scripts/test.sh runs them as the third round).
protocol MuseumSuite {
    /// Deleted with the suite's instance, which Swift Testing drops once the test has ended, pass or fail.
    var temporaryDirectory: TemporaryDirectory { get }
}

extension MuseumSuite {
    static var root: URL {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
    }

    var directory: URL { temporaryDirectory.url }

    static func decode<T: Decodable>(_ type: T.Type, _ messages: [MQTTMessage]) -> [T] {
        messages.compactMap { try? ContractCoding.decode(type, from: $0.payload) }
    }

    /// Waits for the hub's periodic status carrying counts that satisfy `predicate`.
    func ingest(
        _ statuses: MessageCollector, within timeout: Duration = .seconds(10),
        where predicate: @escaping @Sendable (HubStatus.Ingest) -> Bool
    ) async -> HubStatus.Ingest? {
        let message = await statuses.first(within: timeout) { message in
            (try? ContractCoding.decode(HubStatus.self, from: message.payload))?.ingest.map(predicate) ?? false
        }
        return message.flatMap { try? ContractCoding.decode(HubStatus.self, from: $0.payload) }?.ingest
    }
}
