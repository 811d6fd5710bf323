import BLEScanner
import BeaconConfig
import BeaconDecoding
import BeaconModel

/// agent.yaml: one gateway's settings (docs/configuration.md).
public struct AgentConfiguration: Decodable, Sendable, Hashable {
    /// This gateway's id; one topic level, so `[A-Za-z0-9._:-]{1,64}`.
    public var gateway: GatewayID
    public var site: SiteID
    public var mqtt: MQTTSettings
    /// Seconds between status republications; the hub treats 3 × this of silence as offline.
    public var heartbeatSeconds: Double
    /// Beacons to publish; empty publishes every beacon frame (never non-beacon advertisements).
    public var regions: [BeaconRegion]
    public var batch: BatchSettings
    public var outbox: OutboxSettings
    public var scanner: ScannerSettings
    /// The gateway's own beacon, advertised while it scans; nil advertises nothing.
    public var selfBeacon: SelfBeaconSettings?

    enum CodingKeys: String, CodingKey, CaseIterable {
        case gateway, site, mqtt, heartbeatSeconds, regions, batch, outbox, scanner, selfBeacon
    }

    /// `selfBeacon:` — the beacon the gateway advertises, so that other gateways measure the radio between known
    /// places.
    public struct SelfBeaconSettings: Decodable, Sendable, Hashable {
        /// The beacon id advertised (docs/mqtt.md): `ibeacon:…`, `altbeacon:…` or `eddystone-uid:…`.
        public var beacon: String
        /// Power at 1 m, dBm, put in the frame (for Eddystone, 41 dB more at 0 m).
        public var measuredPower: Int
        /// Advertising interval, milliseconds (100–10240; controllers before Bluetooth 5.0 refuse less than 100).
        public var intervalMs: Double
        /// Power asked of the controller, dBm (-127–20); only extended advertising can ask. Nil: the controller's own.
        public var txPower: Int?
        /// Flags and the beacon frame, as advertised.
        public let advertisingData: [UInt8]

        enum CodingKeys: String, CodingKey, CaseIterable { case beacon, measuredPower, intervalMs, txPower }

        public init(beacon: String, measuredPower: Int = -59, intervalMs: Double = 200, txPower: Int? = nil) throws {
            // The canonical form other gateways' decoders give (lowercase hex), which the hub matches it against.
            let canonical = beacon.lowercased()
            guard let data = AdvertisementEncoder.advertisingData(beacon: canonical, txPower: measuredPower) else {
                throw SelfBeaconError(beacon: beacon)
            }
            self.beacon = canonical
            self.measuredPower = measuredPower
            self.intervalMs = intervalMs
            self.txPower = txPower
            advertisingData = data
        }

        public init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            let beacon = try container.decode(String.self, forKey: .beacon)
            let measuredPower = try container.decodeIfPresent(Int.self, forKey: .measuredPower) ?? -59
            let intervalMs = try container.decodeIfPresent(Double.self, forKey: .intervalMs) ?? 200
            let txPower = try container.decodeIfPresent(Int.self, forKey: .txPower)
            guard (-100...20).contains(measuredPower) else {
                throw DecodingError.dataCorruptedError(
                    forKey: .measuredPower, in: container,
                    debugDescription: "expected dBm at 1 m in -100...20, found \(measuredPower)")
            }
            guard (100...10240).contains(intervalMs) else {
                throw DecodingError.dataCorruptedError(
                    forKey: .intervalMs, in: container,
                    debugDescription: "expected 100 to 10240 milliseconds, found \(intervalMs)")
            }
            if let txPower, !(-127...20).contains(txPower) {
                throw DecodingError.dataCorruptedError(
                    forKey: .txPower, in: container, debugDescription: "expected dBm in -127...20, found \(txPower)")
            }
            do {
                try self.init(beacon: beacon, measuredPower: measuredPower, intervalMs: intervalMs, txPower: txPower)
            } catch let error as SelfBeaconError {
                throw DecodingError.dataCorruptedError(
                    forKey: .beacon, in: container, debugDescription: error.description)
            }
        }

