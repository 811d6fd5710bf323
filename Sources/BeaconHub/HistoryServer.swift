import BeaconStore
import Dashboard
import Logging
import Prometheus

/// `beacon-hub serve`: the HTTP API and dashboard over the history, ingesting nothing (docs/dashboard.md, "The
/// analytics process"). Pointed at a shared PostgreSQL history it is the central view of every site: its own site
/// (`site:` of its hub.yaml) is the default of each request, `site=NAME` another, `site=all` each site side by side.
/// The same token rules as a hub's dashboard: the token is required off loopback.
public func buildHistoryServer(
    configuration: HubConfiguration, logger: Logger = Logger(label: "beacontracker.serve")
) throws -> Dashboard {
    guard let http = configuration.http else {
        throw HubSetupError("serve needs an http: section in hub.yaml (host, port, tokenFile): docs/dashboard.md")
    }
    guard let settings = configuration.store else {
        throw HubSetupError("serve needs a store: section in hub.yaml naming the history to read: docs/storage.md")
    }
    let pseudonyms = try TagPseudonyms.load(settings)
    let site = configuration.site.rawValue
    let board = LiveBoard(topics: configuration.mqtt.topics(site: configuration.site))
    board.updateHealth { health in
        health.role = "serve"
        health.storeWritable = nil
    }
    return Dashboard(
        configuration: DashboardConfiguration(
            host: http.host, port: http.port, token: try http.loadToken(), site: configuration.site,
            venue: configuration.loadedVenue, regions: configuration.regions.map(\.region),
            storePath: nil,
            openHistory: { try settings.openForReading(site: site, sites: [site], logger: logger) },
            tripGapSeconds: settings.tripGapSeconds, storedTagID: { pseudonyms.key(for: $0) },
            chartJS: http.chartJS, webRoot: http.webRoot, corsOrigins: http.corsOrigins),
        board: board, registry: PrometheusCollectorRegistry(), logger: logger)
}
