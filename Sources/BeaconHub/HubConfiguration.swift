import BeaconConfig
import BeaconModel
import Foundation
import ZoneInference

/// hub.yaml: the central hub's settings (docs/configuration.md).
public struct HubConfiguration: Decodable, Sendable, Hashable {
    /// This hub's id (two hubs, active and standby, need different ids).
    public var hub: HubID
    public var site: SiteID
    public var mqtt: MQTTSettings
    /// The venue file (docs/venue.md): zones, doors and gateways. The hub ignores its simulator-only sections.
    public var venue: String?
    /// Zone inference settings (docs/configuration.md, "inference").
    public var inference: InferenceSettings
    /// A calibration file from `beacon-hub calibrate`; relative to hub.yaml's folder.
    public var calibration: String?
    /// Beacons the venue names, beside the venue file's own `tags:`.
    public var tags: [HubTagSettings]
    /// Groups of tags and their notify settings; beacons in a region that no one named are tracked under their
    /// beacon id.
    public var regions: [HubRegionSettings]
    /// How the live service ingests, publishes and shares the site with a standby (`beacon-hub run`).
    public var live: HubLiveSettings
    /// ESPresense nodes whose readings the hub takes as sightings (docs/foreign-gateways.md).
    public var espresense: ESPresenseSettings?
    /// OpenMQTTGateway / Theengs Gateway BLE gateways whose readings the hub takes as sightings.
    public var openMQTTGateway: OpenMQTTGatewaySettings?
    /// The history database (docs/storage.md); without it the hub keeps no history.
    public var store: HubStoreSettings?
    /// The dashboard, JSON API, `/metrics` and `/health` (docs/dashboard.md); without it the hub serves no HTTP.
    public var http: HubHTTPSettings?
    /// Home Assistant MQTT discovery (docs/integrations.md); off without the section.
    public var homeAssistant: HomeAssistantSettings
    /// URLs the hub POSTs its events to (docs/integrations.md).
    public var webhooks: [WebhookSettings]
    /// Battery and missing-tag alerts (docs/configuration.md, "tagHealth").
    public var tagHealth: HubTagHealthSettings
    /// The venue and calibration files as `load(from:)` read and checked them, so that nothing reads them twice.
    public private(set) var loadedVenue: Venue?
    public private(set) var loadedCalibration: Calibration?

    enum CodingKeys: String, CodingKey, CaseIterable {
        case hub, site, mqtt, venue, inference, calibration, tags, regions, live, espresense, openMQTTGateway, store
        case http
        case homeAssistant, webhooks, tagHealth
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        hub = try container.decodeIfPresent(HubID.self, forKey: .hub) ?? "hub"
        site = try container.decode(SiteID.self, forKey: .site)
        mqtt = try container.decodeIfPresent(MQTTSettings.self, forKey: .mqtt) ?? MQTTSettings()
        venue = try container.decodeIfPresent(String.self, forKey: .venue)
        inference = try container.decodeIfPresent(InferenceSettings.self, forKey: .inference) ?? InferenceSettings()
        calibration = try container.decodeIfPresent(String.self, forKey: .calibration)
        tags = try container.decodeIfPresent([HubTagSettings].self, forKey: .tags) ?? []
        regions = try container.decodeIfPresent([HubRegionSettings].self, forKey: .regions) ?? []
        live = try container.decodeIfPresent(HubLiveSettings.self, forKey: .live) ?? HubLiveSettings()
        espresense = try container.decodeIfPresent(ESPresenseSettings.self, forKey: .espresense)
        openMQTTGateway = try container.decodeIfPresent(OpenMQTTGatewaySettings.self, forKey: .openMQTTGateway)
        store = try container.decodeIfPresent(HubStoreSettings.self, forKey: .store)
        http = try container.decodeIfPresent(HubHTTPSettings.self, forKey: .http)
        homeAssistant =
            try container.decodeIfPresent(HomeAssistantSettings.self, forKey: .homeAssistant) ?? HomeAssistantSettings()
        webhooks = try WebhookSettings.decodeList(from: container, forKey: .webhooks, regions: regions)
        tagHealth =
            try container.decodeIfPresent(HubTagHealthSettings.self, forKey: .tagHealth) ?? HubTagHealthSettings()
    }

