import BeaconPostgres
import BeaconStore
import Foundation
import Logging

extension HubStoreSettings {
    /// Opens the history this hub writes for `site`: the SQLite file (its writer lock taken now, for the process's
    /// life), or the PostgreSQL server (connected on first use; the writer lock is taken by the first commit of each
    /// active period and given back when it ends).
    public func openForWriting(site: String, logger: Logger) throws -> any HistoryStore {
        switch backend {
        case .sqlite:
            return try HubStore(path: path, durability: synchronous, tripGapSeconds: tripGapSeconds)
        case .postgres:
            return try PostgresHistory(
                endpoint: try postgresEndpoint(), site: site, readSites: [site], tripGapSeconds: tripGapSeconds,
                logger: logger)
        }
    }

    /// Opens the history for queries: `sites` are the sites read (`nil`: every site in the database; a SQLite file
    /// holds one site, whichever is asked). A PostgreSQL history opened so never changes the schema (a role that may
    /// only read, `pg_read_all_data`, can use it); a missing, older or newer schema is an error saying so.
    public func openForReading(
        site: String, sites: [String]?, logger: Logger = Logger(label: "beacontracker.history")
    ) throws -> any HistoryStore {
        switch backend {
        case .sqlite:
            return try HubStore(readingFrom: path, tripGapSeconds: tripGapSeconds)
        case .postgres:
            return try PostgresHistory(
                endpoint: try postgresEndpoint(), site: site, readSites: sites, tripGapSeconds: tripGapSeconds,
                migrates: false, logger: logger)
        }
    }

    /// Where the history is, for messages and reports.
    public var location: String {
        switch backend {
        case .sqlite: path
        case .postgres:
            postgres.map { (try? PostgresHistory.Endpoint(url: $0.url, password: nil))?.description ?? $0.url } ?? ""
        }
    }

    /// The server, user and database of `postgres.url`, the password read from `passwordFile`.
    func postgresEndpoint() throws(StoreError) -> PostgresHistory.Endpoint {
        guard let settings = postgres else {
            throw StoreError(.cannotOpen, "backend: postgres needs store.postgres (url, passwordFile)")
        }
        var password: String?
        if let file = settings.passwordFile {
            do {
                let text = try String(contentsOfFile: file, encoding: .utf8)
                password = text.split(separator: "\n", omittingEmptySubsequences: false).first.map(String.init)
            } catch {
                throw StoreError(
                    .cannotOpen,
                    "cannot read store.postgres.passwordFile \(file): \(error.localizedDescription): create it with "
                        + "the database user's password, readable by the hub's user only")
            }
        }
        var endpoint = try PostgresHistory.Endpoint(
            url: settings.url, password: password,
            tls: PostgresHistory.Endpoint.TLSMode(rawValue: settings.tls) ?? .verifyFull)
        endpoint.caFile = settings.caFile
        endpoint.certFile = settings.certFile
        endpoint.keyFile = settings.keyFile
        return endpoint
    }
}