        /// What the scanner advertises.
        var advertising: HCIScanner.Advertising {
            HCIScanner.Advertising(data: advertisingData, intervalMilliseconds: intervalMs, txPower: txPower)
        }
    }

    /// A `selfBeacon.beacon` the agent cannot advertise.
    public struct SelfBeaconError: Error, CustomStringConvertible {
        public let beacon: String
        public var description: String {
            "cannot advertise \"\(beacon)\": give an iBeacon (ibeacon:UUID:MAJOR:MINOR), AltBeacon "
                + "(altbeacon:ID1:ID2:ID3) or Eddystone-UID (eddystone-uid:NAMESPACE:INSTANCE) beacon id"
        }
    }

    /// `scanner:` — the BLE adapter and how it scans.
    public struct ScannerSettings: Decodable, Sendable, Hashable {
        public var adapter: String
        /// Passive listening suffices for beacons; active scanning also asks for scan responses.
        public var active: Bool
        /// LE scan interval and window, milliseconds (2.5 to 10240; window ≤ interval).
        public var intervalMs: Double
        public var windowMs: Double
        /// Switch scanning on again after this long without any advertisement.
        public var restartAfterSilenceSeconds: Double
        /// The reader takes what the socket holds, then waits this long (replay paces in slices of it): fewer wake-ups
        /// for a longer slice, and up to this much latency. Scan times are the kernel's receive times; only where the
        /// kernel gives none are they within a slice of the truth (5–1000).
        public var sliceMs: Double

        enum CodingKeys: String, CodingKey, CaseIterable {
            case adapter, active, intervalMs, windowMs, restartAfterSilenceSeconds, sliceMs
        }

        public init() {
            adapter = "hci0"
            active = false
            intervalMs = 100
            windowMs = 100
            restartAfterSilenceSeconds = 60
            // With the kernel's receive times a longer pause costs no timing accuracy, only up to this much latency.
            sliceMs = 50
        }

        public init(from decoder: any Decoder) throws {
            self.init()
            let container = try decoder.container(keyedBy: CodingKeys.self)
            adapter = try container.decodeIfPresent(String.self, forKey: .adapter) ?? adapter
            active = try container.decodeIfPresent(Bool.self, forKey: .active) ?? active
            intervalMs = try container.decodeIfPresent(Double.self, forKey: .intervalMs) ?? intervalMs
            windowMs = try container.decodeIfPresent(Double.self, forKey: .windowMs) ?? windowMs
            restartAfterSilenceSeconds =
                try container.decodeIfPresent(Double.self, forKey: .restartAfterSilenceSeconds)
                ?? restartAfterSilenceSeconds
            sliceMs = try container.decodeIfPresent(Double.self, forKey: .sliceMs) ?? sliceMs
            guard (5...1000).contains(sliceMs) else {
                throw DecodingError.dataCorruptedError(
                    forKey: .sliceMs, in: container, debugDescription: "expected 5 to 1000 milliseconds")
            }
            guard (2.5...10240).contains(intervalMs), (2.5...10240).contains(windowMs), windowMs <= intervalMs else {
                throw DecodingError.dataCorruptedError(
                    forKey: .windowMs, in: container,
                    debugDescription: "expected 2.5 ≤ windowMs ≤ intervalMs ≤ 10240 milliseconds")
            }
            guard restartAfterSilenceSeconds >= 5 else {
                throw DecodingError.dataCorruptedError(
                    forKey: .restartAfterSilenceSeconds, in: container, debugDescription: "expected at least 5 seconds")
            }
        }
    }

    /// `batch:` — when a batch of sightings is closed and stored.
    public struct BatchSettings: Decodable, Sendable, Hashable {
        /// Close a batch at this many sightings (1–500).
        public var maxSightings: Int
        /// …or this long after its first sighting.
        public var maxDelaySeconds: Double

        enum CodingKeys: String, CodingKey, CaseIterable { case maxSightings, maxDelaySeconds }

        public init() {
            // The contract's most: in a busy shop (1,000 sightings/s) a batch of 100 closed ten times a second, each
            // with its fsync, PUBACK and acknowledgement (docs/agent.md, "Speed"); the latency bound is the delay.
            maxSightings = 500
            maxDelaySeconds = 0.25
        }

        public init(from decoder: any Decoder) throws {
            self.init()
            let container = try decoder.container(keyedBy: CodingKeys.self)
            maxSightings = try container.decodeIfPresent(Int.self, forKey: .maxSightings) ?? maxSightings
            maxDelaySeconds = try container.decodeIfPresent(Double.self, forKey: .maxDelaySeconds) ?? maxDelaySeconds
            guard (1...500).contains(maxSightings) else {
                throw DecodingError.dataCorruptedError(
                    forKey: .maxSightings, in: container, debugDescription: "expected 1...500, found \(maxSightings)")
            }
            guard maxDelaySeconds > 0, maxDelaySeconds <= 60 else {
                throw DecodingError.dataCorruptedError(
                    forKey: .maxDelaySeconds, in: container,
                    debugDescription: "expected seconds in (0, 60], found \(maxDelaySeconds)")
            }
        }
    }

    /// `outbox:` — the durable store of batches not yet acknowledged by the hub.
    public struct OutboxSettings: Decodable, Sendable, Hashable {
        /// SQLite file; its directory must exist and be writable.
        public var path: String
        /// Oldest batches are dropped (and counted) beyond this many bytes of payload…
        public var maxBytes: Int
        /// …or when older than this.
        public var maxAgeHours: Double
        /// An unacknowledged batch is sent again after this long.
        public var resendAfterSeconds: Double
        /// Resends per second at most, so a backlog does not starve live data.
        public var resendPerSecond: Double

        enum CodingKeys: String, CodingKey, CaseIterable {
            case path, maxBytes, maxAgeHours, resendAfterSeconds, resendPerSecond
        }

        public init() {
            path = "/var/lib/beacon-agent/outbox.db"
            maxBytes = 64 * 1024 * 1024
            maxAgeHours = 72
            resendAfterSeconds = 10
            resendPerSecond = 20
        }

        public init(from decoder: any Decoder) throws {
            self.init()
            let container = try decoder.container(keyedBy: CodingKeys.self)
            path = try container.decodeIfPresent(String.self, forKey: .path) ?? path
            maxBytes = try container.decodeIfPresent(Int.self, forKey: .maxBytes) ?? maxBytes
            maxAgeHours = try container.decodeIfPresent(Double.self, forKey: .maxAgeHours) ?? maxAgeHours
            resendAfterSeconds =
                try container.decodeIfPresent(Double.self, forKey: .resendAfterSeconds) ?? resendAfterSeconds
            resendPerSecond = try container.decodeIfPresent(Double.self, forKey: .resendPerSecond) ?? resendPerSecond
            guard maxBytes >= 64 * 1024 else {
                throw DecodingError.dataCorruptedError(
                    forKey: .maxBytes, in: container, debugDescription: "expected at least 65536 bytes")
            }
            guard maxAgeHours > 0, resendAfterSeconds > 0, resendPerSecond > 0 else {
                throw DecodingError.dataCorruptedError(
                    forKey: .maxAgeHours, in: container,
                    debugDescription: "maxAgeHours, resendAfterSeconds and resendPerSecond must be positive")
            }
        }
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        gateway = try container.decode(GatewayID.self, forKey: .gateway)
        site = try container.decode(SiteID.self, forKey: .site)
        mqtt = try container.decodeIfPresent(MQTTSettings.self, forKey: .mqtt) ?? MQTTSettings()
        heartbeatSeconds = try container.decodeIfPresent(Double.self, forKey: .heartbeatSeconds) ?? 30
        regions = try container.decodeIfPresent([RegionSettings].self, forKey: .regions)?.map(\.region) ?? []
        batch = try container.decodeIfPresent(BatchSettings.self, forKey: .batch) ?? BatchSettings()
        outbox = try container.decodeIfPresent(OutboxSettings.self, forKey: .outbox) ?? OutboxSettings()
        scanner = try container.decodeIfPresent(ScannerSettings.self, forKey: .scanner) ?? ScannerSettings()
        selfBeacon = try container.decodeIfPresent(SelfBeaconSettings.self, forKey: .selfBeacon)
        guard (1...3600).contains(heartbeatSeconds) else {
            throw DecodingError.dataCorruptedError(
                forKey: .heartbeatSeconds, in: container,
                debugDescription: "expected seconds in 1...3600, found \(heartbeatSeconds)")
        }
    }

    /// Reads and checks agent.yaml.
    public static func load(from path: String) throws(ConfigError) -> AgentConfiguration {
        var problems: [ConfigError] = []
        guard let configuration = read(from: path, problems: &problems), problems.isEmpty else {
            throw problems.first ?? ConfigError(.invalidValue, file: path, key: "", "cannot be used")
        }
        return configuration
    }

    /// agent.yaml decoded, its MQTT files resolved and its sections cross-checked; every problem found is added to
    /// `problems` (what `load` throws the first of, and `check` reports). Decoding stops at its first problem (the
    /// result is then nil).
    static func read(from path: String, problems: inout [ConfigError]) -> AgentConfiguration? {
        var configuration: AgentConfiguration
        do {
            configuration = try ConfigLoader.load(AgentConfiguration.self, from: path)
        } catch {
            problems.append(error)
            return nil
        }
        configuration.mqtt = configuration.mqtt.resolvingFiles(relativeTo: path)
        var regionIDs: Set<String> = []
        for (index, region) in configuration.regions.enumerated() where !regionIDs.insert(region.id).inserted {
            problems.append(
                ConfigError(
                    .invalidValue, file: path, key: "regions[\(index)].id",
                    "region id \"\(region.id)\" is used twice: give each region its own"))
        }
        return configuration
    }
}