    /// Reads and checks hub.yaml, and the venue file it names (a relative path is taken from hub.yaml's folder).
    public static func load(from path: String) throws(ConfigError) -> HubConfiguration {
        var problems: [ConfigError] = []
        guard let configuration = read(from: path, problems: &problems), problems.isEmpty else {
            throw problems.first ?? ConfigError(.invalidValue, file: path, key: "", "cannot be used")
        }
        return configuration
    }

    /// hub.yaml decoded, its paths resolved and the calibration and venue files it names read and cross-checked with
    /// it; every problem found is added to `problems` (what `load` throws the first of, and `check` reports).
    /// Decoding stops at its first problem (the result is then nil); the steps after it each go on.
    static func read(from path: String, problems: inout [ConfigError]) -> HubConfiguration? {
        var configuration: HubConfiguration
        do {
            configuration = try ConfigLoader.load(HubConfiguration.self, from: path)
        } catch {
            problems.append(error)
            return nil
        }
        func resolve(_ file: String) -> String { ReferencedFile.resolve(file, relativeTo: path) }
        if let calibration = configuration.calibration {
            let resolved = resolve(calibration)
            configuration.calibration = resolved
            do throws(ConfigError) {
                if let problem = ReferencedFile.readProblem(
                    resolved, what: "the calibration file", configFile: path, key: "calibration")
                {
                    throw problem
                }
                let loaded = try ConfigLoader.load(Calibration.self, from: resolved)
                guard loaded.site == configuration.site else {
                    throw ConfigError(
                        .invalidValue, file: path, key: "calibration",
                        "\(resolved) calibrates site \(loaded.site), but this hub serves site \(configuration.site)")
                }
                if let problem = loaded.map?.problem {
                    throw ConfigError(.invalidValue, file: resolved, key: "map", problem)
                }
                configuration.loadedCalibration = loaded
            } catch {
                problems.append(error)
            }
        }
        configuration.mqtt = configuration.mqtt.resolvingFiles(relativeTo: path)
        if var store = configuration.store {
            if store.backend == .sqlite { store.path = resolve(store.path) }
            store.keyFile = store.keyFile.map(resolve)
            if var postgres = store.postgres {
                postgres.passwordFile = postgres.passwordFile.map(resolve)
                postgres.caFile = postgres.caFile.map(resolve)
                postgres.certFile = postgres.certFile.map(resolve)
                postgres.keyFile = postgres.keyFile.map(resolve)
                store.postgres = postgres
            }
            configuration.store = store
        }
        if var http = configuration.http {
            http.tokenFile = http.tokenFile.map(resolve)
            http.webRoot = http.webRoot.map(resolve)
            http.chartJS = resolve(http.chartJS)
            configuration.http = http
        }
        if let venue = configuration.venue {
            let resolved = resolve(venue)
            configuration.venue = resolved
            do throws(ConfigError) {
                if let problem = ReferencedFile.readProblem(
                    resolved, what: "the venue file", configFile: path, key: "venue")
                {
                    throw problem
                }
                let loaded = try VenueLoader.load(from: resolved)
                guard loaded.site == configuration.site else {
                    throw ConfigError(
                        .invalidValue, file: path, key: "venue",
                        "\(resolved) is the venue of site \(loaded.site), but this hub serves site \(configuration.site)"
                    )
                }
                configuration.loadedVenue = loaded
            } catch {
                problems.append(error)
            }
        }
        problems += configuration.crossCheckProblems(file: path)
        return configuration
    }
}
