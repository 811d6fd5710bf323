import BeaconModel
import Foundation

/// `/api/tags.csv`: the live tags as a spreadsheet opens them (RFC 4180: a header row, CRLF line ends, a field quoted
/// when it holds a comma, a quote or a line break, its quotes doubled). Absent values are empty fields.
enum TagsCSV {
    static let columns = [
        "tag", "beacon", "state", "zone", "lastSeen", "lastSeenZone", "lastSeenGateway", "batteryMilliVolts",
        "batteryLevel", "batteryTrendPerWeek", "missing", "advertsSeenPerMinute", "advertsExpectedPerMinute",
    ]

    static func render(_ tags: [TagState]) -> String {
        var text = line(columns)
        for tag in tags {
            text += line([
                tag.tag.rawValue, tag.beacon, tag.state.rawValue, tag.zone?.rawValue ?? "",
                tag.lastSeen.map(isoTime) ?? "", tag.lastSeenZone?.rawValue ?? "", tag.lastSeenGateway?.rawValue ?? "",
                tag.battery.map { String($0.milliVolts) } ?? "", tag.battery?.level.rawValue ?? "",
                tag.battery?.trendPerWeek.map(number) ?? "", tag.missing == true ? "true" : "false",
                tag.adverts.map { number($0.seenPerMinute) } ?? "",
                tag.adverts?.expectedPerMinute.map(number) ?? "",
            ])
        }
        return text
    }

    static func line(_ fields: [String]) -> String {
        fields.map(field).joined(separator: ",") + "\r\n"
    }

    static func field(_ value: String) -> String {
        guard value.contains(where: { $0 == "," || $0 == "\"" || $0 == "\n" || $0 == "\r" }) else { return value }
        return "\"" + value.replacingOccurrences(of: "\"", with: "\"\"") + "\""
    }

    /// ISO 8601 in UTC to the second (`2027-01-15T08:00:00Z`): what spreadsheets read as a time.
    static func isoTime(_ t: Double) -> String {
        Date(timeIntervalSince1970: t.rounded(.down)).formatted(.iso8601)
    }

    /// As JSON writes it: no `.0` on whole numbers.
    static func number(_ value: Double) -> String {
        value == value.rounded() && abs(value) < 1e15 ? String(Int(value)) : String(value)
    }
}
