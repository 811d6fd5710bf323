import BeaconAgent
import BeaconDecoding
import Foundation
import Testing

/// Vectors from public projects' tests and docs, and vectors built from the specs (Apple Proximity Beacon,
/// google/eddystone, AltBeacon). Each expected record is compared field by field.
@Suite struct DecodeToolTests {
    struct Vector: Sendable, CustomTestStringConvertible {
        let name: String
        let hex: String
        let expected: [[String: DecodeTool.Line.Value]]
        var testDescription: String { name }
    }

    static let vectors: [Vector] = [
        // Published vectors (bluetooth_sniffle's ground-truth fixtures).
        Vector(
            name: "iBeacon (published)", hex: "0201061aff4c000215e2c56db5dffb48d2b060d0f5a71096e000010002c5",
            expected: [
                [
                    "kind": .string("ibeacon"), "id": .string("ibeacon:e2c56db5-dffb-48d2-b060-d0f5a71096e0:1:2"),
                    "uuid": .string("E2C56DB5-DFFB-48D2-B060-D0F5A71096E0"), "major": .int(1), "minor": .int(2),
                    "txPower": .int(-59),
                ]
            ]),
        Vector(
            name: "AltBeacon (published)", hex: "0201061bff1801beace2c56db5dffb48d2b060d0f5a71096e000010002c500",
            expected: [
                [
                    "kind": .string("altbeacon"), "id": .string("altbeacon:e2c56db5-dffb-48d2-b060-d0f5a71096e0:1:2"),
                    "id1": .string("E2C56DB5-DFFB-48D2-B060-D0F5A71096E0"), "id2": .int(1), "id3": .int(2),
                    "txPower": .int(-59), "manufacturer": .int(0x0118), "reserved": .int(0),
                ]
            ]),
        Vector(
            name: "Eddystone-UID (published)",
            hex: "0201060303aafe1716aafe00ec0102030405060708090a0102030405060000",
            expected: [
                [
                    "kind": .string("eddystone-uid"), "id": .string("eddystone-uid:0102030405060708090a:010203040506"),
                    "namespace": .string("0102030405060708090a"), "instance": .string("010203040506"),
                    "txPower": .int(-20),
                ]
            ]),
        Vector(
            name: "Eddystone-URL (published)", hex: "0201060303aafe1216aafe10ee036578616d706c650074657374",
            expected: [
                [
                    "kind": .string("eddystone-url"), "id": .string("eddystone-url:https://example.com/test"),
                    "url": .string("https://example.com/test"), "txPower": .int(-18),
                ]
            ]),
        Vector(
            name: "Eddystone-TLM (published)", hex: "0201060303aafe1116aafe20000bb81480000003e800002710",
            expected: [
                [
                    "kind": .string("eddystone-tlm"), "version": .int(0), "batteryMillivolts": .int(3000),
                    "temperature": .double(20.5), "advertisementCount": .int(1000), "uptime": .double(1000),
                ]
            ]),
        // ruuvitag-sensor's README URL frame, as advertising data.
        Vector(
            name: "Eddystone-URL (ruuvi)", hex: "0201060303AAFE1616AAFE10EE037275752E7669232A6843744641424644",
            expected: [
                [
                    "kind": .string("eddystone-url"), "url": .string("https://ruu.vi#*hCtFABFD"), "txPower": .int(-18),
                    "id": .string("eddystone-url:https://ruu.vi#*hCtFABFD"),
                ]
            ]),
        // Built from the specs.
        Vector(
            name: "Eddystone-UID without the reserved bytes",
            hex: "0201060303aafe1516aafe00e8edd1ebeac04e5defa0170123456789ab",
            expected: [
                [
                    "kind": .string("eddystone-uid"), "namespace": .string("edd1ebeac04e5defa017"),
                    "instance": .string("0123456789ab"), "txPower": .int(-24),
                    "id": .string("eddystone-uid:edd1ebeac04e5defa017:0123456789ab"),
                ]
            ]),
        Vector(
            name: "Eddystone-TLM without temperature", hex: "0201060303aafe1116aafe20000bb880000000000100000064",
            expected: [
                [
                    "kind": .string("eddystone-tlm"), "version": .int(0), "batteryMillivolts": .int(3000),
                    "temperature": .null, "advertisementCount": .int(1), "uptime": .double(10),
                ]
            ]),
        Vector(
            name: "Eddystone-TLM negative temperature", hex: "0201060303aafe1116aafe20000000fe80000000000000000a",
            expected: [
                [
                    "kind": .string("eddystone-tlm"), "version": .int(0), "batteryMillivolts": .int(0),
                    "temperature": .double(-1.5), "advertisementCount": .int(0), "uptime": .double(1),
                ]
            ]),
        Vector(
            name: "Eddystone-TLM encrypted", hex: "0201060303aafe1516aafe2001" + String(repeating: "ab", count: 16),
            expected: [["kind": .string("eddystone-tlm"), "version": .int(1), "encrypted": .bool(true)]]),
        Vector(
            name: "Eddystone-EID", hex: "0201060303aafe0d16aafe30f01a2b3c4d5e6f7081",
            expected: [
                [
                    "kind": .string("eddystone-eid"), "eid": .string("1a2b3c4d5e6f7081"), "txPower": .int(-16),
                    "id": .string("eddystone-eid:1a2b3c4d5e6f7081"),
                ]
            ]),
        Vector(
            name: "Eddystone-URL with expansion codes", hex: "0b16aafe10f5006162630701",
            expected: [
                [
                    "kind": .string("eddystone-url"), "url": .string("http://www.abc.com.org/"), "txPower": .int(-11),
                    "id": .string("eddystone-url:http://www.abc.com.org/"),
                ]
            ]),
        Vector(
            name: "two beacon frames in one advertisement",
            hex: "1aff4c000215e2c56db5dffb48d2b060d0f5a71096e000010002c5" + "0d16aafe30f01a2b3c4d5e6f7081",
            expected: [
                ["kind": .string("ibeacon"), "id": .string("ibeacon:e2c56db5-dffb-48d2-b060-d0f5a71096e0:1:2")],
                ["kind": .string("eddystone-eid"), "id": .string("eddystone-eid:1a2b3c4d5e6f7081")],
            ]),
        // Look-alikes: a known prefix with the wrong length, another company's 0x02 0x15, Apple's other types.
        Vector(
            name: "iBeacon look-alike one byte short",
            hex: "0201061aff4c000215e2c56db5dffb48d2b060d0f5a71096e0000100c5"
                .replacingOccurrences(of: "1aff", with: "19ff"),
            expected: [["kind": .string("none")]]),
        Vector(
            name: "0x02 0x15 from another company", hex: "1aff59000215e2c56db5dffb48d2b060d0f5a71096e000010002c5",
            expected: [["kind": .string("none")]]),
        Vector(
            name: "Apple handoff (not a beacon)", hex: "0eff4c000c0e00a5b3c2d1e0f1a2b3",
            expected: [["kind": .string("none")]]),
        Vector(name: "flags and a name", hex: "0201060409414243", expected: [["kind": .string("none")]]),
        Vector(
            name: "Eddystone-URL with a reserved byte", hex: "0816aafe10f5006115",
            expected: [["kind": .string("none")]]),
        Vector(name: "unknown Eddystone frame", hex: "0516aafe5012", expected: [["kind": .string("none")]]),
        Vector(name: "zero-length padding ends the data", hex: "02010600000000", expected: [["kind": .string("none")]]),
        // Malformed framing.
        Vector(
            name: "android-beacon-library TLM test vector: its AD length runs past the data",
            hex: "0201060303aafe1516aafe2001021203130414243405152535",
            expected: [["kind": .string("error")]]),
        Vector(name: "AD length past the end", hex: "0201061aff4c00", expected: [["kind": .string("error")]]),
        Vector(name: "not hex", hex: "02zz", expected: [["kind": .string("error")]]),
        Vector(name: "odd number of digits", hex: "020", expected: [["kind": .string("error")]]),
    ]

