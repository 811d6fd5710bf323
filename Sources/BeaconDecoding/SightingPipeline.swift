import BeaconModel

/// Advertising reports in, the sightings a gateway may publish out: decode, filter by region, attach TLM telemetry to
/// the identity last seen from the same device. A pure state machine: time is passed in.
///
/// Non-beacon advertisements never become sightings (privacy): a phone's advertisements stay on the gateway.
public struct SightingPipeline: Sendable {
    /// What the pipeline dropped, by reason; the heartbeat reports these.
    public struct Counters: Sendable, Hashable {
        public var reports = 0
        public var malformed = 0
        public var notBeacons = 0
        public var outsideRegions = 0
        public var noRSSI = 0
        public var telemetryWithoutIdentity = 0
        public var sightings = 0
    }

    public let regions: [BeaconRegion]
    public private(set) var counters = Counters()
    /// Device address → (identity frame, when seen). Bounded; entries older than `identityLifetime` are forgotten.
    private var identities: [[UInt8]: (frame: BeaconFrame, seen: Double)] = [:]
    let identityLifetime: Double = 120
    let maximumIdentities = 10_000

    /// Empty `regions` passes every beacon frame.
    public init(regions: [BeaconRegion]) {
        self.regions = regions
    }

    /// The sightings in one report received at `time` (unix seconds).
    public mutating func process(_ report: AdvertisingReport, at time: Double) -> [Sighting] {
        counters.reports += 1
        let frames: [BeaconFrame]
        do {
            frames = try BeaconDecoder.decode(report.data).frames
        } catch {
            counters.malformed += 1
            return []
        }
        guard !frames.isEmpty else {
            counters.notBeacons += 1
            return []
        }
        guard let rssi = report.rssi else {
            counters.noRSSI += 1
            return []
        }
        var sightings: [Sighting] = []
        for frame in frames {
            if case .eddystoneTLM(let telemetry) = frame {
                // TLM names no beacon: it belongs to the identity its device advertised last.
                guard let identity = identity(for: report.address, at: time), let id = identity.beaconID else {
                    counters.telemetryWithoutIdentity += 1
                    continue
                }
                sightings.append(
                    Sighting(
                        t: time, beacon: id, rssi: rssi, txPower: identity.txPowerAt1m, kind: .eddystoneTLM,
                        address: address(report), extras: SightingExtras(tlm: telemetry.telemetry)))
                continue
            }
            guard let id = frame.beaconID else { continue }
            guard regions.isEmpty || regions.contains(where: { $0.matches(frame) }) else {
                counters.outsideRegions += 1
                continue
            }
            remember(frame, for: report.address, at: time)
            var extras: SightingExtras?
            if case .eddystoneURL(let url) = frame { extras = SightingExtras(url: url.url) }
            sightings.append(
                Sighting(
                    t: time, beacon: id, rssi: rssi, txPower: frame.txPowerAt1m, kind: frame.kind,
                    address: address(report), extras: extras))
        }
        counters.sightings += sightings.count
        return sightings
    }

    private func address(_ report: AdvertisingReport) -> String {
        report.addressString.lowercased()
    }

    private func identity(for address: [UInt8], at time: Double) -> BeaconFrame? {
        guard let entry = identities[address], time - entry.seen <= identityLifetime else { return nil }
        return entry.frame
    }

    private mutating func remember(_ frame: BeaconFrame, for address: [UInt8], at time: Double) {
        if identities.count >= maximumIdentities && identities[address] == nil {
            identities = identities.filter { time - $0.value.seen <= identityLifetime }
            if identities.count >= maximumIdentities { identities.removeAll(keepingCapacity: true) }
        }
        identities[address] = (frame, time)
    }
}
