import BeaconAgent
import BeaconDecoding
import BeaconModel
import Testing

@Suite struct SightingPipelineTests {
    static let uuid = bytes(fromHex: "e2c56db5dffb48d2b060d0f5a71096e0")!
    static let otherUUID = bytes(fromHex: "f7826da64fa24e988024bc5b71e0893e")!

    func iBeacon(_ uuid: [UInt8], major: UInt16, minor: UInt16) -> [UInt8] {
        [0x1A, 0xFF, 0x4C, 0x00, 0x02, 0x15] + uuid + [UInt8(major >> 8), UInt8(major & 0xFF)]
            + [UInt8(minor >> 8), UInt8(minor & 0xFF), 0xC5]
    }

    func report(_ data: [UInt8], address: UInt8 = 1, rssi: Int? = -60) -> AdvertisingReport {
        AdvertisingReport(
            eventType: 3, extended: false, addressType: 1, address: [0xAA, 0, 0, 0, 0, address], rssi: rssi,
            txPower: nil, data: data)
    }

    /// CLBeaconRegion: UUID alone, UUID + major, UUID + major + minor.
    @Test(arguments: [
        (nil as UInt16?, nil as UInt16?, [true, true, true, false]),
        (1, nil, [true, true, false, false]),
        (1, 2, [true, false, false, false]),
    ])
    func iBeaconRegionsFollowCoreLocation(major: UInt16?, minor: UInt16?, expected: [Bool]) {
        let region = BeaconRegion(id: "r", criteria: .iBeacon(uuid: Self.uuid, major: major, minor: minor))
        let candidates = [
            iBeacon(Self.uuid, major: 1, minor: 2), iBeacon(Self.uuid, major: 1, minor: 3),
            iBeacon(Self.uuid, major: 9, minor: 2), iBeacon(Self.otherUUID, major: 1, minor: 2),
        ]
        let matches = candidates.map { data in
            (try? BeaconDecoder.decode(data).frames.first).flatMap { $0 }.map(region.matches) ?? false
        }
        #expect(matches == expected)
    }

