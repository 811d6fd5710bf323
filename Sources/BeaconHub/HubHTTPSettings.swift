import Dashboard
import Foundation

/// hub.yaml's `http:` section: the dashboard, JSON API, `/metrics` and `/health` (docs/dashboard.md). Without it the
/// hub serves no HTTP.
public struct HubHTTPSettings: Decodable, Sendable, Hashable {
    /// The address to listen on. Anything but loopback needs `tokenFile` (or keep loopback and put an authenticating
    /// proxy in front: docs/dashboard.md).
    public var host = "127.0.0.1"
    /// 0 takes a free port (the log says which).
    public var port = 8080
    /// A file holding the API's bearer token (one line; readable by the hub's user only).
    public var tokenFile: String?
    /// Chart.js from Debian's libjs-chart.js.
    public var chartJS = DashboardConfiguration.debianChartJS
    /// The web page's folder; by default the copy installed beside the program (docs/dashboard.md).
    public var webRoot: String?
    /// Origins of other web pages allowed to call the API from a browser (CORS), `*` for any.
    public var corsOrigins: [String] = []

    enum CodingKeys: String, CodingKey, CaseIterable {
        case host, port, tokenFile, chartJS, webRoot, corsOrigins
    }

    public init() {}

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        host = try container.decodeIfPresent(String.self, forKey: .host) ?? host
        port = Int(try container.setting(.port, Double(port), in: 0...65_535))
        tokenFile = try container.decodeIfPresent(String.self, forKey: .tokenFile)
        chartJS = try container.decodeIfPresent(String.self, forKey: .chartJS) ?? chartJS
        webRoot = try container.decodeIfPresent(String.self, forKey: .webRoot)
        corsOrigins = try container.decodeIfPresent([String].self, forKey: .corsOrigins) ?? []
        for origin in corsOrigins where origin != "*" {
            // An origin is scheme://host[:port], exactly as browsers send it: no path, no trailing slash.
            let parts = origin.split(separator: "/", omittingEmptySubsequences: false)
            guard parts.count == 3, parts[0] == "http:" || parts[0] == "https:", parts[1].isEmpty, !parts[2].isEmpty
            else {
                throw DecodingError.dataCorruptedError(
                    forKey: .corsOrigins, in: container,
                    debugDescription:
                        "\"\(origin)\" is not an origin: write scheme://host[:port] as the browser sends it "
                        + "(https://intranet.example:8443, no path or trailing slash), or \"*\" for any")
            }
        }
        if tokenFile == nil && !DashboardConfiguration.isLoopback(host) {
            throw DecodingError.dataCorruptedError(
                forKey: .host, in: container,
                debugDescription:
                    "listening on \(host) (not loopback) needs tokenFile: a file holding the API's bearer token, "
                    + "or keep 127.0.0.1 behind an authenticating proxy (docs/dashboard.md)")
        }
    }

    /// The token from `tokenFile`, refused when others can read the file or it is empty.
    public func loadToken() throws(HubSetupError) -> String? {
        guard let path = tokenFile else { return nil }
        let manager = FileManager.default
        guard let attributes = try? manager.attributesOfItem(atPath: path),
            let mode = attributes[.posixPermissions] as? Int, let data = manager.contents(atPath: path)
        else {
            throw HubSetupError(
                "cannot read the API token file \(path): create it (for example: openssl rand -hex 32 > \(path); "
                    + "chmod 600 \(path)) and run the hub as its owner")
        }
        guard mode & 0o077 == 0 else {
            throw HubSetupError(
                "the API token file \(path) is readable by others (mode \(String(mode, radix: 8))): chmod 600 \(path)")
        }
        let token = String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        guard token.count >= 16 else {
            throw HubSetupError(
                "the API token in \(path) has \(token.count) characters; use at least 16 (openssl rand -hex 32)")
        }
        return token
    }
}
