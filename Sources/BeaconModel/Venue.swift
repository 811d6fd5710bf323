#if canImport(Glibc)
    import Glibc
#endif

/// A venue file (docs/venue.md): the single source of zones, doors and gateways for the simulator, the hub and the
/// dashboard. Walls, tags and radio settings are for the simulator; the hub ignores them.
public struct Venue: Sendable, Hashable, Decodable {
    public var site: SiteID
    public var name: String
    public var zones: [Zone]
    public var doors: [Door]
    public var gateways: [Gateway]
    public var walls: [Wall]
    public var tags: [Tag]
    public var radio: RadioSettings

    enum CodingKeys: String, CodingKey, CaseIterable {
        case site, name, zones, doors, gateways, walls, tags, radio
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        site = try container.decode(SiteID.self, forKey: .site)
        name = try container.decodeIfPresent(String.self, forKey: .name) ?? site.rawValue
        zones = try container.decode([Zone].self, forKey: .zones)
        doors = try container.decodeIfPresent([Door].self, forKey: .doors) ?? []
        gateways = try container.decode([Gateway].self, forKey: .gateways)
        walls = try container.decodeIfPresent([Wall].self, forKey: .walls) ?? []
        tags = try container.decodeIfPresent([Tag].self, forKey: .tags) ?? []
        radio = try container.decodeIfPresent(RadioSettings.self, forKey: .radio) ?? RadioSettings()
    }

    /// The zone containing `point`, if any (the first listed wins where zones overlap).
    public func zone(at point: Point) -> Zone? { zones.first { $0.shape.contains(point) } }

    /// Zones that share a door with `zone` (the inference's allowed transitions).
    public func neighbours(of zone: ZoneID) -> Set<ZoneID> {
        Set(
            doors.compactMap { door in
                guard door.between.contains(zone.rawValue) else { return nil }
                return door.between.first { $0 != zone.rawValue }.flatMap(ZoneID.init(rawValue:))
            })
    }

    /// A zone: an area whose tags the hub reports (a room, an exhibit, a shop section).
    public struct Zone: Sendable, Hashable, Decodable {
        public var id: ZoneID
        public var name: String
        public var shape: Polygon

        enum CodingKeys: String, CodingKey, CaseIterable { case id, name, rect, polygon }

        struct Rectangle: Decodable {
            var x: Double
            var y: Double
            var width: Double
            var height: Double
            enum CodingKeys: String, CodingKey, CaseIterable { case x, y, width, height }
        }

