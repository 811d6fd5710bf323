import ArgumentParser
import BeaconDecoding
import BeaconModel
import Foundation

/// A realistic mix of HCI advertising report events: beacons of every kind, phones, and some malformed input.
enum AdvertisementMix {
    static let payloads: [[UInt8]] = [
        "0201061aff4c000215e2c56db5dffb48d2b060d0f5a71096e000010002c5",
        "0201060303aafe1516aafe00e8edd1ebeac04e5defa0170123456789ab",
        "0201060303aafe1116aafe20000bb81480000003e800002710",
        "0201060303aafe1216aafe10ee036578616d706c650074657374",
        "0201061bff1801beace2c56db5dffb48d2b060d0f5a71096e000010002c500",
        "02011a0aff4c0010050b1c6d9e2f",
        "02011a020a0c0bff4c001006131e1a3b5f6c",
        "0201061aff4c00",
    ].map { bytes(fromHex: $0)! }

    /// `count` events, cycling through the payloads and 50 device addresses.
    static func events(_ count: Int) -> [[UInt8]] {
        (0..<count).map { index in
            BTSnoopWriter.advertisingReportEvent(
                address: [0xC0, 0, 0, 0, 0, UInt8(index % 50)], random: index % 2 == 0,
                rssi: Int8(-40 - index % 50), data: payloads[index % payloads.count])
        }
    }
}

/// A shop's air: `beacons` adverts a second from 200 tags (iBeacon, Eddystone-UID and AltBeacon) beside
/// `noise` a second from phones, watches and headphones — Apple Nearby and Handoff, Microsoft and Samsung manufacturer
/// data, Google Fast Pair service data, scan responses with names — from random addresses that change every second.
enum ShopMix {
    static let noisePayloads: [[UInt8]] = [
        "02011a0aff4c0010050b1c6d9e2f",  // Apple Nearby Info
        "02011a020a0c0bff4c001006131e1a3b5f6c",  // Apple, tx power + Nearby
        "02011a0eff4c000c0e00a7a0b3c1d2e3f4a5",  // Apple Handoff
        "1dff0600010920021a9e8e3dbf5c2b7b8c1f6a01c4d3e2f1a0b9c8d7e6f5",  // Microsoft CDP
        "0201041aff7500420401806606a5b4c3d2e1f00f1e2d3c4b5a69788796a5",  // Samsung
        "03032cfe06162cfe00a1b2",  // Google Fast Pair
        "0d0950686f6e65206f6620416e6e",  // scan response: a name
        "0201060cff590001020304050607080a",  // Nordic, another company's sensor
    ].map { bytes(fromHex: $0)! }

    static func beaconPayload(tag: Int) -> [UInt8] {
        let high = UInt8(tag >> 8)
        let low = UInt8(tag & 0xFF)
        switch tag % 3 {
        case 0:
            return bytes(fromHex: "0201061aff4c000215e2c56db5dffb48d2b060d0f5a71096e00001")! + [high, low, 0xC5]
        case 1:
            return bytes(fromHex: "0201060303aafe1516aafe00e8edd1ebeac04e5defa01701234567")! + [high, low]
        default:
            return bytes(fromHex: "0201061bff1801beace2c56db5dffb48d2b060d0f5a71096e00001")! + [high, low, 0xC5, 0x00]
        }
    }

    /// One second's events, interleaved evenly, repeated for `seconds`; each event with its offset in seconds.
    static func events(beacons: Int, noise: Int, seconds: Int) -> [(offset: Double, event: [UInt8])] {
        var events: [(Double, [UInt8])] = []
        let perSecond = beacons + noise
        for second in 0..<seconds {
            for index in 0..<perSecond {
                let offset = Double(second) + Double(index) / Double(perSecond)
                // Beacons spread evenly among the noise.
                let beacon = beacons > 0 && (index * beacons) / perSecond != ((index + 1) * beacons) / perSecond
                let serial = second * perSecond + index
                if beacon {
                    let tag = serial % 200
                    events.append(
                        (
                            offset,
                            BTSnoopWriter.advertisingReportEvent(
                                address: [0xC0, 0, 0, 0, UInt8(tag >> 8), UInt8(tag & 0xFF)], random: true,
                                rssi: Int8(-50 - tag % 40), data: beaconPayload(tag: tag))
                        ))
                } else {
                    // Random addresses, as phones use: up to 2,000 a second, new each second.
                    let device = (serial * 7919) % 2_000
                    let payload = noisePayloads[serial % noisePayloads.count]
                    events.append(
                        (
                            offset,
                            BTSnoopWriter.advertisingReportEvent(
                                address: [
                                    0x4A, 0x11, UInt8(second & 0xFF), 0, UInt8(device >> 8), UInt8(device & 0xFF),
                                ],
                                random: true, eventType: payload[1] == 0x09 ? 0x04 : 0x00,
                                rssi: Int8(-60 - device % 35),
                                data: payload)
                        ))
                }
            }
        }
        return events
    }
}

