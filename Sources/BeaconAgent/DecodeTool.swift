import BeaconDecoding
import BeaconModel
import Foundation

/// `beacon-agent decode`: hex advertisements or HCI events in, one JSON object per (report, beacon frame) out.
/// A user's debugging tool and our test surface; the field names are public (docs/agent.md).
public enum DecodeTool {
    /// What the input bytes are.
    public enum Format: String, Sendable, CaseIterable {
        /// `hci` when the bytes start with 0x04 0x3E or 0x3E, else `ad`.
        case auto
        /// Advertising data: a sequence of AD structures.
        case ad
        /// An HCI LE (Extended) Advertising Report event, with or without the H4 type byte 0x04.
        case hci
    }

    /// The lines for all inputs, and whether any input was malformed (exit status 65).
    public static func run(_ inputs: [String], format: Format) -> (lines: [String], malformed: Bool) {
        var lines: [String] = []
        var malformed = false
        for input in inputs where !input.trimmingCharacters(in: .whitespaces).isEmpty {
            for line in decode(input, format: format) {
                if line.kind == "error" { malformed = true }
                lines.append(line.json)
            }
        }
        return (lines, malformed)
    }

    /// Decodes one hex input into output records.
    public static func decode(_ hex: String, format: Format) -> [Line] {
        guard let bytes = BeaconDecoding.bytes(fromHex: hex) else {
            return [Line.error("not hex: expected pairs of hex digits without separators")]
        }
        let isHCI: Bool
        switch format {
        case .ad: isHCI = false
        case .hci: isHCI = true
        case .auto: isHCI = bytes.starts(with: [0x04, 0x3E]) || bytes.first == 0x3E
        }
        guard isHCI else { return lines(forAdvertisingData: bytes, report: nil) }
        let event = bytes.first == 0x04 ? Array(bytes.dropFirst()) : bytes
        do {
            guard let reports = try HCIEventParser.advertisingReports(inEvent: event) else {
                return [
                    Line.error(
                        "not an LE advertising report event (event code 0x\(event.first.map { String($0, radix: 16) } ?? "?"))"
                    )
                ]
            }
            return reports.flatMap { lines(forAdvertisingData: $0.data, report: $0) }
        } catch {
            return [Line.error(error.message)]
        }
    }

    private static func lines(forAdvertisingData data: [UInt8], report: AdvertisingReport?) -> [Line] {
        var base = Line()
        if let report {
            base.fields["address"] = .string(report.addressString)
            base.fields["addressType"] = .string(report.isPublicAddress ? "public" : "random")
            base.fields["rssi"] = report.rssi.map { .int($0) } ?? .null
            base.fields["eventType"] = .int(Int(report.eventType))
        }
        let result: BeaconDecoder.Result
        do {
            result = try BeaconDecoder.decode(data)
        } catch {
            var line = base
            line.set(kind: "error")
            line.fields["error"] = .string(error.message)
            return [line]
        }
        guard !result.frames.isEmpty else {
            var line = base
            line.set(kind: "none")
            if !result.notes.isEmpty { line.fields["note"] = .string(result.notes.joined(separator: "; ")) }
            return [line]
        }
        return result.frames.map { frame in
            var line = base
            line.set(kind: frame.kind.rawValue)
            if let id = frame.beaconID { line.fields["id"] = .string(id) }
            switch frame {
            case .iBeacon(let f):
                line.fields["uuid"] = .string(uuidString(f.uuid, uppercase: true))
                line.fields["major"] = .int(Int(f.major))
                line.fields["minor"] = .int(Int(f.minor))
                line.fields["txPower"] = .int(Int(f.txPower))
            case .altBeacon(let f):
                line.fields["id1"] = .string(uuidString(f.id1, uppercase: true))
                line.fields["id2"] = .int(Int(f.id2))
                line.fields["id3"] = .int(Int(f.id3))
                line.fields["txPower"] = .int(Int(f.txPower))
                line.fields["manufacturer"] = .int(Int(f.manufacturer))
                line.fields["reserved"] = .int(Int(f.reserved))
            case .eddystoneUID(let f):
                line.fields["namespace"] = .string(f.namespace.hexString)
                line.fields["instance"] = .string(f.instance.hexString)
                line.fields["txPower"] = .int(Int(f.txPower0m))
            case .eddystoneURL(let f):
                line.fields["url"] = .string(f.url)
                line.fields["txPower"] = .int(Int(f.txPower0m))
            case .eddystoneEID(let f):
                line.fields["eid"] = .string(f.eid.hexString)
                line.fields["txPower"] = .int(Int(f.txPower0m))
            case .eddystoneTLM(.plain(let battery, let temperature, let count, let uptime)):
                line.fields["version"] = .int(0)
                line.fields["batteryMillivolts"] = .int(Int(battery))
                line.fields["temperature"] = temperature.map { .double($0) } ?? .null
                line.fields["advertisementCount"] = .int(Int(count))
                line.fields["uptime"] = .double(uptime)
            case .eddystoneTLM(.encrypted):
                line.fields["version"] = .int(1)
                line.fields["encrypted"] = .bool(true)
            }
            return line
        }
    }

    /// One output object; keys are written sorted so equal records print identically.
    public struct Line: Sendable, Hashable {
        /// A JSON value of the output.
        public enum Value: Sendable, Hashable {
            case string(String), int(Int), double(Double), bool(Bool), null
        }

        public var fields: [String: Value] = [:]

        public var kind: String {
            if case .string(let kind) = fields["kind"] { return kind }
            return ""
        }

        mutating func set(kind: String) { fields["kind"] = .string(kind) }

        static func error(_ message: String) -> Line {
            Line(fields: ["kind": .string("error"), "error": .string(message)])
        }

        /// The record as one line of JSON.
        public var json: String {
            let object = fields.mapValues { value -> Any in
                switch value {
                case .string(let text): text
                case .int(let number): number
                case .double(let number): number
                case .bool(let flag): flag
                case .null: NSNull()
                }
            }
            let data =
                (try? JSONSerialization.data(
                    withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes])) ?? Data("{}".utf8)
            return String(decoding: data, as: UTF8.self)
        }
    }
}