        public init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            id = try container.decode(ZoneID.self, forKey: .id)
            name = try container.decodeIfPresent(String.self, forKey: .name) ?? id.rawValue
            switch (
                try container.decodeIfPresent(Rectangle.self, forKey: .rect),
                try container.decodeIfPresent([Point].self, forKey: .polygon)
            )
            {
            case (let rect?, nil):
                guard rect.width > 0, rect.height > 0 else {
                    throw DecodingError.dataCorruptedError(
                        forKey: .rect, in: container, debugDescription: "expected a positive width and height")
                }
                shape = Polygon(x: rect.x, y: rect.y, width: rect.width, height: rect.height)
            case (nil, let points?):
                guard points.count >= 3, abs(Polygon(points).area) > 1e-6 else {
                    throw DecodingError.dataCorruptedError(
                        forKey: .polygon, in: container,
                        debugDescription: "expected at least 3 points enclosing an area")
                }
                shape = Polygon(points)
            default:
                throw DecodingError.dataCorruptedError(
                    forKey: .id, in: container, debugDescription: "zone \(id) needs exactly one of rect or polygon")
            }
        }
    }

    /// A passage between two zones (or a zone and the outside, `outside`): where tags walk through, and what makes
    /// two zones adjacent for the inference.
    public struct Door: Sendable, Hashable, Decodable {
        /// The two sides; `outside` stands for "no zone" (an entrance).
        public var between: [String]
        public var at: Point
        public var width: Double

        enum CodingKeys: String, CodingKey, CaseIterable { case between, at, width }

        public init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            between = try container.decode([String].self, forKey: .between)
            at = try container.decode(Point.self, forKey: .at)
            width = try container.decodeIfPresent(Double.self, forKey: .width) ?? 1.0
            guard between.count == 2, between[0] != between[1] else {
                throw DecodingError.dataCorruptedError(
                    forKey: .between, in: container, debugDescription: "expected two different zone ids")
            }
        }
    }

    /// A gateway (a Pi): where it hangs and which zone it serves, if any.
    public struct Gateway: Sendable, Hashable, Decodable {
        public var id: GatewayID
        public var position: Point
        /// Mounting height, metres.
        public var height: Double
        /// The zone it serves; none for a gateway in a corridor.
        public var zone: ZoneID?
        /// Simulator: this receiver's gain offset, dB (drawn with σ 2 dB when absent).
        public var gainOffset: Double?
        /// Simulator: a receiver that hears better in one direction; none hears alike all round.
        public var antenna: Antenna?
        /// The beacon id the gateway advertises itself (agent.yaml `selfBeacon.beacon`), lowercase. The hub also
        /// learns it from the gateway's status; named here, the hub knows it before the first status arrives.
        public var beacon: String?

        enum CodingKeys: String, CodingKey, CaseIterable {
            case id, position, height, zone, gainOffset, antenna, beacon
        }

        public init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            id = try container.decode(GatewayID.self, forKey: .id)
            position = try container.decode(Point.self, forKey: .position)
            height = try container.decodeIfPresent(Double.self, forKey: .height) ?? 2.0
            zone = try container.decodeIfPresent(ZoneID.self, forKey: .zone)
            gainOffset = try container.decodeIfPresent(Double.self, forKey: .gainOffset)
            antenna = try container.decodeIfPresent(Antenna.self, forKey: .antenna)
            beacon = try container.decodeIfPresent(String.self, forKey: .beacon)?.lowercased()
        }

        /// A cardioid pattern facing horizontally: the gain is −frontToBack·(1 − cos θ)/2 dB, θ the angle between
        /// where the antenna faces and the line to the tag — 0 dB in front, −frontToBack behind (a Pi on a wall, the
        /// wall and the Pi's own board behind its antenna; a patch antenna). The simulator hears through it; the hub
        /// reads only `facing` and fits the ratio from the gateways' links (`LinkCalibration`).
        public struct Antenna: Sendable, Hashable, Decodable {
            /// Where it faces on the floor plan, degrees counter-clockwise from +x (90: towards +y).
            public var facing: Double
            /// Gain in front minus gain behind, dB.
            public var frontToBackDB: Double

            enum CodingKeys: String, CodingKey, CaseIterable { case facing, frontToBackDB }

            /// cos θ, θ the angle between where it faces and the direction (dx, dy) on the floor plan, `distance` the
            /// 3-D distance that direction spans: the pattern is −frontToBack·(1 − cos θ)/2 dB. The one place the
            /// simulator's radio, the links fit and the engine's map read the pattern's shape from.
            public func cosine(towardsX dx: Double, y dy: Double, distance: Double) -> Double {
                let radians = facing * Double.pi / 180
                return min(max((dx * cos(radians) + dy * sin(radians)) / distance, -1), 1)
            }

            public init(facing: Double, frontToBackDB: Double) {
                self.facing = facing
                self.frontToBackDB = frontToBackDB
            }

            public init(from decoder: any Decoder) throws {
                let container = try decoder.container(keyedBy: CodingKeys.self)
                facing = try container.decode(Double.self, forKey: .facing)
                // Optional: an installer knows which way a gateway faces, rarely by how much it shades what is
                // behind; the hub fits the ratio from the links. The simulator hears alike all round without it.
                frontToBackDB = try container.decodeIfPresent(Double.self, forKey: .frontToBackDB) ?? 0
                guard (-360...360).contains(facing) else {
                    throw DecodingError.dataCorruptedError(
                        forKey: .facing, in: container, debugDescription: "expected degrees in -360...360")
                }
                guard (0...40).contains(frontToBackDB) else {
                    throw DecodingError.dataCorruptedError(
                        forKey: .frontToBackDB, in: container, debugDescription: "expected dB in 0...40")
                }
            }
        }
    }

    /// Simulator: a wall segment and what it costs a signal passing through it.
    public struct Wall: Sendable, Hashable, Decodable {
        /// Published ranges: light 3–4 dB, heavy 7–10 dB, concrete 10–15 dB.
        public enum Material: String, Sendable, Hashable, Decodable, CaseIterable {
            case light, heavy, concrete

            public var defaultAttenuation: Double {
                switch self {
                case .light: 3.5
                case .heavy: 8.5
                case .concrete: 12.5
                }
            }
        }

        public var from: Point
        public var to: Point
        public var material: Material
        public var attenuation: Double

        enum CodingKeys: String, CodingKey, CaseIterable { case from, to, material, attenuation }

        public init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            from = try container.decode(Point.self, forKey: .from)
            to = try container.decode(Point.self, forKey: .to)
            material = try container.decodeIfPresent(Material.self, forKey: .material) ?? .light
            attenuation =
                try container.decodeIfPresent(Double.self, forKey: .attenuation) ?? material.defaultAttenuation
        }

        public var segment: Segment { Segment(from, to) }
    }

    /// Simulator: a tag, its beacon and who carries it.
    public struct Tag: Sendable, Hashable, Decodable {
        /// How the tag moves.
        public enum Carrier: String, Sendable, Hashable, Decodable, CaseIterable {
            /// A museum visitor: exhibit to exhibit, minutes at each.
            case visitor
            /// A shopper: shorter stops, revisits.
            case shopper
            /// Staff: long stays, frequent crossings.
            case staff
            /// Left lying still where it starts.
            case still
        }

        public var id: TagID
        /// The beacon id of docs/mqtt.md, e.g. `ibeacon:<uuid>:<major>:<minor>`.
        public var beacon: String
        public var carrier: Carrier
        /// Advertising interval, seconds (0.1 to 1 typical).
        public var interval: Double
        /// Measured power at 1 m, dBm; drawn around −59 ± 3 when absent.
        public var txPower: Int?
        /// Whether its sightings carry the measured power (`txPower`); false for tags that send none, whose true
        /// power still varies around `txPower` (or −59).
        public var advertisesPower: Bool
        /// Where it starts (a zone id); the first zone when absent.
        public var start: ZoneID?
        /// Copies: `count: 50` makes tags `<id>-001` … `<id>-050` with consecutive minors.
        public var count: Int
        /// Simulator: the tag's battery and its Eddystone-TLM frames; Eddystone tags only (iBeacon and AltBeacon
        /// carry no telemetry). Absent: no TLM frames.
        public var battery: Battery?

        /// A simulated tag's battery: it drains at a steady rate, the tag falls silent once it is flat, and it may be
        /// given a new cell (its TLM counters start again) partway through.
        public struct Battery: Sendable, Hashable, Decodable {
            /// At the start of the run (and after a replacement).
            public var milliVolts: Int
            /// Lost per hour of simulated time.
            public var drainPerHour: Double
            /// Below this the tag stops advertising.
            public var deadBelowMilliVolts: Int
            /// Seconds after the run's start when the battery is replaced; never when absent.
            public var replacedAfterSeconds: Double?
            /// The new cell's voltage; `milliVolts` when absent.
            public var newCellMilliVolts: Int?
            /// Every n-th advertisement is a TLM frame (the rest the tag's identity), as Eddystone tags interleave
            /// them.
            public var tlmEvery: Int

            enum CodingKeys: String, CodingKey, CaseIterable {
                case milliVolts, drainPerHour, deadBelowMilliVolts, replacedAfterSeconds, tlmEvery, newCellMilliVolts
            }

            public init(
                milliVolts: Int = 3000, drainPerHour: Double = 0, deadBelowMilliVolts: Int = 2000,
                replacedAfterSeconds: Double? = nil, tlmEvery: Int = 10, newCellMilliVolts: Int? = nil
            ) {
                self.milliVolts = milliVolts
                self.drainPerHour = drainPerHour
                self.deadBelowMilliVolts = deadBelowMilliVolts
                self.replacedAfterSeconds = replacedAfterSeconds
                self.tlmEvery = tlmEvery
                self.newCellMilliVolts = newCellMilliVolts
            }

            public init(from decoder: any Decoder) throws {
                let container = try decoder.container(keyedBy: CodingKeys.self)
                self.init(
                    milliVolts: try container.decodeIfPresent(Int.self, forKey: .milliVolts) ?? 3000,
                    drainPerHour: try container.decodeIfPresent(Double.self, forKey: .drainPerHour) ?? 0,
                    deadBelowMilliVolts: try container.decodeIfPresent(Int.self, forKey: .deadBelowMilliVolts) ?? 2000,
                    replacedAfterSeconds: try container.decodeIfPresent(Double.self, forKey: .replacedAfterSeconds),
                    tlmEvery: try container.decodeIfPresent(Int.self, forKey: .tlmEvery) ?? 10,
                    newCellMilliVolts: try container.decodeIfPresent(Int.self, forKey: .newCellMilliVolts))
                guard (1000...5000).contains(milliVolts) else {
                    throw DecodingError.dataCorruptedError(
                        forKey: .milliVolts, in: container, debugDescription: "expected millivolts in 1000...5000")
                }
                guard newCellMilliVolts.map({ (1000...5000).contains($0) }) ?? true else {
                    throw DecodingError.dataCorruptedError(
                        forKey: .newCellMilliVolts, in: container,
                        debugDescription: "expected millivolts in 1000...5000")
                }
                guard drainPerHour >= 0, drainPerHour.isFinite else {
                    throw DecodingError.dataCorruptedError(
                        forKey: .drainPerHour, in: container, debugDescription: "expected millivolts ≥ 0")
                }
                guard (0...5000).contains(deadBelowMilliVolts) else {
                    throw DecodingError.dataCorruptedError(
                        forKey: .deadBelowMilliVolts, in: container,
                        debugDescription: "expected millivolts in 0...5000")
                }
                guard replacedAfterSeconds.map({ $0 >= 0 && $0.isFinite }) ?? true else {
                    throw DecodingError.dataCorruptedError(
                        forKey: .replacedAfterSeconds, in: container, debugDescription: "expected seconds ≥ 0")
                }
                guard (1...1000).contains(tlmEvery) else {
                    throw DecodingError.dataCorruptedError(
                        forKey: .tlmEvery, in: container, debugDescription: "expected 1...1000")
                }
            }

            /// The cell's voltage `elapsed` seconds after the run's start, and the seconds since it was put in.
            public func state(elapsed: Double) -> (milliVolts: Double, sinceInserted: Double) {
                let replaced = replacedAfterSeconds.map { elapsed >= $0 } ?? false
                let since = replaced ? elapsed - replacedAfterSeconds! : elapsed
                let start = replaced ? newCellMilliVolts ?? milliVolts : milliVolts
                return (Double(start) - drainPerHour * since / 3600, since)
            }
        }

        enum CodingKeys: String, CodingKey, CaseIterable {
            case id, beacon, carrier, interval, txPower, advertisesPower, start, count, battery
        }

        public init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            id = try container.decode(TagID.self, forKey: .id)
            beacon = try container.decode(String.self, forKey: .beacon)
            carrier = try container.decodeIfPresent(Carrier.self, forKey: .carrier) ?? .visitor
            interval = try container.decodeIfPresent(Double.self, forKey: .interval) ?? 1.0
            txPower = try container.decodeIfPresent(Int.self, forKey: .txPower)
            advertisesPower = try container.decodeIfPresent(Bool.self, forKey: .advertisesPower) ?? true
            start = try container.decodeIfPresent(ZoneID.self, forKey: .start)
            count = try container.decodeIfPresent(Int.self, forKey: .count) ?? 1
            battery = try container.decodeIfPresent(Battery.self, forKey: .battery)
            if battery != nil, !beacon.hasPrefix("eddystone-") {
                throw DecodingError.dataCorruptedError(
                    forKey: .battery, in: container,
                    debugDescription:
                        "only Eddystone tags send telemetry (TLM frames); \(beacon) cannot report a battery")
            }
            guard (0.02...60).contains(interval) else {
                throw DecodingError.dataCorruptedError(
                    forKey: .interval, in: container, debugDescription: "expected seconds in 0.02...60")
            }
            guard (1...10_000).contains(count) else {
                throw DecodingError.dataCorruptedError(
                    forKey: .count, in: container, debugDescription: "expected 1...10000")
            }
        }
    }
}
