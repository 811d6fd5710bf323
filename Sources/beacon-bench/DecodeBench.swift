import ArgumentParser
import BeaconDecoding
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
        print("beacon-bench decode: \(events) events, \(AdvertisementMix.payloads.count)-payload mix, one core")
        print(String(format: "framing only (baseline):            %10.0f adverts/s", framing))
        print(
            String(
                format: "decode + region filter + sighting:  %10.0f adverts/s | ratio to baseline %.2f", full,
                full / framing))
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
