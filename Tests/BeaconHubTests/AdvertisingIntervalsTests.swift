import BeaconConfig
import BeaconModel
import BrokerTestSupport
import Foundation
import Simulator
import Testing

@testable import BeaconHub

/// A replay has no gateway status to read the gateways' advertising interval from: it estimates it from the
/// receptions, so that the links' fit counts the advertisements a slower beacon sent rightly.
@Suite struct AdvertisingIntervalsTests {
    /// Receptions of one transmitter by `receivers` receivers every `interval` s plus up to 10 ms of delay, each lost
    /// with probability `loss`.
    static func estimate(interval: Double, loss: Double, receivers: Int = 4, seconds: Double = 600) -> Double? {
        var random = SeededGenerator(seed: 9)
        var intervals = AdvertisingIntervals()
        var t = 0.0
        while t < seconds {
            for r in 0..<receivers where Double.random(in: 0..<1, using: &random) >= loss {
                intervals.note(tx: "gw-tx", rx: GatewayID(rawValue: "gw-\(r)")!, at: t)
            }
            t += interval + Double.random(in: 0...0.01, using: &random)
        }
        return intervals.estimates["gw-tx"]
    }

    @Test(arguments: [(0.2, 0.0), (0.2, 0.4), (0.5, 0.15), (1.0, 0.3), (2.0, 0.1)])
    func findsTheIntervalThroughLossAndJitter(interval: Double, loss: Double) throws {
        let estimate = try #require(Self.estimate(interval: interval, loss: loss))
        #expect(abs(estimate - (interval + 0.005)) < 0.01 * interval + 0.006, "estimate \(estimate)")
    }

    @Test func saysNothingFromTooFewReceptions() {
        #expect(Self.estimate(interval: 1, loss: 0, receivers: 1, seconds: 15) == nil)
        var intervals = AdvertisingIntervals()
        // The same advertisement heard twice in one scan is no interval.
        for k in 0..<100 { intervals.note(tx: "a", rx: "b", at: Double(k / 2) * 0.5 + Double(k % 2) * 0.001) }
        #expect(abs((intervals.estimates["a"] ?? 0) - 0.499) < 0.01)
    }

    /// What the estimate is for: the links' fit counts a 1 s beacon's advertisements from it, so a link heard 70 %
    /// of the time has a share of 0.7, not the 0.14 that taking the default 200 ms gives.
    @Test func theEstimateGivesTheLinksTheirShareHeard() throws {
        var random = SeededGenerator(seed: 4)
        var links = GatewayLinks()
        var intervals = AdvertisingIntervals()
        var t = 1_000.0
        while t < 1_600 {
            for rx: GatewayID in ["gw-a", "gw-b"] where Double.random(in: 0..<1, using: &random) >= 0.3 {
                links.note(tx: "gw-tx", rx: rx, rssi: -80, t: t, measuredPower: -59)
                intervals.note(tx: "gw-tx", rx: rx, at: t)
            }
            t += 1 + Double.random(in: 0...0.01, using: &random)
        }
        func shares(_ given: [GatewayID: Double]) -> [Double] {
            links.calibrationLinks(intervals: given).map { Double($0.received) / Double($0.sent) }
        }
        #expect(shares(intervals.estimates).allSatisfy { abs($0 - 0.7) < 0.05 }, "\(shares(intervals.estimates))")
        #expect(shares([:]).allSatisfy { abs($0 - 0.14) < 0.02 })
    }

