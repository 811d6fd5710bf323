import BeaconStore
import Foundation
import NIOSSL
import PostgresNIO

extension PostgresHistory {
    /// Which server, database and user, and how the connection is protected (hub.yaml's `store.postgres`).
    public struct Endpoint: Sendable, Hashable, CustomStringConvertible {
        /// How the connection uses TLS (libpq's `sslmode` names).
        public enum TLSMode: String, Sendable, Hashable, CaseIterable {
            /// Plain TCP: only on a loopback or otherwise private link.
            case disable
            /// TLS when the server offers it, without checking its certificate.
            case prefer
            /// TLS or no connection; the certificate is not checked (encryption without authentication).
            case require
            /// TLS, the certificate signed by `caFile` (or the system's roots) and naming the host.
            case verifyFull = "verify-full"
        }

        public var host: String
        public var port: Int
        public var database: String
        public var user: String
        public var password: String?
        public var tls: TLSMode
        /// The CA that signed the server's certificate (`verify-full`); the system's roots without it.
        public var caFile: String?
        /// A client certificate and key, for servers that authenticate hubs by certificate.
        public var certFile: String?
        public var keyFile: String?

        public init(
            host: String, port: Int = 5432, database: String, user: String, password: String?,
            tls: TLSMode = .prefer, caFile: String? = nil, certFile: String? = nil, keyFile: String? = nil
        ) {
            self.host = host
            self.port = port
            self.database = database
            self.user = user
            self.password = password
            self.tls = tls
            self.caFile = caFile
            self.certFile = certFile
            self.keyFile = keyFile
        }

        /// Parses `postgres://USER@HOST[:PORT]/DATABASE[?sslmode=MODE]` (a password in the URL is refused: it belongs
        /// in a file only the hub can read). `sslmode` in the URL wins over `tls`.
        public init(url: String, password: String?, tls: TLSMode = .prefer) throws(StoreError) {
            guard let components = URLComponents(string: url), ["postgres", "postgresql"].contains(components.scheme),
                let host = components.host, !host.isEmpty
            else {
                throw StoreError(
                    .cannotOpen, "store.postgres.url \(url) is not postgres://USER@HOST[:PORT]/DATABASE")
            }
            guard components.password == nil else {
                throw StoreError(
                    .cannotOpen,
                    "store.postgres.url holds a password: remove it and put it in store.postgres.passwordFile (a file "
                        + "readable by the hub only)")
            }
            let database = String(components.path.drop(while: { $0 == "/" }))
            guard let user = components.user, !user.isEmpty, !database.isEmpty else {
                throw StoreError(
                    .cannotOpen, "store.postgres.url \(url) needs a user and a database: postgres://USER@HOST/DATABASE")
            }
            var mode = tls
            if let named = components.queryItems?.first(where: { $0.name == "sslmode" })?.value {
                guard let parsed = TLSMode(rawValue: named) else {
                    throw StoreError(
                        .cannotOpen,
                        "store.postgres.url: sslmode \(named) is not one of "
                            + TLSMode.allCases.map(\.rawValue).joined(separator: ", "))
                }
                mode = parsed
            }
            self.init(
                host: host, port: components.port ?? 5432, database: database, user: user, password: password,
                tls: mode)
        }

        public var description: String { "postgres://\(user)@\(host):\(port)/\(database)" }

        func tlsConfiguration() throws(StoreError) -> TLSConfiguration {
            var configuration = TLSConfiguration.makeClientConfiguration()
            switch tls {
            case .verifyFull:
                configuration.certificateVerification = .fullVerification
                if let caFile { configuration.trustRoots = .file(caFile) }
            case .disable, .prefer, .require:
                configuration.certificateVerification = .none
            }
            if let certFile, let keyFile {
                do {
                    configuration.certificateChain = try NIOSSLCertificate.fromPEMFile(certFile).map {
                        .certificate($0)
                    }
                    configuration.privateKey = .privateKey(try NIOSSLPrivateKey(file: keyFile, format: .pem))
                } catch {
                    throw StoreError(
                        .cannotOpen, "store.postgres: cannot read the client certificate \(certFile) or key: \(error)")
                }
            }
            return configuration
        }

        func clientTLS() throws(StoreError) -> PostgresClient.Configuration.TLS {
            switch tls {
            case .disable: .disable
            case .prefer: .prefer(try tlsConfiguration())
            case .require, .verifyFull: .require(try tlsConfiguration())
            }
        }

        func connectionConfiguration() throws(StoreError) -> PostgresConnection.Configuration {
            let tls: PostgresConnection.Configuration.TLS
            do {
                switch self.tls {
                case .disable: tls = .disable
                case .prefer: tls = .prefer(try NIOSSLContext(configuration: try tlsConfiguration()))
                case .require, .verifyFull: tls = .require(try NIOSSLContext(configuration: try tlsConfiguration()))
                }
            } catch let error as StoreError {
                throw error
            } catch {
                throw StoreError(.cannotOpen, "store.postgres: cannot set up TLS: \(error)")
            }
            var configuration = PostgresConnection.Configuration(
                host: host, port: port, username: user, password: password, database: database, tls: tls)
            configuration.options.connectTimeout = .seconds(10)
            return configuration
        }
    }
}