    /// The screen that turns phones away before decoding agrees with the decoder: malformed exactly when decoding
    /// throws, and "not a beacon" only where decoding finds no frame. Random AD data around real frames' prefixes.
    @Test func theScreenAgreesWithTheDecoder() {
        var generator = SystemRandomNumberGenerator()
        let prefixes: [[UInt8]] = [
            [0xFF, 0x4C, 0x00, 0x02, 0x15], [0xFF, 0x18, 0x01, 0xBE, 0xAC], [0x16, 0xAA, 0xFE], [0xFF, 0x4C, 0x00],
            [0x09], [0x03, 0xAA, 0xFE],
        ]
        var seen: [BeaconDecoder.Screen: Int] = [:]
        for _ in 0..<20_000 {
            var data: [UInt8] = []
            for _ in 0..<Int.random(in: 0...3, using: &generator) {
                let prefix = prefixes.randomElement(using: &generator)!
                let tail = (0..<Int.random(in: 0...24, using: &generator)).map { _ in
                    UInt8.random(in: 0...255, using: &generator)
                }
                var length = prefix.count + tail.count
                if Int.random(in: 0..<20, using: &generator) == 0 {
                    length += Int.random(in: -3...3, using: &generator)
                }
                data += [UInt8(clamping: max(0, length))] + prefix + tail
            }
            let screen = BeaconDecoder.screen(data)
            seen[screen, default: 0] += 1
            let decoded = try? BeaconDecoder.decode(data)
            #expect((screen == .malformed) == (decoded == nil), "\(data.hexString)")
            if screen == .notBeacon { #expect(decoded?.frames.isEmpty == true, "\(data.hexString)") }
        }
        #expect(seen.count == 3, "every verdict seen: \(seen)")
        let real = bytes(fromHex: "0201061aff4c000215e2c56db5dffb48d2b060d0f5a71096e000010002c5")!
        #expect(BeaconDecoder.screen(real) == .candidate)
        #expect(BeaconDecoder.screen(bytes(fromHex: "02011a0aff4c0010050b1c6d9e2f")!) == .notBeacon)
    }

    @Test func onlyBeaconsInRegionsLeaveTheGateway() {
        var pipeline = SightingPipeline(regions: [
            BeaconRegion(id: "r", criteria: .iBeacon(uuid: Self.uuid, major: 1, minor: nil))
        ])
        let phone = bytes(fromHex: "02011a0aff4c0010050b1c6d9e2f")!
        #expect(pipeline.process(report(iBeacon(Self.uuid, major: 1, minor: 5)), at: 10).count == 1)
        #expect(pipeline.process(report(iBeacon(Self.uuid, major: 2, minor: 5)), at: 10).isEmpty)
        #expect(pipeline.process(report(phone), at: 10).isEmpty)
        #expect(pipeline.process(report(bytes(fromHex: "0201061aff4c00")!), at: 10).isEmpty)
        #expect(pipeline.process(report(iBeacon(Self.uuid, major: 1, minor: 5), rssi: nil), at: 10).isEmpty)
        let counters = pipeline.counters
        #expect(counters.sightings == 1)
        #expect(counters.outsideRegions == 1)
        #expect(counters.notBeacons == 1)
        #expect(counters.malformed == 1)
        #expect(counters.noRSSI == 1)
    }

    @Test func sightingCarriesTheContractFields() throws {
        var pipeline = SightingPipeline(regions: [])
        let sighting = try #require(pipeline.process(report(iBeacon(Self.uuid, major: 1, minor: 2)), at: 42.5).first)
        #expect(sighting.t == 42.5)
        #expect(sighting.beacon == "ibeacon:e2c56db5-dffb-48d2-b060-d0f5a71096e0:1:2")
        #expect(sighting.rssi == -60)
        #expect(sighting.txPower == -59)
        #expect(sighting.kind == .iBeacon)
        #expect(sighting.address == "aa:00:00:00:00:01")
    }

    /// TLM names no beacon: it joins the UID last seen from the same address, and is dropped without one.
    @Test func telemetryJoinsTheIdentityOfItsDevice() throws {
        var pipeline = SightingPipeline(regions: [])
        let uid = bytes(fromHex: "0201060303aafe1516aafe00e8edd1ebeac04e5defa0170123456789ab")!
        let tlm = bytes(fromHex: "0201060303aafe1116aafe20000bb81480000003e800002710")!
        #expect(pipeline.process(report(tlm, address: 7), at: 1).isEmpty)
        #expect(pipeline.counters.telemetryWithoutIdentity == 1)
        _ = pipeline.process(report(uid, address: 7), at: 2)
        let sighting = try #require(pipeline.process(report(tlm, address: 7), at: 3).first)
        #expect(sighting.beacon == "eddystone-uid:edd1ebeac04e5defa017:0123456789ab")
        #expect(sighting.kind == .eddystoneTLM)
        #expect(sighting.txPower == -24 - 41)
        #expect(sighting.extras?.tlm?.batteryMilliVolts == 3000)
        #expect(pipeline.process(report(tlm, address: 8), at: 3).isEmpty)
        // An identity older than two minutes is forgotten.
        #expect(pipeline.process(report(tlm, address: 7), at: 500).isEmpty)
    }

    @Test func batcherClosesOnSizeAndOnDelay() {
        var batcher = SightingBatcher(maxSightings: 3, maxDelay: 0.25)
        let sighting = Sighting(t: 0, beacon: "b", rssi: -1)
        #expect(batcher.add(sighting, now: 0) == nil)
        #expect(batcher.due(now: 0.2) == nil)
        #expect(batcher.add(sighting, now: 0.1) == nil)
        #expect(batcher.add(sighting, now: 0.2)?.count == 3)
        #expect(batcher.add(sighting, now: 1) == nil)
        #expect(batcher.due(now: 1.2) == nil)
        #expect(batcher.due(now: 1.25)?.count == 1)
        #expect(batcher.flush() == nil)
    }
}
