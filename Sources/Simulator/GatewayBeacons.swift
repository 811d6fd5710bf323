import BeaconModel
import Foundation

/// Gateways as beacons: every gateway advertises a beacon of its own, and every other gateway hears it
/// through the same radio as the tags (path loss, walls, static shadowing, the receiver's gain, fading, noise,
/// losses). A gateway's transmitter is off its nominal power by an offset of its own, as real radios are.
public struct GatewayBeacons: Sendable {
    /// One advertisement of `tx`'s beacon heard by `rx`.
    public struct Reception: Sendable, Hashable {
        public var t: Double
        public var tx: GatewayID
        public var rx: GatewayID
        public var rssi: Int
    }

    /// The beacon id the simulator gives the `index`-th gateway (by id) of a venue: one UUID for all gateways, major
    /// 65000, the minor counting from 1. Tags of the simulated venues use other UUIDs.
    public static func beaconID(index: Int) -> String {
        "ibeacon:6a7e3a1e-b0b0-4c0d-9e5e-0000000000ff:65000:\(index + 1)"
    }

    /// A venue file in the generator's flow style (one `- { id: …` line per gateway) with every gateway's own beacon
    /// named (`beacon:`, by `beaconID(index:)`), so that a hub replaying the run knows them from the file.
    public static func namingBeacons(inVenueFile text: String) -> String {
        var lines = text.components(separatedBy: "\n")
        var inGateways = false
        var gatewayLines: [(line: Int, id: String)] = []
        for (index, line) in lines.enumerated() {
            if !line.hasPrefix(" ") { inGateways = line == "gateways:" }
            guard inGateways, line.hasPrefix("  - { id: "), let comma = line.firstIndex(of: ",") else { continue }
            gatewayLines.append((index, String(line[line.index(line.startIndex, offsetBy: 10)..<comma])))
        }
        let order = gatewayLines.map(\.id).sorted()
        for (line, id) in gatewayLines {
            let beacon = beaconID(index: order.firstIndex(of: id)!)
            lines[line] = lines[line].replacingOccurrences(
                of: "{ id: \(id), ", with: "{ id: \(id), beacon: \"\(beacon)\", ")
        }
        return lines.joined(separator: "\n")
    }

    /// Each gateway's beacon id: the one the venue file names (`beacon:`, lowercased as decoders write ids), else
    /// `beaconID(index:)` over the gateways sorted by id. What the simulated agents announce and advertise.
    public static func beaconIDs(of venue: Venue) -> [GatewayID: String] {
        let sorted = venue.gateways.map(\.id).sorted { $0.rawValue < $1.rawValue }
        return Dictionary(
            venue.gateways.map { gateway in
                (gateway.id, gateway.beacon?.lowercased() ?? beaconID(index: sorted.firstIndex(of: gateway.id)!))
            }, uniquingKeysWith: { first, _ in first })
    }

    /// The power at 1 m each gateway puts in its frame (the nominal), dBm.
    public let measuredPower: Double
    /// How far each gateway's transmitter is from that, dB.
    public let transmitOffsets: [GatewayID: Double]
    public let intervalSeconds: Double
    let radio: RadioModel
    let gateways: [GatewayID]
    /// Where each gateway is: where its beacon's packets are sent from.
    let positions: [GatewayID: Point]

    /// `transmitOffsetSigma`: σ of the transmit offsets (held to ±3σ).
    public init(
        venue: Venue, radio: RadioModel, measuredPower: Double = -59, transmitOffsetSigma: Double = 2,
        intervalSeconds: Double = 0.2, seed: UInt64
    ) {
        var rng = SeededGenerator(seed: seed)
        self.measuredPower = measuredPower
        self.intervalSeconds = intervalSeconds
        self.radio = radio
        gateways = venue.gateways.map(\.id).sorted { $0.rawValue < $1.rawValue }
        positions = Dictionary(venue.gateways.map { ($0.id, $0.position) }, uniquingKeysWith: { first, _ in first })
        var offsets: [GatewayID: Double] = [:]
        for id in gateways {
            offsets[id] = min(
                max(transmitOffsetSigma * rng.gaussian(), -3 * transmitOffsetSigma), 3 * transmitOffsetSigma)
        }
        transmitOffsets = offsets
    }

    /// Every reception from `start` for `duration` seconds, in time order per link; `seed` draws fading, noise and
    /// losses.
    public func receptions(from start: Double, duration: Double, seed: UInt64) -> [Reception] {
        var air = Air(self, start: start, seed: seed)
        return air.advance(until: start + duration)
    }

    /// The beacons on air, advanced step by step (a live simulation paces it to the clock): each link keeps its
    /// fading and the time of its next advertisement.
    public struct Air: Sendable {
        struct Link: Sendable {
            var tx: GatewayID
            var rx: GatewayID
            var mean: Double
            var fading: FadingProcess
            var next: Double
        }

        let beacons: GatewayBeacons
        var links: [Link] = []
        var rng: SeededGenerator

        public init(_ beacons: GatewayBeacons, start: Double, seed: UInt64) {
            self.beacons = beacons
            rng = SeededGenerator(seed: seed)
            let settings = beacons.radio.settings
            for tx in beacons.gateways {
                // Each transmitter starts at its own phase, as unsynchronised gateways do.
                let phase = Double.random(in: 0..<beacons.intervalSeconds, using: &rng)
                for rx in beacons.gateways where rx != tx {
                    guard
                        let mean = beacons.radio.meanLinkRSSI(
                            txP0: beacons.measuredPower + (beacons.transmitOffsets[tx] ?? 0), from: tx, to: rx)
                    else { continue }
                    let fading = FadingProcess(
                        sigma: settings.fadingSigma, tau: settings.fadingTauSeconds, using: &rng)
                    links.append(Link(tx: tx, rx: rx, mean: mean, fading: fading, next: start + phase))
                }
            }
        }

        /// The receptions of the advertisements sent before `end`, link by link.
        public mutating func advance(until end: Double) -> [Reception] {
            var heard: [Reception] = []
            let interval = beacons.intervalSeconds
            for index in links.indices {
                while links[index].next < end {
                    let value = links[index].fading.advance(by: interval, using: &rng)
                    if let rssi = beacons.radio.receive(
                        mean: links[index].mean, fading: value, gateway: links[index].rx,
                        from: beacons.positions[links[index].tx], using: &rng)
                    {
                        heard.append(
                            Reception(t: links[index].next, tx: links[index].tx, rx: links[index].rx, rssi: rssi))
                    }
                    links[index].next += interval
                }
            }
            return heard
        }
    }
}
