import BeaconConfig
import BeaconModel
import Simulator
import Testing
import ZoneInference

#if canImport(Glibc)
    import Glibc
#endif

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

    /// A receiver that loses 15 % of every link's advertisements whatever the level: a strong link is not taken for
    /// one cut off by sensitivity (its mean stays), and a weak one is corrected for its cut alone.
    @Test func advertsLostAtRandomAreNoCut() {
        var rng = SeededGenerator(seed: 9)
        let sensitivity = -95.0
        func link(_ truth: Double) -> LinkCalibration.Link {
            var heard: [Double] = []
            let sent = 20_000
            for _ in 0..<sent where Double.random(in: 0..<1, using: &rng) >= 0.15 {
                let rssi = truth + 4 * rng.gaussian()
                if rssi >= sensitivity { heard.append(rssi) }
            }
            let mean = heard.reduce(0, +) / Double(heard.count)
            let spread = (heard.map { ($0 - mean) * ($0 - mean) }.reduce(0, +) / Double(heard.count)).squareRoot()
            return LinkCalibration.Link(
                tx: "a", rx: "b", meanRSSI: mean, received: heard.count, sent: sent, measuredPower: -59,
                rssiSigma: spread)
        }
        let strong = [-60.0, -65, -70, -72, -75, -78, -80, -82].map(link)
        let weak = link(-92)
        let delivered = LinkCalibration.deliveredShare(strong + [weak])
        #expect(abs(delivered - 0.85) < 0.01, "delivered \(delivered)")
        for (truth, link) in zip([-60.0, -65, -70, -72, -75, -78, -80, -82], strong) {
            #expect(abs(link.uncensoredMean(delivered: delivered) - truth) < 0.2, "\(truth): \(link)")
            // Taken against every advertisement, the random loss looks like a cut 1.7 dB deep.
            #expect(link.uncensoredMean < truth - 1)
        }
        #expect(abs(weak.uncensoredMean(delivered: delivered) - -92) < 0.4)
    }

    /// A partition drawn in pieces on one line is one wall: the fit gives every piece one loss (a loss per piece let
    /// the walls take up what the exponent should), and a wall on another line, or of another material, its own.
    @Test func piecesOfOneStraightWallShareTheirLoss() throws {
        let venue = try VenueLoader.decode(
            """
            site: straight-walls
            zones:
              - { id: a, rect: { x: 0, y: 0, width: 6, height: 10 } }
              - { id: b, rect: { x: 6, y: 0, width: 6, height: 10 } }
              - { id: c, rect: { x: 12, y: 0, width: 6, height: 10 } }
            doors:
              - { between: [a, b], at: [6, 7], width: 1 }
              - { between: [b, c], at: [12, 5], width: 1 }
            walls:
              - { from: [6, 0], to: [6, 3] }
              - { from: [6, 3], to: [6, 6.5] }
              - { from: [6, 7.5], to: [6, 10] }
              - { from: [12, 0], to: [12, 4.5] }
              - { from: [12, 5.5], to: [12, 10], material: heavy }
              - { from: [0, 10], to: [18, 10] }
            gateways:
              - { id: g1, zone: a, position: [1, 1], height: 2 }
              - { id: g2, zone: a, position: [1, 9], height: 2 }
              - { id: g3, zone: b, position: [9, 1], height: 2 }
              - { id: g4, zone: b, position: [9, 9], height: 2 }
              - { id: g5, zone: c, position: [17, 1], height: 2 }
              - { id: g6, zone: c, position: [17, 9], height: 2 }
            """, file: "straight-walls.yaml")
        #expect(LinkCalibration.straightWalls(venue.walls) == [0, 0, 0, 3, 4, 5])
        // Exact links: exponent 2, each straight wall crossed once at its material's loss plus 2 dB.
        let straight = LinkCalibration.straightWalls(venue.walls)
        var links: [LinkCalibration.Link] = []
        for tx in venue.gateways {
            for rx in venue.gateways where rx.id != tx.id {
                let path = Segment(tx.position, rx.position)
                let crossed = Set(
                    venue.walls.indices.filter { path.intersects(venue.walls[$0].segment) }.map { straight[$0] })
                let loss = crossed.reduce(0.0) { $0 + venue.walls[$1].material.defaultAttenuation + 2 }
                let dx = tx.position.x - rx.position.x
                let dy = tx.position.y - rx.position.y
                let mean = -59 - 20 * log10((dx * dx + dy * dy).squareRoot()) - loss
                links.append(
                    LinkCalibration.Link(
                        tx: tx.id, rx: rx.id, meanRSSI: mean, received: 900, sent: 1000, measuredPower: -59,
                        rssiSigma: 4))
            }
        }
        let fit = try #require(LinkCalibration.solve(venue: venue, links: links, nominalExponent: 2))
        let pieces = try [0, 1, 2].map { try #require(fit.wallLosses[$0]).value }
        #expect(pieces[0] == pieces[1] && pieces[1] == pieces[2])
        #expect(abs(pieces[0] - 5.5) < 0.3, "the partition at x 6: \(pieces)")
        let heavy = try #require(fit.wallLosses[4]).value
        #expect(abs(heavy - 10.5) < 0.5, "the heavy piece at x 12: \(heavy)")
        #expect(abs(fit.pathLossExponent.value - 2) < 0.1, "exponent \(fit.pathLossExponent.value)")
    }
}
