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
    public internal(set) var counters = Counters()
    /// Device address → (identity frame, when seen). Bounded; entries older than `identityLifetime` are forgotten.
    var identities: [UInt64: (frame: BeaconFrame, seen: Double)] = [:]
    let identityLifetime: Double = 120
    let maximumIdentities = 10_000
    /// The strings a sighting carries, memoised: building a beacon id or an address string costs more than all the
    /// decoding (a tag advertises the same frame ten times a second). Bounded by `maximumIdentities` each.
    var beaconIDs: [BeaconFrame: String] = [:]
    var addressStrings: [UInt64: String] = [:]
    /// Advertising data seen before → what decoding and the region filter made of it (`process(event:at:into:)`):
    /// a tag repeats the same bytes for hours. Bounded by `maximumIdentities`.
    var payloads: [PayloadKey: [DecodedFrame]] = [:]

    /// Empty `regions` passes every beacon frame.
    public init(regions: [BeaconRegion]) {
        self.regions = regions
    }

    /// The sightings in one report received at `time` (unix seconds).
    public mutating func process(_ report: AdvertisingReport, at time: Double) -> [Sighting] {
        counters.reports += 1
        // Most of a busy place's advertisements are phones and headphones: turned away before any decoding.
        switch BeaconDecoder.screen(report.data) {
        case .malformed:
            counters.malformed += 1
            return []
        case .notBeacon:
            counters.notBeacons += 1
            return []
        case .candidate:
            break
        }
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
                guard let identity = identity(for: Self.addressKey(report.address), at: time),
                    let id = beaconID(identity)
                else {
                    counters.telemetryWithoutIdentity += 1
                    continue
                }
                sightings.append(
                    Sighting(
                        t: time, beacon: id, rssi: rssi, txPower: identity.txPowerAt1m, kind: .eddystoneTLM,
                        address: address(report), extras: SightingExtras(tlm: telemetry.telemetry)))
                continue
            }
            guard let id = beaconID(frame) else { continue }
            guard regions.isEmpty || regions.contains(where: { $0.matches(frame) }) else {
                counters.outsideRegions += 1
                continue
            }
            remember(frame, for: Self.addressKey(report.address), at: time)
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

    private mutating func address(_ report: AdvertisingReport) -> String {
        report.address.count == 6 ? addressString(Self.addressKey(report.address)) : report.addressString.lowercased()
    }

    /// The address as `aa:bb:cc:dd:ee:ff` from its key, memoised.
    mutating func addressString(_ key: UInt64) -> String {
        if let known = addressStrings[key] { return known }
        if addressStrings.count >= maximumIdentities { addressStrings.removeAll(keepingCapacity: true) }
        var text: [UInt8] = []
        text.reserveCapacity(17)
        for index in (0..<6).reversed() {
            let byte = Int((key >> (8 * UInt64(index))) & 0xFF)
            text.append(Self.hexDigits[byte >> 4])
            text.append(Self.hexDigits[byte & 0xF])
            if index > 0 { text.append(UInt8(ascii: ":")) }
        }
        let string = String(decoding: text, as: UTF8.self)
        addressStrings[key] = string
        return string
    }

    static let hexDigits = Array("0123456789abcdef".utf8)

    /// A device address (display order, 6 bytes) as one number: the key of the per-device tables.
    static func addressKey(_ address: [UInt8]) -> UInt64 {
        address.prefix(8).reduce(0) { $0 << 8 | UInt64($1) }
    }

    mutating func beaconID(_ frame: BeaconFrame) -> String? {
        if let known = beaconIDs[frame] { return known }
        guard let id = frame.beaconID else { return nil }
        if beaconIDs.count >= maximumIdentities { beaconIDs.removeAll(keepingCapacity: true) }
        beaconIDs[frame] = id
        return id
    }

    private func identity(for address: UInt64, at time: Double) -> BeaconFrame? {
        guard let entry = identities[address], time - entry.seen <= identityLifetime else { return nil }
        return entry.frame
    }

    mutating func remember(_ frame: BeaconFrame, for address: UInt64, at time: Double) {
        if identities.count >= maximumIdentities && identities[address] == nil {
            identities = identities.filter { time - $0.value.seen <= identityLifetime }
            if identities.count >= maximumIdentities { identities.removeAll(keepingCapacity: true) }
        }
        identities[address] = (frame, time)
    }
}
