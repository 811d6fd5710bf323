import BeaconDecoding
import BeaconModel
import Testing

/// `SightingPipeline.process(event:at:into:)` (the agent's path: reports walked in the event's bytes, payloads seen
/// before looked up, nothing allocated in the common case) against the report path it stands for:
/// `HCIEventParser.advertisingReports(inEvent:)`, then `process(_:at:)` for each report.
@Suite struct SightingPipelineEventTests {
    /// A small deterministic generator (xorshift64*), so that a failure repeats.
    struct Random {
        var state: UInt64
        mutating func next() -> UInt64 {
            state ^= state >> 12
            state ^= state << 25
            state ^= state >> 27
            return state &* 2_685_821_657_736_338_717
        }
        mutating func below(_ bound: Int) -> Int { Int(next() % UInt64(bound)) }
        mutating func bytes(_ count: Int) -> [UInt8] { (0..<count).map { _ in UInt8(truncatingIfNeeded: next()) } }
    }

    static let uuid = bytes(fromHex: "e2c56db5dffb48d2b060d0f5a71096e0")!
    static let namespace = bytes(fromHex: "edd1ebeac04e5defa017")!

    /// Advertising data of every kind the agent meets: beacons in and out of the region, TLM with changing counters,
    /// URLs, look-alikes, phones, broken framing and noise.
    static func payload(_ random: inout Random) -> [UInt8] {
        let tag = UInt8(random.below(6))
        switch random.below(12) {
        case 0, 1:
            return [0x02, 0x01, 0x06, 0x1A, 0xFF, 0x4C, 0x00, 0x02, 0x15] + uuid + [0, 1, 0, tag, 0xC5]
        case 2:
            return [0x1A, 0xFF, 0x4C, 0x00, 0x02, 0x15] + random.bytes(16) + [0, 1, 0, tag, 0xC5]
        case 3:
            return [0x03, 0x03, 0xAA, 0xFE, 0x15, 0x16, 0xAA, 0xFE, 0x00, 0xE8] + namespace + [0, 0, 0, 0, 0, tag]
        case 4:
            // TLM: battery, temperature, advert count and uptime change every time.
            return [0x03, 0x03, 0xAA, 0xFE, 0x11, 0x16, 0xAA, 0xFE, 0x20, 0x00] + random.bytes(12)
        case 5:
            return [0x03, 0x03, 0xAA, 0xFE, 0x0E, 0x16, 0xAA, 0xFE, 0x10, 0xEE, 0x03]
                + Array("example".utf8) + [0x00 + tag % 2]
        case 6:
            return [0x1B, 0xFF, 0x18, 0x01, 0xBE, 0xAC] + uuid + [0, 1, 0, tag, 0xC5, 0x00]
        case 7:
            return [0x02, 0x01, 0x1A, 0x0A, 0xFF, 0x4C, 0x00, 0x10, 0x05, 0x0B, 0x1C, 0x6D, 0x9E, 0x2F]
        case 8:
            // Look-alikes: an iBeacon prefix too short, an Eddystone frame of the wrong size.
            return random.below(2) == 0
                ? [0x10, 0xFF, 0x4C, 0x00, 0x02, 0x15] + random.bytes(10)
                : [0x06, 0x16, 0xAA, 0xFE, 0x00, 0xE8, 0x01]
        case 9:
            // Broken framing: a structure running past the end.
            return [0x02, 0x01, 0x06, 0x1A, 0xFF, 0x4C, 0x00, 0x02, 0x15] + uuid.prefix(random.below(16))
        case 10:
            return random.bytes(random.below(31))
        default:
            return []
        }
    }

    static func event(_ random: inout Random) -> [UInt8] {
        let extended = random.below(4) == 0
        let count = random.below(5) == 0 ? 2 + random.below(2) : 1
        var parameters: [UInt8] = [extended ? 0x0D : 0x02, UInt8(count)]
        for _ in 0..<count {
            let data = payload(&random)
            let address: [UInt8] = [UInt8(random.below(8)), 0, 0, 0, 0xAA, 0xC0]  // least significant first
            let rssi: UInt8 = random.below(10) == 0 ? 127 : UInt8(bitPattern: Int8(-30 - random.below(60)))
            if extended {
                parameters += [0x13, 0x00, 0x01] + address + [0x01, 0x00, 0xFF]
                parameters += [random.below(5) == 0 ? 127 : 0xF4, rssi, 0, 0, 0, 0, 0, 0, 0, 0, 0, UInt8(data.count)]
                parameters += data
            } else {
                parameters += [UInt8(random.below(5)), 0x01] + address + [UInt8(data.count)] + data + [rssi]
            }
        }
        var event = [0x3E, UInt8(truncatingIfNeeded: parameters.count)] + parameters
        switch random.below(20) {
        case 0: event.removeLast(1 + random.below(min(event.count, 4)))  // cut short
        case 1: event[1] &+= 1  // a length that disagrees
        case 2: event[random.below(event.count)] = UInt8(truncatingIfNeeded: random.next())  // one byte flipped
        case 3: event = [0x0E, 0x04, 0x01, 0x0C, 0x20, 0x00]  // a command complete: not advertising
        case 4: event[2] = 0x03  // another LE subevent
        default: break
        }
        return event
    }

