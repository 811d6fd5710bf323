import BeaconConfig
import BeaconModel
import BeaconStore
import Foundation

/// `beacon-hub check`: hub.yaml and every file it names, checked as `beacon-hub run` checks them at start-up (the
/// same functions), but without starting anything — no broker connection, no database opened or created, no key
/// file made, no port bound — and collecting every problem rather than stopping at the first.
public enum HubConfigurationCheck {
    /// The report on `configFile`: its summary, or its problems; warnings either way.
    public static func run(configFile: String) -> ConfigCheckReport {
        var report = ConfigCheckReport(file: configFile)
        guard let configuration = HubConfiguration.read(from: configFile, problems: &report.problems) else {
            return report
        }
        report.problems += startUpProblems(configuration, configFile: configFile)
        report.warnings = warnings(configuration, configFile: configFile)
        report.summary = summary(configuration)
        return report
    }

    /// What `buildHub` would refuse beyond `HubConfiguration.load`: no venue, the MQTT password and TLS files, the
    /// store's location and pseudonymisation key, the API token file.
    static func startUpProblems(_ configuration: HubConfiguration, configFile: String) -> [ConfigError] {
        var problems: [ConfigError] = []
        if configuration.venue == nil {
            do {
                _ = try configuration.venueFile()
            } catch {
                problems.append(ConfigError(error.code, file: configFile, key: error.key, error.message))
            }
        }
        do {
            _ = try configuration.mqtt.readPassword(configFile: configFile)
        } catch {
            problems.append(error)
        }
        problems += configuration.mqtt.tlsProblems(configFile: configFile)
        if let store = configuration.store {
            switch store.backend {
            case .sqlite:
                if let problem = StoreDatabase.locationProblem(store.path) {
                    problems.append(ConfigError(.invalidValue, file: configFile, key: "store.path", problem.message))
                }
            case .postgres:
                do {
                    _ = try store.postgresEndpoint()
                } catch {
                    let key =
                        error.message.contains("passwordFile") ? "store.postgres.passwordFile" : "store.postgres.url"
                    problems.append(ConfigError(.invalidValue, file: configFile, key: key, error.message))
                }
            }
            if let problem = TagPseudonyms.problem(store) {
                problems.append(ConfigError(.invalidValue, file: configFile, key: "store.keyFile", problem.description))
            }
        }
        do {
            _ = try configuration.http?.loadToken()
        } catch {
            problems.append(ConfigError(.invalidValue, file: configFile, key: "http.tokenFile", error.description))
        }
        return problems
    }

    /// What does not stop the hub but is probably not meant: a calibration of zones or gateways the venue does not
    /// have (calibrated before the venue changed), no Chart.js, a web root without the page.
    static func warnings(_ configuration: HubConfiguration, configFile: String) -> [ConfigError] {
        var warnings: [ConfigError] = []
        if let calibration = configuration.loadedCalibration, let venue = configuration.loadedVenue {
            let zones = Set(venue.zones.map(\.id.rawValue))
            let gateways = Set(venue.gateways.map(\.id.rawValue))
            let placedIn = calibration.placements?.values.compactMap { $0.zone?.rawValue } ?? []
            let strangeZones = Set(calibration.zones.keys).union(placedIn).filter { !zones.contains($0) }.sorted()
            let strangeGateways = Set(calibration.gatewayOffsets.keys).union(calibration.zones.values.flatMap(\.keys))
                .union(calibration.map?.levels.keys.map { $0 } ?? []).union(
                    calibration.placements?.keys.map { $0 } ?? []
                )
                .subtracting(gateways).sorted()
            let strange =
                (strangeZones.isEmpty ? [] : ["zones " + strangeZones.joined(separator: ", ")])
                + (strangeGateways.isEmpty ? [] : ["gateways " + strangeGateways.joined(separator: ", ")])
            if !strange.isEmpty {
                warnings.append(
                    ConfigError(
                        .invalidValue, file: configFile, key: "calibration",
                        "\(configuration.calibration ?? "") calibrates \(strange.joined(separator: " and ")), which "
                            + "the venue does not have: calibrate again after changing the venue (docs/inference.md)"))
            }
        }
        if let http = configuration.http {
            if ReferencedFile.readProblem(http.chartJS, what: "", configFile: configFile, key: "") != nil {
                warnings.append(
                    ConfigError(
                        .unreadable, file: configFile, key: "http.chartJS",
                        "Chart.js is not at \(http.chartJS), so the dashboard shows no charts: install Debian's "
                            + "libjs-chart.js, or set http.chartJS"))
            }
            if let webRoot = http.webRoot, !FileManager.default.fileExists(atPath: webRoot + "/index.html") {
                warnings.append(
                    ConfigError(
                        .unreadable, file: configFile, key: "http.webRoot",
                        "no index.html in \(webRoot), so the dashboard's page is looked for elsewhere "
                            + "(docs/dashboard.md): copy Sources/Dashboard/Web there, or remove the key"))
            }
        }
        return warnings
    }

    static func summary(_ configuration: HubConfiguration) -> [ConfigCheckReport.Line] {
        typealias Line = ConfigCheckReport.Line
        let venue = configuration.loadedVenue
        var lines = [
            Line("site", "\(configuration.site)" + (configuration.venue.map { ", venue \($0)" } ?? "")),
            Line("hub", "\(configuration.hub)"),
            Line("zones", ConfigCheckReport.list(venue?.zones.map(\.id.rawValue) ?? [])),
            Line("gateways", ConfigCheckReport.list(venue?.gateways.map(\.id.rawValue) ?? [])),
            Line(
                "tags",
                "\((venue?.namedTags.count ?? 0) + configuration.tags.count) named (\(venue?.namedTags.count ?? 0) in "
                    + "the venue, \(configuration.tags.count) in hub.yaml)"),
            Line("regions", ConfigCheckReport.list(configuration.regions.map(\.region.id))),
        ]
        if let calibration = configuration.calibration { lines.append(Line("calibration", calibration)) }
        lines.append(
            Line(
                "store",
                configuration.store.map { store in
                    (store.backend == .sqlite
                        ? "\(store.path) (synchronous \(store.synchronous.rawValue)"
                        : "PostgreSQL \(store.location) (TLS \(store.postgres?.tls ?? ""))")
                        + (store.pseudonymise ? ", pseudonymised" : "")
                        + (store.rawSightings
                            ? ", raw sightings kept \(ConfigCheckReport.number(store.rawRetentionHours)) h" : "") + ")"
                } ?? "none: no history is kept"))
        lines.append(
            Line(
                "http",
                configuration.http.map { http in
                    "\(http.host.contains(":") ? "[\(http.host)]" : http.host):\(http.port)"
                        + (http.tokenFile.map { " (token \($0))" } ?? " (no token)")
                } ?? "off"))
        lines.append(
            Line(
                "broker",
                configuration.mqtt.brokerSummary
                    + ", client \(configuration.mqtt.clientId ?? "hub-\(configuration.hub)")"))
        var integrations: [String] = []
        if !configuration.webhooks.isEmpty {
            integrations.append(
                "webhooks to " + configuration.webhooks.map { $0.url.host ?? "" }.joined(separator: ", "))
        }
        if configuration.homeAssistant.enabled { integrations.append("Home Assistant discovery") }
        if configuration.espresense != nil { integrations.append("ESPresense") }
        if configuration.openMQTTGateway != nil { integrations.append("OpenMQTTGateway") }
        if !integrations.isEmpty { lines.append(Line("integrations", integrations.joined(separator: "; "))) }
        return lines
    }
}
