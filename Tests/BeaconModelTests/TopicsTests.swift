import BeaconModel
import Testing

@Suite struct TopicsTests {
    let topics = Topics(root: "beacontracker", site: "museum-1")

    @Test func everyGatewayTopicHasTheGatewayAsOneLevel() {
        for topic in [
            topics.sightings("gw-3"), topics.gatewayStatus("gw-3"), topics.acknowledgement("gw-3"),
        ] {
            #expect(topic.split(separator: "/")[3] == "gw-3")
            #expect(topics.gateway(inTopic: topic) == "gw-3")
        }
    }

    @Test func topicsMatchTheContract() {
        #expect(topics.sightings("gw-3") == "beacontracker/museum-1/gateways/gw-3/sightings")
        #expect(topics.acknowledgement("gw-3") == "beacontracker/museum-1/gateways/gw-3/ack")
        #expect(topics.tagState("visitor-017") == "beacontracker/museum-1/tags/visitor-017/state")
        #expect(topics.zoneOccupancy("hall") == "beacontracker/museum-1/zones/hall/occupancy")
        #expect(topics.events(.stayed) == "beacontracker/museum-1/events/stayed")
        #expect(topics.hubStatus == "beacontracker/museum-1/hub/status")
        #expect(topics.allSightings == "beacontracker/museum-1/gateways/+/sightings")
    }

    @Test func foreignTopicsHaveNoGateway() {
        #expect(topics.gateway(inTopic: "beacontracker/other/gateways/gw-3/status") == nil)
        #expect(topics.gateway(inTopic: "beacontracker/museum-1/gateways/gw-3") == nil)
        #expect(topics.gateway(inTopic: "beacontracker/museum-1/gateways/a+b/status") == nil)
    }

    @Test(arguments: ["", "a/b", "a+b", "#", "ü", String(repeating: "x", count: 65), "a b"])
    func rejectsIdsThatCannotBeATopicLevel(raw: String) {
        #expect(GatewayID(rawValue: raw) == nil)
    }

    @Test(arguments: ["gw-1", "A.b_c:d-9", String(repeating: "x", count: 64)])
    func acceptsContractIds(raw: String) {
        #expect(GatewayID(rawValue: raw)?.rawValue == raw)
    }
}
