import BeaconMQTT
import BeaconModel
import Foundation

/// One MQTT message as the hub's core takes it: decoded and checked against the contract, off the core's lock.
public enum HubInput: Sendable {
    case batch(SightingBatch)
    case gatewayStatus(GatewayStatus)
    /// A retained acknowledgement (this hub's own before a restart, or the previous active hub's).
    case acknowledgement(Acknowledgement)
    /// A retained tag state, to carry on from.
    case tagState(TagState)
    /// A reading from an ESPresense or OpenMQTTGateway node, already mapped to a gateway of ours.
    case foreign(SightingLine)
    /// Refused: counted under `code` (docs/mqtt.md, "Common rules"), logged at debug level.
    case rejected(code: String, message: String, gateway: GatewayID?)
    /// Nothing to do (an empty retained message, a foreign message that is not a beacon).
    case ignored

    /// Decodes `message` by its topic. Never throws: whatever is wrong becomes `.rejected`.
    public static func decode(
        _ message: MQTTMessage, topics: Topics, foreign: ForeignSightingDecoder?, receivedAt: Double
    ) -> HubInput {
        let topic = message.topic
        let prefix = "\(topics.root)/\(topics.site.rawValue)/"
        guard topic.hasPrefix(prefix) else {
            guard let foreign else { return .ignored }
            switch foreign.decode(topic: topic, payload: message.payload, receivedAt: receivedAt) {
            case .sighting(let sighting): return .foreign(sighting)
            case .ignored: return .ignored
            case .rejected(let code, let why): return .rejected(code: code, message: why, gateway: nil)
            }
        }
        // An empty retained payload clears a topic: "no value", not malformed.
        guard !message.payload.isEmpty else { return .ignored }
        let levels = topic.dropFirst(prefix.count).split(separator: "/", omittingEmptySubsequences: false)
        guard levels.count == 3 else { return .ignored }
        let id = String(levels[1])
        func decoded<T: Decodable>(_ type: T.Type, gateway: GatewayID?) -> Result<T, HubInputError> {
            do {
                return .success(try ContractCoding.decode(type, from: message.payload))
            } catch {
                return .failure(HubInputError(code: error.code.rawValue, message: error.message, gateway: gateway))
            }
        }
        switch (levels[0], levels[2]) {
        case ("gateways", "sightings"):
            let gateway = GatewayID(rawValue: id)
            switch decoded(SightingBatch.self, gateway: gateway) {
            case .failure(let error): return error.input
            case .success(let batch):
                guard batch.gateway == gateway else {
                    return .rejected(
                        code: "gateway-mismatch",
                        message: "batch names gateway \(batch.gateway) but was published on \(topic)", gateway: gateway)
                }
                guard batch.seq >= 1, !batch.boot.isEmpty, batch.sightings.count <= 500 else {
                    return .rejected(
                        code: "malformed",
                        message: "batch \(batch.boot)/\(batch.seq) breaks the contract (seq ≥ 1, a boot id, at most "
                            + "500 sightings; found \(batch.sightings.count))", gateway: gateway)
                }
                return .batch(batch)
            }
        case ("gateways", "status"):
            let gateway = GatewayID(rawValue: id)
            switch decoded(GatewayStatus.self, gateway: gateway) {
            case .failure(let error): return error.input
            case .success(let status):
                guard status.gateway == gateway else {
                    return .rejected(
                        code: "gateway-mismatch", message: "status names gateway \(status.gateway) on \(topic)",
                        gateway: gateway)
                }
                return .gatewayStatus(status)
            }
        case ("gateways", "ack"):
            switch decoded(Acknowledgement.self, gateway: GatewayID(rawValue: id)) {
            case .failure(let error): return error.input
            case .success(let ack): return ack.gateway.rawValue == id ? .acknowledgement(ack) : .ignored
            }
        case ("tags", "state"):
            switch decoded(TagState.self, gateway: nil) {
            case .failure(let error): return error.input
            case .success(let state): return state.tag.rawValue == id ? .tagState(state) : .ignored
            }
        default:
            return .ignored
        }
    }
}

struct HubInputError: Error {
    var code: String
    var message: String
    var gateway: GatewayID?

    var input: HubInput { .rejected(code: code, message: message, gateway: gateway) }
}
