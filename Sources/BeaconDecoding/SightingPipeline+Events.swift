import BeaconModel

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The pipeline over HCI events as they are read, without an `AdvertisingReport` per advertisement: the reports are
/// walked in the event's bytes, a phone's advertisement is turned away by `BeaconDecoder.screen` in place, and a
/// beacon's advertising data is looked up among the payloads seen before (a tag repeats the same bytes for hours), so
/// that the common case allocates nothing. Anything else — a payload not seen yet, Eddystone-TLM (its counters change
/// every time), a malformed advertisement — takes the report path, `process(_:at:)`. The sightings and counters are
/// those of `HCIEventParser.advertisingReports(inEvent:)` followed by `process(_:at:)` for each report (tested on
/// random events).
extension SightingPipeline {
    /// What one HCI event was.
    public enum EventOutcome: Sendable, Hashable {
        /// Not an LE (extended) advertising report event: ignored.
        case notAdvertising
        /// Its lengths disagree (`HCIEventParser` would throw): nothing in it was processed.
        case malformed
        /// Advertising reports, this many, each processed.
        case reports(Int)
    }

    /// What decoding and the region filter made of one beacon frame of a payload.
    struct DecodedFrame: Sendable {
        let frame: BeaconFrame
        let id: String?
        let inRegion: Bool
        let extras: SightingExtras?
    }

    /// Processes every advertising report of `event` (without the H4 type byte) received at `time`, appending the
    /// sightings to `sightings`.
    public mutating func process(event: [UInt8], at time: Double, into sightings: inout [Sighting]) -> EventOutcome {
        event.withUnsafeBufferPointer { bytes in
            guard let layout = Self.layout(bytes) else { return .malformed }
            guard let layout else { return .notAdvertising }
            var offset = 4
            for _ in 0..<layout.count {
                let report: ReportFields
                if layout.extended {
                    let eventType = UInt16(bytes[offset]) | UInt16(bytes[offset + 1]) << 8
                    let length = Int(bytes[offset + 23])
                    report = ReportFields(
                        eventType: eventType, addressType: bytes[offset + 2], addressAt: offset + 3,
                        rssi: Int8(bitPattern: bytes[offset + 13]), txPower: Int8(bitPattern: bytes[offset + 12]),
                        data: offset + 24..<offset + 24 + length)
                    offset += 24 + length
                } else {
                    let length = Int(bytes[offset + 8])
                    report = ReportFields(
                        eventType: UInt16(bytes[offset]), addressType: bytes[offset + 1], addressAt: offset + 2,
                        rssi: Int8(bitPattern: bytes[offset + 9 + length]), txPower: nil,
                        data: offset + 9..<offset + 9 + length)
                    offset += 10 + length
                }
                process(report, extended: layout.extended, in: bytes, at: time, into: &sightings)
            }
            return .reports(layout.count)
        }
    }

    /// One report's fields: positions in the event.
    struct ReportFields {
        let eventType: UInt16
        let addressType: UInt8
        let addressAt: Int
        let rssi: Int8
        let txPower: Int8?
        let data: Range<Int>
    }

    private mutating func process(
        _ report: ReportFields, extended: Bool, in bytes: UnsafeBufferPointer<UInt8>, at time: Double,
        into sightings: inout [Sighting]
    ) {
        let data = UnsafeBufferPointer(rebasing: bytes[report.data])
        switch BeaconDecoder.screen(data) {
        case .malformed:
            counters.reports += 1
            counters.malformed += 1
            return
        case .notBeacon:
            counters.reports += 1
            counters.notBeacons += 1
            return
        case .candidate:
            break
        }
        // Display order: the event carries the address least significant byte first.
        var address: UInt64 = 0
        for index in 0..<6 { address |= UInt64(bytes[report.addressAt + index]) << (8 * UInt64(index)) }
        let rssi = report.rssi == 127 ? nil : Int(report.rssi)
        let frames: [DecodedFrame]
        if let known = payloads[PayloadKey(borrowing: data)] {
            frames = known
        } else {
            let bytes = Array(data)
            guard let decoded = decodedFrames(bytes) else {
                // Telemetry or broken framing: the report path, with its own counting.
                let materialised = AdvertisingReport(
                    eventType: report.eventType, extended: extended, addressType: report.addressType,
                    address: (0..<6).map { UInt8((address >> (8 * UInt64(5 - $0))) & 0xFF) }, rssi: rssi,
                    txPower: report.txPower.flatMap { $0 == 127 ? nil : Int($0) }, data: bytes)
                sightings += process(materialised, at: time)
                return
            }
            if payloads.count >= maximumIdentities { payloads.removeAll(keepingCapacity: true) }
            payloads[PayloadKey(owning: bytes)] = decoded
            frames = decoded
        }
        counters.reports += 1
        guard !frames.isEmpty else {
            counters.notBeacons += 1
            return
        }
        guard let rssi else {
            counters.noRSSI += 1
            return
        }
        var added = 0
        for decoded in frames {
            guard let id = decoded.id else { continue }
            guard decoded.inRegion else {
                counters.outsideRegions += 1
                continue
            }
            remember(decoded.frame, for: address, at: time)
            sightings.append(
                Sighting(
                    t: time, beacon: id, rssi: rssi, txPower: decoded.frame.txPowerAt1m, kind: decoded.frame.kind,
                    address: addressString(address), extras: decoded.extras))
            added += 1
        }
        counters.sightings += added
    }

