import BeaconModel
import Foundation
import Testing

@Suite struct ContractCodingTests {
    @Test func sightingBatchRoundTripsWithContractFieldNames() throws {
        let batch = SightingBatch(
            gateway: "gw-lobby", boot: "b1", seq: 42, sent: 1_700_000_000.5, clockSynced: true,
            sightings: [
                Sighting(
                    t: 1_700_000_000.25, beacon: "ibeacon:f7826da6-4fa2-4e98-8024-bc5b71e0893e:100:7", rssi: -67,
                    txPower: -59, kind: .iBeacon,
                    extras: SightingExtras(tlm: Telemetry(version: 0, batteryMilliVolts: 2900)))
            ])
        let bytes = try ContractCoding.encode(batch)
        let object = try #require(try JSONSerialization.jsonObject(with: Data(bytes)) as? [String: Any])
        #expect(Set(object.keys) == ["version", "gateway", "boot", "seq", "sent", "clockSynced", "sightings"])
        let sighting = try #require((object["sightings"] as? [[String: Any]])?.first)
        #expect(sighting["kind"] as? String == "ibeacon")
        #expect(sighting["txPower"] as? Int == -59)
        #expect(try ContractCoding.decode(SightingBatch.self, from: bytes) == batch)
    }

    @Test func eventLineWritesNullsForMissingZones() throws {
        let event = ZoneEvent(
            type: .alert, tag: nil, zone: nil, t: 12.5, confidence: 1, reason: "gateway silent",
            code: "gateway-offline",
            gateway: "gw-2")
        let line = try ContractCoding.encodeLine(event)
        #expect(line.contains("\"tag\":null"))
        #expect(line.contains("\"zone\":null"))
        #expect(line.contains("\"previousZone\":null"))
        #expect(!line.contains("\n"))
        #expect(try ContractCoding.decode(ZoneEvent.self, from: Array(line.utf8)) == event)
    }

    /// A `gateway-moved` alert's `estimatedPosition` is written when the links place the gateway, and left out
    /// otherwise, so that no other event changes shape.
    @Test func aMovedGatewaysAlertCarriesWhereItIsAndOthersDoNot() throws {
        let moved = ZoneEvent(
            type: .alert, tag: nil, zone: nil, t: 12.5, confidence: 1, reason: "gw-2's links shifted",
            code: "gateway-moved", gateway: "gw-2",
            estimatedPosition: EstimatedPosition(x: 30.5, y: 9.3, withinMetres: 2.9, movedMetres: 15.6))
        let line = try ContractCoding.encodeLine(moved)
        #expect(line.contains(#""estimatedPosition":{"#))
        let object = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
        let place = try #require(object["estimatedPosition"] as? [String: Any])
        #expect(Set(place.keys) == ["x", "y", "withinMetres", "movedMetres"])
        #expect(try ContractCoding.decode(ZoneEvent.self, from: Array(line.utf8)) == moved)
        let offline = ZoneEvent(
            type: .alert, tag: nil, zone: nil, t: 12.5, confidence: 1, reason: "gateway silent",
            code: "gateway-offline", gateway: "gw-2")
        #expect(!(try ContractCoding.encodeLine(offline)).contains("estimatedPosition"))
    }

    @Test func tagStateWritesANullZoneWhileOutsideAndNoLastSeenBeforeAnySighting() throws {
        let state = TagState(
            tag: "visitor-1", beacon: "ibeacon:x:1:2", state: .outside, zone: nil, since: 5, confidence: 0.8,
            lastSeen: nil, gateways: [])
        let line = try ContractCoding.encodeLine(state)
        #expect(line.contains("\"zone\":null"))
        #expect(!line.contains("lastSeen"))
        #expect(try ContractCoding.decode(TagState.self, from: Array(line.utf8)) == state)
        // Readers accept an absent zone too.
        let absent = line.replacingOccurrences(of: "\"zone\":null,", with: "")
        #expect(try ContractCoding.decode(TagState.self, from: Array(absent.utf8)) == state)
    }

    @Test func refusesNewerVersion() {
        let payload = Array(#"{"version":2,"hub":"h","state":"online"}"#.utf8)
        do {
            _ = try ContractCoding.decode(HubStatus.self, from: payload)
            Issue.record("accepted version 2")
        } catch {
            #expect(error.code == .unsupportedVersion)
            #expect(error.message.contains("upgrade"))
        }
    }

    @Test(arguments: [
        (#"not json"#, ContractError.Code.malformed),
        (#"{"hub":"h","state":"online"}"#, .malformed),
        (#"{"version":1,"hub":"h","state":"sleeping"}"#, .malformed),
        (#"{"version":1,"hub":"a/b","state":"online"}"#, .malformed),
    ])
    func refusesBrokenPayloads(payload: String, code: ContractError.Code) {
        do {
            _ = try ContractCoding.decode(HubStatus.self, from: Array(payload.utf8))
            Issue.record("accepted \(payload)")
        } catch {
            #expect(error.code == code)
            #expect(!error.message.isEmpty)
        }
    }

    @Test func refusesOversizedPayload() {
        let payload = [UInt8](repeating: UInt8(ascii: " "), count: ContractCoding.maximumPayloadBytes + 1)
        do {
            _ = try ContractCoding.decode(HubStatus.self, from: payload)
            Issue.record("accepted an oversized payload")
        } catch {
            #expect(error.code == .tooLarge)
        }
    }

    @Test func sightingLineReadsTheDocumentedMinimalForm() throws {
        let line =
            #"{"t": 1700000000.5, "gateway": "gw-1", "beacon": "eddystone-uid:00112233445566778899:aabbccddeeff", "rssi": -80}"#
        let decoded = try ContractCoding.decodeLine(SightingLine.self, from: line)
        #expect(
            decoded
                == SightingLine(
                    t: 1_700_000_000.5, gateway: "gw-1", beacon: "eddystone-uid:00112233445566778899:aabbccddeeff",
                    rssi: -80))
    }

    @Test func unknownFieldsAreIgnored() throws {
        let payload = Array(#"{"version":1,"hub":"h","state":"standby","futureField":[1,2]}"#.utf8)
        #expect(try ContractCoding.decode(HubStatus.self, from: payload).state == .standby)
    }
}
