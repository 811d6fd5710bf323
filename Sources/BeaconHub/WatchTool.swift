import BeaconConfig
import BeaconMQTT
import BeaconModel
import Foundation

/// `beacon-hub watch`: the site's events (and, on request, tag states and occupancy) as they are published, one
/// readable line each — what an operator looks at while installing gateways, or a script reads with `--json`.
public enum WatchTool {
    /// The subscriptions: events always; tag states and zone occupancy with `states`.
    public static func filters(_ topics: Topics, states: Bool) -> [String] {
        let base = "\(topics.root)/\(topics.site.rawValue)"
        return [topics.allEvents, "\(base)/hub/status"]
            + (states ? ["\(base)/tags/+/state", "\(base)/zones/+/occupancy"] : [])
    }

    /// One message as a line, or nil for what is not worth a line (an empty retained message).
    public static func line(for message: MQTTMessage, json: Bool) -> String? {
        guard !message.payload.isEmpty else { return nil }
        if json { return "{\"topic\":\(quoted(message.topic)),\"payload\":\(message.text)}" }
        if message.topic.contains("/events/"),
            let event = try? ContractCoding.decode(ZoneEvent.self, from: message.payload)
        {
            return line(for: event)
        }
        if message.topic.hasSuffix("/state"),
            let state = try? ContractCoding.decode(TagState.self, from: message.payload)
        {
            let heard = state.gateways.map { "\($0.gateway) \($0.rssi) dBm" }.joined(separator: ", ")
            return "\(clock(state.lastSeen ?? state.since))  state    \(pad(state.tag.rawValue, 18)) "
                + "\(state.state.rawValue) \(state.zone?.rawValue ?? "-")  [\(heard)]"
        }
        if message.topic.hasSuffix("/occupancy"),
            let occupancy = try? ContractCoding.decode(ZoneOccupancy.self, from: message.payload)
        {
            return "\(clock(occupancy.t))  count    \(pad(occupancy.zone.rawValue, 18)) \(occupancy.count)"
                + (occupancy.tags.isEmpty ? "" : "  (\(occupancy.tags.map(\.rawValue).joined(separator: ", ")))")
        }
        if message.topic.hasSuffix("/hub/status"),
            let status = try? ContractCoding.decode(HubStatus.self, from: message.payload)
        {
            return "\(clock(status.t ?? Date().timeIntervalSince1970))  hub      \(pad(status.hub.rawValue, 18)) "
                + "\(status.state.rawValue)\(status.reason.map { " (\($0))" } ?? "")"
        }
        return "\(clock(Date().timeIntervalSince1970))  ?        \(message.topic): unreadable payload"
    }

    /// An event as a line: time decided, type, tag, zones, confidence, reason.
    public static func line(for event: ZoneEvent) -> String {
        let subject = event.tag?.rawValue ?? event.gateway?.rawValue ?? "-"
        var zones = event.zone?.rawValue ?? "-"
        if event.type == .enter, let previous = event.previousZone { zones = "\(previous) → \(zones)" }
        var extra = ""
        if let dwell = event.dwellSeconds { extra += " after \(Int(dwell.rounded())) s" }
        if let code = event.code { extra += " [\(code)]" }
        return "\(clock(event.t))  \(pad(event.type.rawValue, 8)) \(pad(subject, 18)) \(pad(zones, 22)) "
            + "p=\(String(format: "%.2f", event.confidence))\(extra)  \(event.reason)"
    }

    static func clock(_ t: Double) -> String {
        let formatter = DateFormatter()
        formatter.dateFormat = "HH:mm:ss"
        return formatter.string(from: Date(timeIntervalSince1970: t))
    }

    static func pad(_ text: String, _ width: Int) -> String {
        text.count >= width ? text : text + String(repeating: " ", count: width - text.count)
    }

    static func quoted(_ text: String) -> String {
        (try? ContractCoding.encodeLine(text)) ?? "\"\""
    }
}
