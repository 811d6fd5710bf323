extension Venue.Tag {
    /// One named beacon of a tag entry after `count` expansion.
    public struct Named: Sendable, Hashable {
        public var id: TagID
        public var beacon: String
        public var kind: AdvertisementKind
    }

    /// The entry's beacons: `count: 3` of `visitor` gives `visitor-001` … `visitor-003`, with the last part of the
    /// beacon id (iBeacon minor, AltBeacon id3, Eddystone instance) counting up. The simulator advertises exactly these
    /// and the hub names what it hears by them.
    public var expanded: [Named] {
        let kind: AdvertisementKind =
            beacon.hasPrefix("altbeacon:")
            ? .altBeacon : beacon.hasPrefix("eddystone-uid:") ? .eddystoneUID : .iBeacon
        return (0..<count).map { index in
            let name = count == 1 ? id : TagID(rawValue: "\(id)-\(Self.pad(index + 1))") ?? id
            return Named(id: name, beacon: Self.numbered(beacon, kind: kind, offset: index), kind: kind)
        }
    }

    private static func pad(_ number: Int) -> String {
        let text = String(number)
        return String(repeating: "0", count: max(0, 3 - text.count)) + text
    }

    private static func numbered(_ beacon: String, kind: AdvertisementKind, offset: Int) -> String {
        guard offset > 0 else { return beacon }
        var parts = beacon.split(separator: ":", omittingEmptySubsequences: false).map(String.init)
        guard let last = parts.last else { return beacon }
        if kind == .eddystoneUID, let value = UInt64(last, radix: 16) {
            let hex = String((value + UInt64(offset)) & 0xFFFF_FFFF_FFFF, radix: 16)
            parts[parts.count - 1] = String(repeating: "0", count: max(0, 12 - hex.count)) + hex
        } else if let value = Int(last) {
            parts[parts.count - 1] = String((value + offset) % 65536)
        }
        return parts.joined(separator: ":")
    }
}

extension Venue {
    /// Every named beacon of the venue's `tags:` section, expanded.
    public var namedTags: [Tag.Named] { tags.flatMap(\.expanded) }
}
