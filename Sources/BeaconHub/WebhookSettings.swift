import BeaconModel
import Foundation

/// One entry of hub.yaml's `webhooks:` list: a URL the hub POSTs its events to, which of them, and how hard it tries
/// (docs/integrations.md).
public struct WebhookSettings: Decodable, Sendable, Hashable {
    /// An `http` or `https` URL.
    public var url: URL
    /// The event types sent; all six when absent.
    public var events: Set<ZoneEventType> = Set(ZoneEventType.allCases)
    /// Only events whose `region` is one of these (ids of hub.yaml's `regions:`); any event when absent. Events
    /// without a region (alerts, tags no region covers) do not pass this filter.
    public var regions: Set<String>?
    /// Only events whose `zone` is one of these; any event when absent.
    public var zones: Set<ZoneID>?
    /// Extra request headers, e.g. `Authorization`. The hub sets `Content-Type` and `X-BeaconTracker-Event` itself.
    public var headers: [String: String] = [:]
    /// One attempt's time limit.
    public var timeoutSeconds = 10.0
    /// Attempts per event, the first included.
    public var maxAttempts = 6
    /// The wait before the first retry; it doubles with each retry up to `retryMaxSeconds`, and each wait is drawn
    /// between half of it and all of it (jitter), so that many hubs do not retry in step.
    public var retryInitialSeconds = 1.0
    public var retryMaxSeconds = 60.0
    /// Events waiting for this URL beyond which the oldest waiting one is dropped (and counted).
    public var maxQueued = 1000

    enum CodingKeys: String, CodingKey, CaseIterable {
        case url, events, regions, zones, headers, timeoutSeconds, maxAttempts, retryInitialSeconds, retryMaxSeconds
        case maxQueued
    }

    /// Headers that the hub writes itself or that HTTP owns.
    static let reservedHeaders: Set<String> = ["content-type", "content-length", "host", "x-beacontracker-event"]

    public init(url: URL) { self.url = url }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        func invalid(_ key: CodingKeys, _ message: String) -> DecodingError {
            DecodingError.dataCorruptedError(forKey: key, in: container, debugDescription: message)
        }
        let text = try container.decode(String.self, forKey: .url)
        guard let url = URL(string: text), let scheme = url.scheme?.lowercased(), scheme == "http" || scheme == "https",
            url.host?.isEmpty == false
        else {
            throw invalid(.url, "expected an http:// or https:// URL with a host, found \"\(text)\"")
        }
        self.url = url
        if let names = try container.decodeIfPresent([String].self, forKey: .events) {
            let allowed = ZoneEventType.allCases.map(\.rawValue).joined(separator: ", ")
            guard !names.isEmpty else { throw invalid(.events, "empty: omit the key to send every type (\(allowed))") }
            events = try Set(
                names.map { name in
                    guard let type = ZoneEventType(rawValue: name) else {
                        throw invalid(.events, "expected event types from \(allowed), found \"\(name)\"")
                    }
                    return type
                })
        }
        if let regions = try container.decodeIfPresent([String].self, forKey: .regions) {
            guard !regions.isEmpty else { throw invalid(.regions, "empty: omit the key to send events of any region") }
            self.regions = Set(regions)
        }
        if let zones = try container.decodeIfPresent([ZoneID].self, forKey: .zones) {
            guard !zones.isEmpty else { throw invalid(.zones, "empty: omit the key to send events of any zone") }
            self.zones = Set(zones)
        }
        headers = try container.decodeIfPresent([String: String].self, forKey: .headers) ?? [:]
        for (name, value) in headers {
            guard Self.isToken(name) else { throw invalid(.headers, "\"\(name)\" is not a valid HTTP header name") }
            guard !Self.reservedHeaders.contains(name.lowercased()) else {
                throw invalid(.headers, "\"\(name)\" is set by the hub itself")
            }
            guard !value.contains(where: { $0 == "\r" || $0 == "\n" }) else {
                throw invalid(.headers, "the value of \"\(name)\" contains a line break")
            }
        }
        timeoutSeconds = try container.setting(.timeoutSeconds, timeoutSeconds, in: 0.1...300)
        maxAttempts = Int(try container.setting(.maxAttempts, Double(maxAttempts), in: 1...100))
        retryInitialSeconds = try container.setting(.retryInitialSeconds, retryInitialSeconds, in: 0.001...3600)
        retryMaxSeconds = try container.setting(.retryMaxSeconds, retryMaxSeconds, in: retryInitialSeconds...86_400)
        maxQueued = Int(try container.setting(.maxQueued, Double(maxQueued), in: 1...1_000_000))
    }

    /// Whether `event` passes this URL's filters.
    public func accepts(_ event: ZoneEvent) -> Bool {
        guard events.contains(event.type) else { return false }
        if let regions, !(event.region.map(regions.contains) ?? false) { return false }
        if let zones, !(event.zone.map(zones.contains) ?? false) { return false }
        return true
    }

    /// hub.yaml's `webhooks:` list, each `regions:` entry checked against the `regions:` the file defines.
    static func decodeList<Key: CodingKey>(
        from container: KeyedDecodingContainer<Key>, forKey key: Key, regions: [HubRegionSettings]
    ) throws -> [WebhookSettings] {
        let webhooks = try container.decodeIfPresent([WebhookSettings].self, forKey: key) ?? []
        let defined = Set(regions.map(\.region.id))
        for (index, webhook) in webhooks.enumerated() {
            for region in (webhook.regions ?? []).sorted() where !defined.contains(region) {
                throw DecodingError.dataCorruptedError(
                    forKey: key, in: container,
                    debugDescription: "webhook \(index + 1) (\(webhook.url.host ?? "")): region \"\(region)\" is not "
                        + "one of the regions of this file (\(defined.sorted().joined(separator: ", ")))")
            }
        }
        return webhooks
    }

    /// RFC 9110 token characters.
    static func isToken(_ name: String) -> Bool {
        !name.isEmpty
            && name.unicodeScalars.allSatisfy { scalar in
                scalar.isASCII
                    && (CharacterSet.alphanumerics.contains(scalar)
                        || "!#$%&'*+-.^_`|~".unicodeScalars.contains(scalar))
            }
    }
}