    /// Seed 3's gateways advertising every second instead of every 200 ms: the replay finds the interval, reports it,
    /// and the links' fit gives about the exponent it gives at 200 ms (2.64 against 2.67; taking 200 ms gave 2.70).
    @Test func aReplayFitsASlowerBeaconAsItFitsTheUsualOne() async throws {
        try await onOwnThread {
            func replay(interval: Double) throws -> ReplayTool.Summary {
                let directory = FileManager.default.temporaryDirectory.appendingPathComponent("intervals-\(UUID())")
                    .path
                try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
                defer { try? FileManager.default.removeItem(atPath: directory) }
                try GatewayBeacons.namingBeacons(inVenueFile: RandomVenue.generate(seed: 3).yaml).write(
                    toFile: "\(directory)/venue.yaml", atomically: true, encoding: .utf8)
                let venue = try VenueLoader.load(from: "\(directory)/venue.yaml")
                _ = try SimulationRun.writeFiles(
                    venue: venue, seed: 3, start: Bench.start, duration: 720, directory: directory, gzip: false,
                    gatewayBeacons: true, gatewayBeaconInterval: interval)
                try "hub: links\nsite: \(venue.site)\nvenue: venue.yaml\n".write(
                    toFile: "\(directory)/hub.yaml", atomically: true, encoding: .utf8)
                return try ReplayTool.run(
                    configuration: HubConfiguration.load(from: "\(directory)/hub.yaml"),
                    inputPath: "\(directory)/sightings.jsonl", eventsPath: "\(directory)/events.jsonl")
            }
            let usual = try replay(interval: 0.2)
            let slow = try replay(interval: 1)
            #expect(slow.advertisingIntervals.count == RandomVenue.generate(seed: 3).gateways)
            #expect(slow.advertisingIntervals.values.allSatisfy { abs($0 - 1) < 0.02 }, "\(slow.advertisingIntervals)")
            #expect(usual.advertisingIntervals.values.allSatisfy { abs($0 - 0.2) < 0.01 })
            let (a, b) = (try #require(usual.linkFit), try #require(slow.linkFit))
            #expect(
                abs(a.pathLossExponent.value - b.pathLossExponent.value) < 0.2,
                "exponent \(a.pathLossExponent.value) at 200 ms, \(b.pathLossExponent.value) at 1 s")
            #expect(ReplayTool.report(slow).contains("advertising every 1.00 s (estimated"))
            let report = try JSONSerialization.jsonObject(with: ReplayTool.Report(slow).json()) as? [String: Any]
            let links = try #require(report?["links"] as? [String: Any])
            #expect(
                (links["advertisingIntervals"] as? [String: Double])?.count == RandomVenue.generate(seed: 3).gateways)
        }
    }

    /// The live hub takes a gateway beacon's interval from its gateway's status and, for a beacon the status does not
    /// announce (the venue file's `beacon:` of a gateway whose agent does not advertise), from its receptions.
    @Test func theLiveHubEstimatesAnIntervalNoStatusGives() throws {
        var core = try HubCoreTests.core()
        let own = "ibeacon:e2c56db5-dffb-48d2-b060-d0f5a71096e0:900:2"
        core.links.announce(own, by: "gw-b")
        let t0 = HubCoreTests.t0
        for batch in 0..<10 {
            let sightings = (0..<8).map { k in
                Sighting(
                    t: t0 + Double(batch * 8 + k) * 0.25 + 0.003 * Double(k % 3), beacon: own, rssi: -70, txPower: -60)
            }
            core.apply(
                .batch(
                    SightingBatch(
                        gateway: "gw-a", boot: "boot-1", seq: UInt64(batch + 1), sent: t0 + Double(batch) * 2,
                        clockSynced: true, sightings: sightings)), at: t0 + Double(batch) * 2)
        }
        let estimated = try #require(core.linkIntervals["gw-b"])
        #expect(abs(estimated - 0.25) < 0.01, "estimated \(estimated) s")
        var status = GatewayStatus(gateway: "gw-b", state: .online, boot: "boot-b", t: t0 + 20, heartbeatSeconds: 10)
        status.selfBeacon = GatewayStatus.SelfBeacon(
            beacon: own, state: "advertising", measuredPower: -60, intervalMs: 500)
        core.apply(.gatewayStatus(status), at: t0 + 20)
        #expect(core.linkIntervals["gw-b"] == 0.5)
    }
}