    /// A payload's frames as `process(_:at:)` would treat them, or nil when it cannot be kept: broken framing, or a
    /// TLM frame (which changes with every advertisement and belongs to the device's last identity).
    private mutating func decodedFrames(_ data: [UInt8]) -> [DecodedFrame]? {
        guard let frames = try? BeaconDecoder.decode(data).frames else { return nil }
        var decoded: [DecodedFrame] = []
        for frame in frames {
            if case .eddystoneTLM = frame { return nil }
            var extras: SightingExtras?
            if case .eddystoneURL(let url) = frame { extras = SightingExtras(url: url.url) }
            decoded.append(
                DecodedFrame(
                    frame: frame, id: beaconID(frame),
                    inRegion: regions.isEmpty || regions.contains(where: { $0.matches(frame) }), extras: extras))
        }
        return decoded
    }

    /// How an event's reports are laid out, after checking every length as `HCIEventParser` does: nil when the
    /// lengths disagree; .some(nil) for an event that is not an advertising report.
    private static func layout(_ bytes: UnsafeBufferPointer<UInt8>) -> (count: Int, extended: Bool)?? {
        guard bytes.count >= 2 else { return nil }
        guard bytes[0] == HCIEventParser.leMetaEvent else { return .some(nil) }
        guard Int(bytes[1]) == bytes.count - 2, bytes.count >= 4 else { return nil }
        let extended: Bool
        switch bytes[2] {
        case HCIEventParser.advertisingReport: extended = false
        case HCIEventParser.extendedAdvertisingReport: extended = true
        default: return .some(nil)
        }
        let count = Int(bytes[3])
        guard count >= 1 else { return nil }
        var offset = 4
        for _ in 0..<count {
            // Legacy: type 1, address type 1, address 6, length 1, data, RSSI 1. Extended: 23 bytes of header, length 1,
            // data.
            let header = extended ? 24 : 9
            guard offset + header <= bytes.count else { return nil }
            let length = Int(bytes[offset + header - 1])
            let end = offset + header + length + (extended ? 0 : 1)
            guard end <= bytes.count else { return nil }
            offset = end
        }
        guard offset == bytes.count else { return nil }
        return .some((count, extended))
    }
}

/// Advertising data as a dictionary key: stored keys own their bytes; a lookup borrows the bytes of the event being
/// read, which live only for that lookup.
struct PayloadKey: Hashable, @unchecked Sendable {
    private let owned: [UInt8]?
    private let borrowed: UnsafeBufferPointer<UInt8>?

    init(owning bytes: [UInt8]) {
        owned = bytes
        borrowed = nil
    }

    init(borrowing bytes: UnsafeBufferPointer<UInt8>) {
        owned = nil
        borrowed = bytes
    }

    private func withBytes<Result>(_ body: (UnsafeRawBufferPointer) -> Result) -> Result {
        if let owned { return owned.withUnsafeBytes(body) }
        return body(UnsafeRawBufferPointer(borrowed!))
    }

    static func == (left: PayloadKey, right: PayloadKey) -> Bool {
        left.withBytes { a in
            right.withBytes { b in
                a.count == b.count && (a.isEmpty || memcmp(a.baseAddress!, b.baseAddress!, a.count) == 0)
            }
        }
    }

    func hash(into hasher: inout Hasher) {
        withBytes { hasher.combine(bytes: $0) }
    }
}