    @Test(arguments: vectors)
    func decodesVector(_ vector: Vector) {
        let lines = DecodeTool.decode(vector.hex, format: .ad)
        #expect(lines.count == vector.expected.count)
        for (line, expected) in zip(lines, vector.expected) {
            for (key, value) in expected {
                #expect(line.fields[key] == value, "\(key)")
            }
            if line.kind == "error" { #expect(line.fields["error"] != nil) }
            if line.kind == "none" || line.kind == "error" { #expect(line.fields["id"] == nil) }
        }
    }

    /// An LE Advertising Report event built from the ruuvi frame, with two reports: each gives its own line with
    /// the report's address, address type and RSSI merged in.
    @Test func hciEventWithTwoReportsGivesTwoLines() throws {
        let ad = "0201060303AAFE1716AAFE10F9037275752E76692F23416A5558314D417730"
        let report1 = "03" + "01" + "A5748916571F" + "1F" + ad + "C3"
        let ibeacon = "0201061aff4c000215e2c56db5dffb48d2b060d0f5a71096e000010002c5"
        let report2 = "00" + "00" + "665544332211" + String(format: "%02X", ibeacon.count / 2) + ibeacon + "B0"
        let parameters = "02" + "02" + report1 + report2
        let event = "043E" + String(format: "%02X", parameters.count / 2) + parameters
        let lines = DecodeTool.decode(event, format: .auto)
        #expect(lines.count == 2)
        #expect(lines[0].fields["kind"] == .string("eddystone-url"))
        #expect(lines[0].fields["url"] == .string("https://ruu.vi/#AjUX1MAw0"))
        #expect(lines[0].fields["address"] == .string("1F:57:16:89:74:A5"))
        #expect(lines[0].fields["addressType"] == .string("random"))
        #expect(lines[0].fields["rssi"] == .int(-61))
        #expect(lines[1].fields["kind"] == .string("ibeacon"))
        #expect(lines[1].fields["address"] == .string("11:22:33:44:55:66"))
        #expect(lines[1].fields["addressType"] == .string("public"))
        #expect(lines[1].fields["rssi"] == .int(-80))
        // Without the H4 byte, and forced as hci, the same.
        #expect(DecodeTool.decode(String(event.dropFirst(2)), format: .auto) == lines)
        #expect(DecodeTool.decode(event, format: .hci) == lines)
    }

    /// ruuvitag-sensor's README event has a 5-byte address: its lengths disagree, so it is malformed.
    @Test func publishedEventWithInconsistentLengthsIsAnError() {
        let lines = DecodeTool.decode(
            "043E2A0201030157168974A51F0201060303AAFE1716AAFE10F9037275752E76692F23416A5558314D417730C3",
            format: .auto)
        #expect(lines.map(\.kind) == ["error"])
    }

    @Test func extendedReportFromTheAndroidCapture() throws {
        // The first LE Extended Advertising Report of btsnoop-rs's Android capture (legacy PDU bit set).
        let capture = try BTSnoopCapture(
            bytes: Array(try Data(contentsOf: RecordedData.btsnoop("btsnoop-rs__btsnoop_hci_android.log"))))
        let event = try #require(capture.hciEvents().first { $0.event.count > 3 && $0.event[2] == 0x0D })
        let lines = DecodeTool.decode(event.event.hexString, format: .hci)
        #expect(lines.count == 1)
        #expect(lines[0].kind == "none")
        #expect(lines[0].fields["addressType"] == .string("random"))
        if case .int(let rssi) = lines[0].fields["rssi"] {
            #expect((-127)...0 ~= rssi)
        } else {
            Issue.record("no rssi")
        }
    }

    @Test func toolReportsMalformedInputForExitStatus() {
        let (lines, malformed) = DecodeTool.run(["0201060409414243", "", "0201061aff4c00"], format: .auto)
        #expect(lines.count == 2)
        #expect(malformed)
        #expect(!DecodeTool.run(["0201060409414243"], format: .auto).malformed)
    }

    /// Random bytes never crash the decoder and never come out as a beacon unless the bytes really are one.
    @Test func randomBytesNeverCrashOrInventBeacons() {
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<20_000 {
            let count = Int.random(in: 0...64, using: &generator)
            let bytes = (0..<count).map { _ in UInt8.random(in: 0...255, using: &generator) }
            let hex = bytes.hexString
            for line in DecodeTool.decode(hex, format: .ad) + DecodeTool.decode("3e" + hex, format: .hci) {
                #expect(
                    ["none", "error", "ibeacon", "altbeacon"].contains(line.kind) || line.kind.hasPrefix("eddystone"))
            }
        }
    }
}

/// Paths of the recorded data in the repository's data/recorded (data/recorded/README.md), or in
/// `$BEACONTRACKER_RECORDED_DATA` when set.
enum RecordedData {
    static func btsnoop(_ name: String) -> URL {
        let root =
            ProcessInfo.processInfo.environment["BEACONTRACKER_RECORDED_DATA"].map { URL(fileURLWithPath: $0) }
            ?? URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("data/recorded")
        return root.appendingPathComponent("btsnoop/\(name)")
    }
}
