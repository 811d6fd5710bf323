import ArgumentParser
import BeaconModel
import Foundation

/// `beacon-bench batch-decode`: the hub's decoding of one sighting batch payload, Foundation's `JSONDecoder` (the
/// baseline, as `ContractCoding.decode` ran it before the fast path) beside `SightingBatch.decodeFast`.
struct BatchDecodeBench: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "batch-decode",
        abstract: "Sighting batch decoding on one core: Foundation's JSONDecoder beside SightingBatch.decodeFast.")

    @Option(help: "Sightings in the batch.")
    var sightings = 100

    @Option(help: "Rounds (Foundation and the fast path alternate); the best of each is printed.")
    var rounds = 3

    @Option(help: "Seconds each measurement runs for at least.")
    var seconds = 1.0

    func validate() throws {
        guard sightings >= 1, sightings <= 500 else { throw ValidationError("--sightings must be 1…500") }
        guard rounds >= 1, seconds > 0 else { throw ValidationError("--rounds and --seconds must be positive") }
    }

    func run() throws {
        let payload = try ContractCoding.encode(Self.batch(sightings: sightings))
        let expected = try JSONDecoder().decode(SightingBatch.self, from: Data(payload))
        guard SightingBatch.decodeFast(payload) == expected else {
            throw ValidationError("decodeFast does not read the benchmark's payload as Foundation does")
        }
        var foundation = 0.0
        var fast = 0.0
        for _ in 0..<rounds {
            foundation = max(
                foundation,
                measure {
                    (try? JSONDecoder().decode(SightingBatch.self, from: Data(payload)))?.sightings.count ?? 0
                })
            fast = max(fast, measure { SightingBatch.decodeFast(payload)?.sightings.count ?? 0 })
        }
        print(
            "beacon-bench batch-decode: \(sightings)-sighting iBeacon batch, \(payload.count) bytes, best of "
                + "\(rounds) rounds, one core")
        print(String(format: "Foundation JSONDecoder (baseline): %11.0f sightings/s", foundation))
        print(
            String(
                format: "SightingBatch.decodeFast:          %11.0f sightings/s | ratio to baseline %.2f", fast,
                fast / foundation))
    }

    /// Sightings decoded per second by `decode`, which returns how many it decoded, run for at least `seconds`.
    func measure(_ decode: () -> Int) -> Double {
        var decoded = 0
        let start = ContinuousClock.now
        var elapsed = 0.0
        repeat {
            for _ in 0..<16 { decoded += decode() }
            elapsed = (ContinuousClock.now - start).seconds
        } while elapsed < seconds
        return Double(decoded) / elapsed
    }

    /// A batch as an agent sends it: iBeacon sightings with the scan time to the clock's precision, RSSI, measured
    /// power, kind and device address.
    static func batch(sightings count: Int) -> SightingBatch {
        var generator = SystemRandomNumberGenerator()
        let sent = 1_763_812_800.0 + Double.random(in: 0..<86_400, using: &generator)
        return SightingBatch(
            gateway: "gw-lobby", boot: "3f2a9c4e-61b0-4d8e-9a57-0c1d2e3f4a5b", seq: 4_711, sent: sent,
            clockSynced: true,
            sightings: (0..<count).map { index in
                let tag = Int.random(in: 0..<2_000, using: &generator)
                return Sighting(
                    t: sent - 1 + Double(index) / Double(count) + Double.random(in: 0..<0.001, using: &generator),
                    beacon: "ibeacon:e2c56db5-dffb-48d2-b060-d0f5a71096e0:\(tag / 256 + 1):\(tag % 256)",
                    rssi: Int.random(in: -95 ... -40, using: &generator), txPower: -59, kind: .iBeacon,
                    address: String(format: "c0:ff:ee:00:%02x:%02x", tag >> 8, tag & 0xFF))
            })
    }
}
