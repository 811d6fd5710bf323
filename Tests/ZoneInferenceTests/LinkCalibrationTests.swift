import BeaconConfig
import BeaconModel
import Simulator
import Testing
import ZoneInference

/// Self-calibration from gateway beacons: simulated venues whose gateways' receive gains are off by up to
/// ±6 dB, every gateway advertising its own beacon for 30 simulated minutes; the links alone give each gateway's gain
/// back. Training seeds only (docs/accuracy.md): this is where the model's settings may be chosen.
@Suite struct LinkCalibrationTests {
    /// The gains' errors (estimate minus truth, both with Σ = 0) over a training venue, and the result.
    static func recover(
        seed: UInt64, minutes: Double = 30
    ) throws -> (errors: [Double], sigmas: [Double], result: LinkCalibration.Result) {
        let drawn = RandomVenue.generate(seed: seed)
        var venue = try VenueLoader.decode(drawn.yaml, file: "random-\(seed).yaml")
        var rng = SeededGenerator(seed: seed &+ 77)
        for index in venue.gateways.indices {
            venue.gateways[index].gainOffset = Double.random(in: -6...6, using: &rng)
        }
        var radioRNG = SeededGenerator(seed: seed)
        let radio = RadioModel(venue: venue, using: &radioRNG)
        let beacons = GatewayBeacons(venue: venue, radio: radio, seed: seed &+ 1)
        let duration = minutes * 60
        let receptions = beacons.receptions(from: 0, duration: duration, seed: seed &+ 2)
        var sums: [String: (tx: GatewayID, rx: GatewayID, sum: Double, squares: Double, count: Int)] = [:]
        for reception in receptions {
            let key = "\(reception.tx.rawValue)>\(reception.rx.rawValue)"
            let rssi = Double(reception.rssi)
            sums[key, default: (reception.tx, reception.rx, 0, 0, 0)].sum += rssi
            sums[key, default: (reception.tx, reception.rx, 0, 0, 0)].squares += rssi * rssi
            sums[key, default: (reception.tx, reception.rx, 0, 0, 0)].count += 1
        }
        let sent = Int(duration / beacons.intervalSeconds)
        let links = sums.values.map { link in
            let mean = link.sum / Double(link.count)
            return LinkCalibration.Link(
                tx: link.tx, rx: link.rx, meanRSSI: mean, received: link.count, sent: sent,
                measuredPower: beacons.measuredPower,
                rssiSigma: max(0, link.squares / Double(link.count) - mean * mean).squareRoot())
        }
        let result = try #require(
            LinkCalibration.solve(venue: venue, links: links, nominalExponent: RadioSettings().pathLossExponent))
        let truth = radio.gains
        let mean = truth.values.reduce(0, +) / Double(truth.count)
        let errors = venue.gateways.map { gateway in
            (result.receiveGains[gateway.id]?.value ?? .nan) - ((truth[gateway.id] ?? 0) - mean)
        }
        let sigmas = venue.gateways.map { result.receiveGains[$0.id]?.sigma ?? 0 }
        return (errors, sigmas, result)
    }

    /// Every link's exact mean (no fading, noise or cut-off) for a nominal power of −59 dBm, the links at least 3 dB
    /// above the receiver's sensitivity.
    static func exactLinks(venue: Venue, radio: RadioModel) -> [LinkCalibration.Link] {
        var links: [LinkCalibration.Link] = []
        for tx in venue.gateways {
            for rx in venue.gateways where rx.id != tx.id {
                guard let mean = radio.meanLinkRSSI(txP0: -59, from: tx.id, to: rx.id),
                    mean >= venue.radio.sensitivity + 3
                else { continue }
                links.append(
                    LinkCalibration.Link(
                        tx: tx.id, rx: rx.id, meanRSSI: mean, received: 1000, sent: 1000, measuredPower: -59))
            }
        }
        return links
    }

    @Test func gainsComeBackFromTheLinksAlone() throws {
        var errors: [Double] = []
        var covered = 0
        for seed: UInt64 in 1...12 {
            let (venueErrors, sigmas, result) = try Self.recover(seed: seed)
            errors += venueErrors.map(abs)
            // Each reported uncertainty is honest: the error within 3σ for nearly every gateway.
            covered += zip(venueErrors, sigmas).filter { abs($0.0) <= 3 * $0.1 }.count
            print(
                "seed \(seed): \(venueErrors.count) gateways, \(result.linksUsed) links used, residual "
                    + "\(result.residualSigma) dB, exponent \(result.pathLossExponent.value)")
        }
        let sorted = errors.sorted()
        let median = sorted[sorted.count / 2]
        print(
            "link calibration, training seeds 1-12: \(errors.count) gateways, gain error median \(median) dB, "
                + "90th percentile \(sorted[sorted.count * 9 / 10]) dB, within 3σ: \(covered)")
        // Issue 22's target is 1.5 dB; 1.58 dB measured when this was written (training seeds 1–12), 1.30 dB once the
        // fit took the antennas' patterns, 1.18 dB once links heard 1 % of the time counted (2026-11-27). The bound
        // keeps what was reached: a change that loses it fails.
        #expect(median <= 1.3)
        #expect(Double(covered) >= 0.9 * Double(errors.count))
    }

    /// Where the 1.5 dB target meets the radio itself: the same fit given every link's exact mean (no fading, no noise,
    /// no sensitivity cut-off), over training venues 13–40. What is left is each link's static shadowing (σ 2–8 dB in
    /// the random venues) and the directional antennas, which no fit of link means can take apart from a gain; without
    /// both, the model itself gives the gains back to well under a decibel. Only the links at least 3 dB above the
    /// receiver's sensitivity are given: a fit of real receptions also counts fainter links, and beats this.
    @Test func whatTheLinksCannotTell() throws {
        func medianError(shadowing: Bool, antennas: Bool) throws -> Double {
            var errors: [Double] = []
            for seed: UInt64 in 13...40 {
                var venue = try VenueLoader.decode(
                    RandomVenue.generate(seed: seed).yaml, file: "random-\(seed).yaml")
                var rng = SeededGenerator(seed: seed &+ 77)
                for index in venue.gateways.indices {
                    venue.gateways[index].gainOffset = Double.random(in: -6...6, using: &rng)
                    if !antennas { venue.gateways[index].antenna = nil }
                }
                if !shadowing { venue.radio.shadowingSigma = 0 }
                var radioRNG = SeededGenerator(seed: seed)
                let radio = RadioModel(venue: venue, using: &radioRNG)
                let links = Self.exactLinks(venue: venue, radio: radio)
                let result = try #require(
                    LinkCalibration.solve(
                        venue: venue, links: links, nominalExponent: RadioSettings().pathLossExponent))
                let mean = radio.gains.values.reduce(0, +) / Double(radio.gains.count)
                for gateway in venue.gateways {
                    let estimate = try #require(result.receiveGains[gateway.id]).value
                    errors.append(abs(estimate - (radio.gains[gateway.id]! - mean)))
                }
            }
            return errors.sorted()[errors.count / 2]
        }
        let floor = try medianError(shadowing: true, antennas: true)
        let withoutAntennas = try medianError(shadowing: true, antennas: false)
        let withoutShadowing = try medianError(shadowing: false, antennas: true)
        let neither = try medianError(shadowing: false, antennas: false)
        print(
            "link calibration from exact link means, training seeds 13-40: gain error median \(floor) dB; without "
                + "antenna patterns \(withoutAntennas) dB; without shadowing \(withoutShadowing) dB; without both "
                + "\(neither) dB")
        #expect(neither < 1)
        #expect(floor > neither)
    }

    /// A weak link heard only in part: its mean, corrected for the loud packets alone getting through, comes back to
    /// the link's true mean.
    @Test func aLinkCutOffByTheSensitivityIsCorrected() {
        var rng = SeededGenerator(seed: 5)
        let truth = -92.0
        let sigma = 4.0
        let sensitivity = -95.0
        var heard: [Double] = []
        let sent = 20_000
        for _ in 0..<sent {
            let rssi = truth + sigma * rng.gaussian()
            if rssi >= sensitivity { heard.append(rssi) }
        }
        let mean = heard.reduce(0, +) / Double(heard.count)
        let spread = (heard.map { ($0 - mean) * ($0 - mean) }.reduce(0, +) / Double(heard.count)).squareRoot()
        let link = LinkCalibration.Link(
            tx: "a", rx: "b", meanRSSI: mean, received: heard.count, sent: sent, measuredPower: -59, rssiSigma: spread)
        #expect(mean > truth + 1.5)  // what the heard packets alone say
        #expect(abs(link.uncensoredMean - truth) < 0.3)
        // Heard in full: nothing to correct.
        let full = LinkCalibration.Link(
            tx: "a", rx: "b", meanRSSI: -70, received: 1000, sent: 1000, measuredPower: -59, rssiSigma: 4)
        #expect(full.uncensoredMean == -70)
    }
}
