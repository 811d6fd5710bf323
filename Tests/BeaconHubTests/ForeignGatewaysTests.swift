import BeaconHub
import BeaconModel
import Foundation
import Testing

/// ESPresense and OpenMQTTGateway readings, with payloads as those projects publish them.
///
/// Sources: OpenMQTTGateway's documentation, docs/use/ble.md ("presenceUseBeaconUuid", "pubBeaconUuidForTopic" and
/// "pubadvdata" examples); ESPresense's device topic `espresense/devices/<id>/<room>` as documented by Home
/// Assistant's mqtt_room integration, with payloads of ESPresense 3.x (`rssi@1m`, filtered `rssi` with decimals,
/// `rssiVar`, `int`) and 2.x (`idType`, `raw`, `speed`, `interval`) as quoted in public projects built on it.
@Suite struct ForeignGatewaysTests {
    static let decoder = ForeignSightingDecoder(
        espresense: try! decode(ESPresenseSettings.self, #"{"rooms":{"kitchen":"gw-kitchen"}}"#),
        openMQTTGateway: try! decode(
            OpenMQTTGatewaySettings.self, #"{"prefix":"home","gateways":{"OpenMQTTGateway":"gw-hall"}}"#))

    static func decode<T: Decodable>(_ type: T.Type, _ json: String) throws -> T {
        try JSONDecoder().decode(type, from: Data(json.utf8))
    }

    struct Case: Sendable, CustomTestStringConvertible {
        var topic: String
        var payload: String
        var beacon: String
        var gateway: GatewayID
        var rssi: Int
        var txPower: Int?
        var testDescription: String { topic }
    }

    static let readings: [Case] = [
        Case(
            topic: "espresense/devices/iBeacon:1d4b2e16-481e-4579-8b35-ffc32e4a1758-100-1/kitchen",
            payload: #"""
                {"mac":"5a3f1c9d0e42","id":"iBeacon:1d4b2e16-481e-4579-8b35-ffc32e4a1758-100-1","name":"pixel-8",
                 "rssi@1m":-59,"rssi":-72.35,"rxAdj":20,"rssiVar":1.84,"distance":3.42,"var":0.21,"int":1032}
                """#,
            beacon: "ibeacon:1d4b2e16-481e-4579-8b35-ffc32e4a1758:100:1", gateway: "gw-kitchen", rssi: -72,
            txPower: -59),
        Case(
            topic: "espresense/devices/iBeacon:426c7565-4368-6172-6d42-6561636f6e73-3838-4949/gw-office",
            payload: #"""
                {"mac":"dd8800003777","id":"iBeacon:426c7565-4368-6172-6d42-6561636f6e73-3838-4949",
                 "rssi@1m":-59,"rssi":-81.10,"rxAdj":0,"rssiVar":7.42,"distance":6.58,"var":4.00,"int":2028}
                """#,
            beacon: "ibeacon:426c7565-4368-6172-6d42-6561636f6e73:3838:4949", gateway: "gw-office", rssi: -81,
            txPower: -59),
        Case(
            topic: "espresense/devices/bc7e8b2e9a71/kitchen",
            payload: #"""
                {"id":"bc7e8b2e9a71","idType":55,"rssi@1m":-71,"rssi":-95,"raw":4.85,"distance":5.18,"speed":-0.02,
                 "mac":"bc7e8b2e9a71","interval":2800}
                """#,
            beacon: "espresense:bc7e8b2e9a71", gateway: "gw-kitchen", rssi: -95, txPower: -71),
        Case(
            topic: "home/OpenMQTTGateway/BTtoMQTT/608757 4C9BC2".replacingOccurrences(of: " ", with: ""),
            payload: #"""
                {"id":"60:87:57:4C:9B:C2","mac_type":1,"rssi":-78,"distance":7.85288,"brand":"GENERIC","model":"iBeacon",
                 "model_id":"IBEACON","mfid":"4c00","uuid":"1de4b189115e45f6b44e509352269977","major":0,"minor":0,
                 "txpower":-66}
                """#,
            beacon: "ibeacon:1de4b189-115e-45f6-b44e-509352269977:0:0", gateway: "gw-hall", rssi: -78, txPower: -66),
        Case(
            topic: "home/OpenMQTTGateway/BTtoMQTT/1de4b189115e45f6b44e509352269977",
            payload: #"""
                {"id":"7B:63:C6:82:DC:57","mac_type":1,"rssi":-83,"brand":"GENERIC","model":"iBeacon",
                 "model_id":"IBEACON","mfid":"4c00","uuid":"1de4b189115e45f6b44e509352269977","major":0,"minor":0,
                 "txpower":-66}
                """#,
            beacon: "ibeacon:1de4b189-115e-45f6-b44e-509352269977:0:0", gateway: "gw-hall", rssi: -83, txPower: -66),
        // With raw advertisement data, our own decoder names the beacon (here an iBeacon, major 1, minor 7).
        Case(
            topic: "home/gw-store/BTtoMQTT/C47C8D6A1234",
            payload: #"""
                {"id":"C4:7C:8D:6A:12:34","mac_type":0,"rssi":-67,
                 "manufacturerdata":"4c000215f7826da64fa24e988024bc5b71e0893e00010007c5"}
                """#,
            beacon: "ibeacon:f7826da6-4fa2-4e98-8024-bc5b71e0893e:1:7", gateway: "gw-store", rssi: -67, txPower: -59),
        Case(
            topic: "home/OpenMQTTGateway/BTtoMQTT/112233445566",
            payload: #"""
                {"id":"11:22:33:44:55:66","mac_type":0,"adv_type":0,"name":"Qingping Motion & Light","rssi":-93,
                 "servicedata":"88121122334455660201520f0126090403000000","servicedatauuid":"0xfdcd","brand":"Qingping",
                 "model":"Motion & Light","model_id":"CGPR1","lux":3,"batt":82}
                """#,
            beacon: "mac:11:22:33:44:55:66", gateway: "gw-hall", rssi: -93, txPower: nil),
    ]

    @Test(arguments: readings) func aReadingBecomesASighting(_ reading: Case) {
        let outcome = Self.decoder.decode(topic: reading.topic, payload: Array(reading.payload.utf8), receivedAt: 1000)
        guard case .sighting(let sighting) = outcome else {
            Issue.record("not a sighting: \(outcome)")
            return
        }
        #expect(sighting.beacon == reading.beacon)
        #expect(sighting.gateway == reading.gateway)
        #expect(sighting.rssi == reading.rssi)
        #expect(sighting.txPower == reading.txPower)
        #expect(sighting.t == 1000)
    }

    @Test(arguments: [
        ("espresense/devices/x/kitchen", "not json", "malformed"),
        ("espresense/devices/x/kitchen", #"{"id":"x","rssi":"-70"}"#, "malformed"),
        ("espresense/devices/x/kitchen", #"{"id":"x","rssi":true}"#, "malformed"),
        ("espresense/devices/x/kitchen", #"{"id":"x","rssi":-400}"#, "malformed"),
        ("espresense/devices/x/kitchen", #"["rssi",-70]"#, "malformed"),
        ("espresense/devices/x/bad room!", #"{"id":"x","rssi":-70}"#, "unknown-gateway"),
        ("home/OMG 2/BTtoMQTT/AABBCCDDEEFF", #"{"id":"AA:BB:CC:DD:EE:FF","rssi":-70}"#, "unknown-gateway"),
        ("home/OpenMQTTGateway/BTtoMQTT/AABBCCDDEEFF", #"{"id":"AA:BB:CC:DD:EE:FF"}"#, "malformed"),
    ])
    func badReadingsAreRejectedWithTheirReason(topic: String, payload: String, code: String) {
        let outcome = Self.decoder.decode(topic: topic, payload: Array(payload.utf8), receivedAt: 1000)
        guard case .rejected(let got, let message) = outcome else {
            Issue.record("not rejected: \(outcome)")
            return
        }
        #expect(got == code, "\(message)")
        #expect(!message.isEmpty)
    }

    @Test func oversizedPayloadsAreRejected() {
        let outcome = Self.decoder.decode(
            topic: "espresense/devices/x/kitchen", payload: [UInt8](repeating: 0x20, count: 300_000), receivedAt: 0)
        #expect(outcome == .rejected(code: "too-large", message: "payload of 300000 bytes exceeds 256 KiB"))
    }

    @Test func otherTopicsAndNonBeaconMessagesAreIgnored() {
        for topic in ["home/OpenMQTTGateway/SYStoMQTT", "espresense/rooms/kitchen/telemetry", "elsewhere/x/y"] {
            let outcome = Self.decoder.decode(topic: topic, payload: Array("{}".utf8), receivedAt: 0)
            guard case .ignored = outcome else {
                Issue.record("\(topic): \(outcome)")
                continue
            }
        }
        let noIdentity = Self.decoder.decode(
            topic: "home/OpenMQTTGateway/BTtoMQTT/x", payload: Array(#"{"rssi":-70}"#.utf8), receivedAt: 0)
        guard case .ignored = noIdentity else {
            Issue.record("\(noIdentity)")
            return
        }
    }

    @Test func filtersFollowTheConfiguredRootAndPrefix() throws {
        let decoder = ForeignSightingDecoder(
            espresense: try Self.decode(ESPresenseSettings.self, #"{"root":"site/esp"}"#),
            openMQTTGateway: try Self.decode(OpenMQTTGatewaySettings.self, #"{"prefix":"omg"}"#))
        #expect(decoder.subscriptionFilters == ["site/esp/devices/+/+", "omg/+/BTtoMQTT/+"])
        #expect(throws: DecodingError.self) { try Self.decode(ESPresenseSettings.self, #"{"root":"a/#"}"#) }
    }
}
