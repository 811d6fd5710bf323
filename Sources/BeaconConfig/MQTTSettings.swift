import BeaconMQTT
import BeaconModel
import Foundation

/// The `mqtt:` section shared by agent.yaml and hub.yaml (docs/configuration.md).
public struct MQTTSettings: Decodable, Sendable, Hashable {
    /// The `mqtt.tls:` section.
    public struct TLSSettings: Decodable, Sendable, Hashable {
        public var caFile: String
        public var certFile: String?
        public var keyFile: String?
        public var version: TLSVersion
        public var insecureHostname: Bool

        enum CodingKeys: String, CodingKey, CaseIterable {
            case caFile, certFile, keyFile, version, insecureHostname
        }

        public init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            caFile = try container.decode(String.self, forKey: .caFile)
            certFile = try container.decodeIfPresent(String.self, forKey: .certFile)
            keyFile = try container.decodeIfPresent(String.self, forKey: .keyFile)
            version = try container.decodeIfPresent(TLSVersion.self, forKey: .version) ?? .tlsv12
            insecureHostname = try container.decodeIfPresent(Bool.self, forKey: .insecureHostname) ?? false
        }
    }

    /// TLS protocol versions accepted in configuration.
    public enum TLSVersion: String, ConfigEnum {
        case tlsv12 = "tlsv1.2"
        case tlsv13 = "tlsv1.3"
    }

    public var host: String
    public var port: Int
    /// Topic root; the site id comes from the top-level `site:`.
    public var root: String
    public var clientId: String?
    public var username: String?
    public var password: String?
    /// A file holding the password (first line), so it stays out of the config file.
    public var passwordFile: String?
    public var tls: TLSSettings?
    public var keepAlive: Int
    /// Seconds; first wait before reconnecting, doubled per failure up to `reconnectMaxSeconds`.
    public var reconnectMinSeconds: Double
    public var reconnectMaxSeconds: Double
    /// The broker's `max_packet_size`: larger messages are refused by the client rather than sent (the broker would
    /// drop the connection). 1 MiB, as deploy/mosquitto/beacontracker.conf sets.
    public var maxPacketBytes: Int

    enum CodingKeys: String, CodingKey, CaseIterable {
        case host, port, root, clientId, username, password, passwordFile, tls, keepAlive, reconnectMinSeconds,
            reconnectMaxSeconds, maxPacketBytes
    }

    /// Defaults: a broker on loopback port 1883 without TLS.
    public init() {
        host = "127.0.0.1"
        port = 1883
        root = "beacontracker"
        keepAlive = 30
        reconnectMinSeconds = 0.25
        reconnectMaxSeconds = 30
        maxPacketBytes = 1_048_576
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        host = try container.decodeIfPresent(String.self, forKey: .host) ?? "127.0.0.1"
        port = try container.decodeIfPresent(Int.self, forKey: .port) ?? 1883
        root = try container.decodeIfPresent(String.self, forKey: .root) ?? "beacontracker"
        clientId = try container.decodeIfPresent(String.self, forKey: .clientId)
        username = try container.decodeIfPresent(String.self, forKey: .username)
        password = try container.decodeIfPresent(String.self, forKey: .password)
        passwordFile = try container.decodeIfPresent(String.self, forKey: .passwordFile)
        tls = try container.decodeIfPresent(TLSSettings.self, forKey: .tls)
        keepAlive = try container.decodeIfPresent(Int.self, forKey: .keepAlive) ?? 30
        reconnectMinSeconds = try container.decodeIfPresent(Double.self, forKey: .reconnectMinSeconds) ?? 0.25
        reconnectMaxSeconds = try container.decodeIfPresent(Double.self, forKey: .reconnectMaxSeconds) ?? 30
        maxPacketBytes = try container.decodeIfPresent(Int.self, forKey: .maxPacketBytes) ?? 1_048_576

        func invalid(_ key: CodingKeys, _ message: String) -> DecodingError {
            DecodingError.dataCorruptedError(forKey: key, in: container, debugDescription: message)
        }
        guard (1...65535).contains(port) else { throw invalid(.port, "expected a port in 1...65535, found \(port)") }
        guard (5...3600).contains(keepAlive) else {
            throw invalid(.keepAlive, "expected seconds in 5...3600, found \(keepAlive)")
        }
        guard !root.isEmpty, !root.contains("+"), !root.contains("#"), !root.hasSuffix("/") else {
            throw invalid(.root, "expected a topic prefix without +, # or a trailing /, found \"\(root)\"")
        }
        guard password == nil || passwordFile == nil else {
            throw invalid(.passwordFile, "set either password or passwordFile, not both")
        }
        guard (1024...268_435_460).contains(maxPacketBytes) else {
            throw invalid(.maxPacketBytes, "expected bytes in 1024...268435460, found \(maxPacketBytes)")
        }
        guard reconnectMinSeconds > 0, reconnectMaxSeconds >= reconnectMinSeconds else {
            throw invalid(.reconnectMaxSeconds, "expected 0 < reconnectMinSeconds <= reconnectMaxSeconds")
        }
    }

    /// These settings with `passwordFile` and the TLS files taken from the folder of `configFile` when relative, as
    /// every other file a configuration names.
    public func resolvingFiles(relativeTo configFile: String) -> MQTTSettings {
        func resolve(_ file: String) -> String {
            file.hasPrefix("/")
                ? file : URL(fileURLWithPath: configFile).deletingLastPathComponent().appendingPathComponent(file).path
        }
        var settings = self
        settings.passwordFile = passwordFile.map(resolve)
        if var tls {
            tls.caFile = resolve(tls.caFile)
            tls.certFile = tls.certFile.map(resolve)
            tls.keyFile = tls.keyFile.map(resolve)
            settings.tls = tls
        }
        return settings
    }

    /// The client configuration for one program; reads `passwordFile` and checks the TLS files now, so that a missing
    /// file fails at start-up (as `check` reports it) rather than at the first connection.
    public func clientConfiguration(
        defaultClientID: String, cleanSession: Bool, will: MQTTConfiguration.Will?, configFile: String
    ) throws(ConfigError) -> MQTTConfiguration {
        let secret = try readPassword(configFile: configFile)
        if let problem = tlsProblems(configFile: configFile).first { throw problem }
        let tlsConfiguration = tls.map { tls in
            MQTTConfiguration.TLS(
                caFile: tls.caFile, certificateFile: tls.certFile, keyFile: tls.keyFile,
                version: tls.version == .tlsv13 ? .tlsv13 : .tlsv12, allowInsecureHostname: tls.insecureHostname)
        }
        return MQTTConfiguration(
            host: host, port: port, clientID: clientId ?? defaultClientID, username: username, password: secret,
            tls: tlsConfiguration, keepAlive: keepAlive, cleanSession: cleanSession, will: will,
            reconnectMinimumDelay: .milliseconds(Int(reconnectMinSeconds * 1000)),
            reconnectMaximumDelay: .milliseconds(Int(reconnectMaxSeconds * 1000)), maximumPacketBytes: maxPacketBytes)
    }

    /// The password: `password`, or the first line of `passwordFile`, which must be readable and not empty.
    public func readPassword(configFile: String) throws(ConfigError) -> String? {
        guard let passwordFile else { return password }
        if let problem = ReferencedFile.readProblem(
            passwordFile, what: "the password file", configFile: configFile, key: "mqtt.passwordFile")
        {
            throw problem
        }
        let text: String
        do {
            text = try String(contentsOfFile: passwordFile, encoding: .utf8)
        } catch {
            throw ConfigError(
                .unreadable, file: configFile, key: "mqtt.passwordFile",
                "cannot read \(passwordFile) (\(error.localizedDescription)): check the path and permissions")
        }
        guard let first = text.split(whereSeparator: \.isNewline).first else {
            throw ConfigError(
                .invalidValue, file: configFile, key: "mqtt.passwordFile",
                "the password file \(passwordFile) is empty: write the broker password on its first line")
        }
        return String(first)
    }

    /// What is wrong with the `tls:` files: each must be a readable PEM file, and a client certificate needs its key.
    /// Every problem, each under its key.
    public func tlsProblems(configFile: String) -> [ConfigError] {
        guard let tls else { return [] }
        var problems: [ConfigError] = []
        let files = [
            ("caFile", "the CA certificate", tls.caFile), ("certFile", "the client certificate", tls.certFile),
            ("keyFile", "the client key", tls.keyFile),
        ]
        for case let (name, what, path?) in files {
            let key = "mqtt.tls.\(name)"
            if let problem = ReferencedFile.readProblem(path, what: what, configFile: configFile, key: key) {
                problems.append(problem)
            } else if let data = FileManager.default.contents(atPath: path),
                !String(decoding: data.prefix(65536), as: UTF8.self).contains("-----BEGIN ")
            {
                problems.append(
                    ConfigError(
                        .invalidValue, file: configFile, key: key,
                        "\(what) \(path) is not PEM (no -----BEGIN line): convert it, e.g. openssl x509 -inform der "
                            + "-in FILE -out FILE.pem (openssl pkey for a key)"))
            }
        }
        if (tls.certFile == nil) != (tls.keyFile == nil) {
            problems.append(
                ConfigError(
                    .missingKey, file: configFile, key: tls.certFile == nil ? "mqtt.tls.certFile" : "mqtt.tls.keyFile",
                    "a client certificate and its key go together: set both certFile and keyFile, or neither"))
        }
        return problems
    }

    /// The broker as `check` summarises it: `127.0.0.1:1883 (plain TCP), root beacontracker`, with TLS and user.
    public var brokerSummary: String {
        let transport = tls.map { "TLS \($0.version.rawValue)+\($0.certFile == nil ? "" : ", client certificate")" }
        return "\(host):\(port) (\(transport ?? "plain TCP")\(username.map { ", user \($0)" } ?? "")), root \(root)"
    }

    /// The topic tree for `site`.
    public func topics(site: SiteID) -> Topics { Topics(root: root, site: site) }
}