struct DecodeBench: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "decode",
        abstract: "Decode throughput on one core: HCI event → beacon frames → region filter, beside framing alone.")

    @Option(help: "Events per run.")
    var events = 400_000

    func run() {
        let input = AdvertisementMix.events(events)
        let region = BeaconRegion(
            id: "r",
            criteria: .iBeacon(uuid: bytes(fromHex: "e2c56db5dffb48d2b060d0f5a71096e0")!, major: nil, minor: nil))
        // Baseline: what any HCI reader must do anyway — split the event into reports and AD structures.
        let framing = measure(input) { event in
            var structures = 0
            for report in (try? HCIEventParser.advertisingReports(inEvent: event)) ?? [] {
                structures += (try? ADStructure.parse(report.data).count) ?? 0
            }
            return structures
        }
        var pipeline = SightingPipeline(regions: [region])
        let full = measure(input) { event in
            var sightings = 0
            for report in (try? HCIEventParser.advertisingReports(inEvent: event)) ?? [] {
                sightings += pipeline.process(report, at: 0).count
            }
            return sightings
        }
        // The agent's path: reports walked in the event's bytes, payloads seen before looked up.
        var eventPipeline = SightingPipeline(regions: [region])
        var sightings: [Sighting] = []
        sightings.reserveCapacity(input.count)
        let eventPath = measure(input) { event in
            sightings.removeAll(keepingCapacity: true)
            _ = eventPipeline.process(event: event, at: 0, into: &sightings)
            return sightings.count
        }
        // A shop's phones and headphones alone, and its tags alone, through the agent's path.
        let shop = ShopMix.events(beacons: 1_000, noise: 5_000, seconds: max(1, events / 6_000)).map(\.event)
        var noise: [[UInt8]] = []
        var beacons: [[UInt8]] = []
        for event in shop {
            let reports = (try? HCIEventParser.advertisingReports(inEvent: event)) ?? nil
            if reports?.allSatisfy({ BeaconDecoder.screen($0.data) != .candidate }) ?? false {
                noise.append(event)
            } else {
                beacons.append(event)
            }
        }
        var shopPipeline = SightingPipeline(regions: [])
        let rejected = measure(noise) { event in
            sightings.removeAll(keepingCapacity: true)
            _ = shopPipeline.process(event: event, at: 0, into: &sightings)
            return sightings.count
        }
        let tags = measure(beacons) { event in
            sightings.removeAll(keepingCapacity: true)
            _ = shopPipeline.process(event: event, at: 0, into: &sightings)
            return sightings.count
        }
        print("beacon-bench decode: \(events) events, \(AdvertisementMix.payloads.count)-payload mix, one core")
        print(String(format: "framing only (baseline):            %10.0f adverts/s", framing))
        print(
            String(
                format: "decode + region filter + sighting:  %10.0f adverts/s | ratio to baseline %.2f (reports)",
                full, full / framing))
        print(
            String(
                format: "the same, the agent's event path:   %10.0f adverts/s | ratio to baseline %.2f", eventPath,
                eventPath / framing))
        print(
            String(
                format: "shop mix, event path: a phone's advert turned away in %.0f ns (%d adverts); a tag's "
                    + "advert to a sighting in %.0f ns (%d adverts)", 1e9 / rejected, noise.count, 1e9 / tags,
                beacons.count))
    }

    func measure(_ input: [[UInt8]], _ body: ([UInt8]) -> Int) -> Double {
        var best = 0.0
        for _ in 0..<3 {
            var sink = 0
            let start = ContinuousClock.now
            for event in input { sink &+= body(event) }
            let seconds = (ContinuousClock.now - start).seconds
            if sink == -1 { print(sink) }
            best = max(best, Double(input.count) / seconds)
        }
        return best
    }
}
