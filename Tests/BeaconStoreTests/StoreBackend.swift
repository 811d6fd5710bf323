import BeaconPostgres
import BeaconStore
import BrokerTestSupport
import Foundation
import Testing

/// The two databases the history runs on: the store's tests that are about meaning (acknowledgements, visits,
/// dwell, forget, retention, identity) run against both — a SQLite file in a temp directory, and a database of its own
/// on a real PostgreSQL server started for the test process.
enum StoreBackend: String, CaseIterable, Sendable, CustomTestStringConvertible {
    case sqlite, postgres

    var testDescription: String { rawValue }

    /// A new, empty history of `site`; SQLite's file goes in `directory`, which the test deletes when it ends.
    func open(in directory: URL, site: String = "museum", tripGapSeconds: Double = 600) async throws
        -> any HistoryStore
    {
        switch self {
        case .sqlite:
            return try HubStore(
                path: directory.appendingPathComponent("history.db").path, tripGapSeconds: tripGapSeconds)
        case .postgres:
            let server = try await SharedPostgres.server()
            let database = try await server.createDatabase()
            return try PostgresHistory(
                endpoint: server.endpoint(database), site: site, readSites: [site], tripGapSeconds: tripGapSeconds)
        }
    }
}

extension PostgresServer {
    /// How a hub reaches `database` on this server (plain TCP: loopback).
    func endpoint(_ database: String) -> PostgresHistory.Endpoint {
        PostgresHistory.Endpoint(
            host: host, port: port, database: database, user: user, password: password, tls: .disable)
    }
}
