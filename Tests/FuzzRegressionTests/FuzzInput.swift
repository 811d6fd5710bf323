import BeaconDecoding
import BeaconModel

/// What the fuzzer feeds (Tests/Fuzz/Harness.swift, scripts/fuzz.sh) and the regression tests replay: the first byte
/// picks the parser, the rest is its input. Every parser must return or throw its own error for any input — a trap,
/// an out-of-bounds read or a hang is a bug.
enum FuzzInput {
    static let parsers = ["advertising data", "HCI event", "btsnoop capture", "MQTT payload", "sighting line"]

    static func run(_ input: [UInt8]) {
        guard let selector = input.first else { return }
        let bytes = Array(input.dropFirst())
        switch Int(selector) % parsers.count {
        case 0:
            _ = try? ADStructure.parse(bytes)
            _ = try? BeaconDecoder.decode(bytes)
        case 1:
            decodeEvent(bytes)
        case 2:
            if let capture = try? BTSnoopCapture(bytes: bytes) {
                for event in capture.hciEvents() { decodeEvent(event.event) }
            }
        case 3:
            // The hub's decoding of what gateways and hubs publish.
            _ = try? ContractCoding.decode(SightingBatch.self, from: bytes)
            _ = try? ContractCoding.decode(GatewayStatus.self, from: bytes)
            _ = try? ContractCoding.decode(Acknowledgement.self, from: bytes)
            _ = try? ContractCoding.decode(TagState.self, from: bytes)
            _ = try? ContractCoding.decode(ZoneEvent.self, from: bytes)
            _ = try? ContractCoding.decode(HubClaim.self, from: bytes)
        default:
            _ = try? ContractCoding.decode(SightingLine.self, from: bytes)
        }
    }

    /// The report path, and the agent's event path (`SightingPipeline.process(event:at:into:)`, which walks the
    /// event's bytes in place), which must agree on any input: a difference stops the fuzzer like a crash.
    static func decodeEvent(_ event: [UInt8]) {
        var byEvents = SightingPipeline(regions: [])
        var sightings: [Sighting] = []
        let outcome = byEvents.process(event: event, at: 0, into: &sightings)
        let reports: [AdvertisingReport]?
        do {
            reports = try HCIEventParser.advertisingReports(inEvent: event)
        } catch {
            precondition(outcome == .malformed, "event path: \(outcome) for a malformed event")
            return
        }
        guard let reports else {
            precondition(outcome == .notAdvertising, "event path: \(outcome) for another event")
            return
        }
        precondition(outcome == .reports(reports.count), "event path: \(outcome) for \(reports.count) reports")
        var byReports = SightingPipeline(regions: [])
        var expected: [Sighting] = []
        for report in reports {
            _ = report.addressString
            _ = try? BeaconDecoder.decode(report.data)
            expected += byReports.process(report, at: 0)
        }
        precondition(sightings == expected, "event path: other sightings than the report path")
        precondition(byEvents.counters == byReports.counters, "event path: other counters than the report path")
    }

    /// Valid inputs of every kind, to start the fuzzer from (scripts/fuzz.sh writes them to the corpus when it is
    /// empty).
    static func seeds() -> [[UInt8]] {
        let now = 1_800_000_000.0
        var seeds: [[UInt8]] = []
        let beacons = [
            "ibeacon:e2c56db5-dffb-48d2-b060-d0f5a71096e0:1:2", "eddystone-uid:edd1ebeac04e5defa017:0123456789ab",
            "altbeacon:e2c56db5-dffb-48d2-b060-d0f5a71096e0:1:2",
        ]
        for beacon in beacons {
            guard let data = AdvertisementEncoder.advertisingData(beacon: beacon, txPower: -59) else { continue }
            seeds.append([0] + data)
            let event = BTSnoopWriter.advertisingReportEvent(
                address: [0xC4, 0x7C, 0x8D, 0x6A, 0x12, 0x34], rssi: -63, data: data)
            seeds.append([1] + event)
            var writer = BTSnoopWriter()
            writer.appendEvent(event, at: now)
            writer.appendEvent(event, at: now + 1)
            seeds.append([2] + writer.bytes)
        }
        let batch = SightingBatch(
            gateway: "gw-1", boot: "boot-1", seq: 1, sent: now, clockSynced: true,
            sightings: [Sighting(t: now, beacon: beacons[0], rssi: -60, txPower: -59)])
        if let payload = try? ContractCoding.encode(batch) { seeds.append([3] + payload) }
        let ack = Acknowledgement(gateway: "gw-1", t: now, acks: [Acknowledgement.Entry(boot: "boot-1", seq: 7)])
        if let payload = try? ContractCoding.encode(ack) { seeds.append([3] + payload) }
        let event = ZoneEvent(type: .enter, tag: "visitor-1", zone: "hall", t: now, confidence: 0.9, reason: "seed")
        if let payload = try? ContractCoding.encode(event) { seeds.append([3] + payload) }
        let line = SightingLine(t: now, gateway: "gw-1", beacon: beacons[1], rssi: -70)
        if let payload = try? ContractCoding.encode(line) { seeds.append([4] + payload) }
        return seeds
    }
}
