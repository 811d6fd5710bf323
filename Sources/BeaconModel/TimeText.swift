import Foundation

/// Times as people type them on a command line or in a URL: unix seconds or ISO-8601 (with an offset, fractional
/// seconds, or local time without offset), and as the project prints them.
public enum TimeText {
    /// Why a time could not be read, with the forms that are understood.
    public struct ParseError: Error, Sendable, CustomStringConvertible {
        public var text: String
        public var description: String {
            "cannot read the time \"\(text)\": give unix seconds (1763907000) or ISO-8601 (2026-11-23T14:30:00Z, "
                + "2026-11-23T14:30:00+01:00, or local time: 2026-11-23T14:30, 2026-11-23)"
        }
    }

    /// Unix seconds from `text`; a time without offset is local to `timeZone`.
    public static func parse(_ text: String, timeZone: TimeZone = .current) throws(ParseError) -> Double {
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        if let seconds = Double(trimmed), seconds.isFinite { return seconds }
        for options: ISO8601DateFormatter.Options in [
            [.withInternetDateTime], [.withInternetDateTime, .withFractionalSeconds],
        ] {
            let formatter = ISO8601DateFormatter()
            formatter.formatOptions = options
            if let date = formatter.date(from: trimmed) { return date.timeIntervalSince1970 }
        }
        for pattern in [
            "yyyy-MM-dd'T'HH:mm:ss.SSS", "yyyy-MM-dd'T'HH:mm:ss", "yyyy-MM-dd'T'HH:mm", "yyyy-MM-dd HH:mm:ss",
            "yyyy-MM-dd HH:mm", "yyyy-MM-dd",
        ] {
            let formatter = DateFormatter()
            formatter.locale = Locale(identifier: "en_US_POSIX")
            formatter.timeZone = timeZone
            formatter.dateFormat = pattern
            if let date = formatter.date(from: trimmed) { return date.timeIntervalSince1970 }
        }
        throw ParseError(text: text)
    }

    /// ISO-8601 with the offset of `timeZone`, to the second.
    public static func format(_ t: Double, timeZone: TimeZone = .current) -> String {
        let formatter = ISO8601DateFormatter()
        formatter.timeZone = timeZone
        formatter.formatOptions = [.withInternetDateTime]
        return formatter.string(from: Date(timeIntervalSince1970: t.rounded(.down)))
    }
}