    @Test(arguments: [
        [] as [BeaconRegion],
        [BeaconRegion(id: "r", criteria: .iBeacon(uuid: uuid, major: 1, minor: nil))],
        [
            BeaconRegion(id: "e", criteria: .eddystone(namespace: namespace, instance: nil)),
            BeaconRegion(id: "a", criteria: .altBeacon(id1: uuid, id2: nil, id3: nil)),
        ],
    ])
    func eventPathGivesTheReportPathsSightingsAndCounters(regions: [BeaconRegion]) {
        var random = Random(state: 0x9E37_79B9_7F4A_7C15)
        var byReports = SightingPipeline(regions: regions)
        var byEvents = SightingPipeline(regions: regions)
        var expected: [Sighting] = []
        var found: [Sighting] = []
        var outcomes: [SightingPipeline.EventOutcome: Int] = [:]
        for index in 0..<30_000 {
            let event = Self.event(&random)
            let time = 1_700_000_000 + Double(index) * 0.01
            let outcome: SightingPipeline.EventOutcome
            do {
                if let reports = try HCIEventParser.advertisingReports(inEvent: event) {
                    for report in reports { expected += byReports.process(report, at: time) }
                    outcome = .reports(reports.count)
                } else {
                    outcome = .notAdvertising
                }
            } catch {
                outcome = .malformed
            }
            let got = byEvents.process(event: event, at: time, into: &found)
            #expect(got == outcome, "event \(index): \(event)")
            if got != outcome { return }
            outcomes[outcome, default: 0] += 1
        }
        #expect(found == expected)
        #expect(byEvents.counters == byReports.counters)
        // The mix reached every branch: sightings, TLM attached to an identity, and every way of being dropped.
        let counters = byEvents.counters
        #expect(counters.sightings > 1_000 && counters.malformed > 100 && counters.notBeacons > 1_000)
        #expect(counters.noRSSI > 100 && counters.telemetryWithoutIdentity > 10)
        #expect(found.contains { $0.kind == .eddystoneTLM })
        #expect(!regions.isEmpty || found.contains { $0.extras?.url != nil })
        #expect(regions.isEmpty || counters.outsideRegions > 1_000)
        #expect((outcomes[.malformed] ?? 0) > 500 && (outcomes[.notAdvertising] ?? 0) > 500)
        #expect(outcomes.keys.contains(.reports(2)) && outcomes.keys.contains(.reports(3)))
    }

    /// A phone's advertisement and a beacon seen before cost no report: the same sightings as the first time.
    @Test func aRepeatedBeaconGivesTheSameSightingEachTime() {
        var pipeline = SightingPipeline(regions: [])
        let data: [UInt8] = [0x1A, 0xFF, 0x4C, 0x00, 0x02, 0x15] + Self.uuid + [0, 1, 0, 2, 0xC5]
        let event = BTSnoopWriter.advertisingReportEvent(
            address: [0xC0, 0xAA, 0, 0, 0, 7], random: true, rssi: -61, data: data)
        var sightings: [Sighting] = []
        for second in 0..<3 {
            #expect(pipeline.process(event: event, at: Double(second), into: &sightings) == .reports(1))
        }
        #expect(sightings.map(\.t) == [0, 1, 2])
        #expect(Set(sightings.map(\.beacon)) == ["ibeacon:e2c56db5-dffb-48d2-b060-d0f5a71096e0:1:2"])
        #expect(Set(sightings.map(\.address)) == ["c0:aa:00:00:00:07"])
        #expect(sightings.allSatisfy { $0.rssi == -61 && $0.txPower == -59 && $0.kind == .iBeacon })
        #expect(pipeline.counters.reports == 3 && pipeline.counters.sightings == 3)
    }
}
