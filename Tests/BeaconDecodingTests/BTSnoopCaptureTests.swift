import BeaconAgent
import BeaconDecoding
import Foundation
import Testing

/// The real captures in data/recorded/btsnoop (MIT; see its README): they hold non-beacon traffic only, which must
/// be parsed and ignored.
@Suite struct BTSnoopCaptureTests {
    func load(_ name: String) throws -> BTSnoopCapture {
        try BTSnoopCapture(bytes: Array(try Data(contentsOf: RecordedData.btsnoop(name))))
    }

    @Test func androidH4CaptureWithLegacyReports() throws {
        let capture = try load("btsnoop-decoder__btsnoop_hci.log")
        #expect(capture.datalink == .h4)
        #expect(capture.records.count == 69)
        #expect(!capture.truncatedTail)
        let events = capture.hciEvents()
        #expect(events.count == 47)
        var reports: [AdvertisingReport] = []
        for event in events {
            if let found = try HCIEventParser.advertisingReports(inEvent: event.event) { reports += found }
        }
        #expect(reports.count == 59)
        #expect(Set(reports.map(\.eventType)) == [0, 4])
        #expect(Set(reports.map(\.address)).count == 11)
        // The README's devices include an Apple 0x004C handoff: look-alike, not a beacon.
        let frames = try reports.flatMap { try BeaconDecoder.decode($0.data).frames }
        #expect(frames.isEmpty)
        #expect(events.first.map { $0.timestamp > 1_400_000_000 && $0.timestamp < 1_500_000_000 } == true)
    }

    @Test func androidH4CaptureWithExtendedReports() throws {
        let capture = try load("btsnoop-rs__btsnoop_hci_android.log")
        #expect(capture.records.count == 222)
        var extended = 0
        for event in capture.hciEvents() {
            for report in try HCIEventParser.advertisingReports(inEvent: event.event) ?? [] {
                #expect(report.extended)
                #expect(report.eventType & 0x10 != 0)  // legacy PDU bit
                #expect(try BeaconDecoder.decode(report.data).frames.isEmpty)
                extended += 1
            }
        }
        #expect(extended == 12)
    }

    @Test func btmonMonitorCaptureHasEventsButNoReports() throws {
        let capture = try load("btsnoop-rs__btsnoop_btmon.log")
        #expect(capture.datalink == .monitor)
        #expect(capture.records.count == 554)
        let events = capture.hciEvents()
        #expect(events.count == 56)
        for event in events {
            #expect(try HCIEventParser.advertisingReports(inEvent: event.event) == nil)
        }
    }

    @Test func truncatedCaptureKeepsItsCompleteRecords() throws {
        let bytes = Array(try Data(contentsOf: RecordedData.btsnoop("btsnoop-decoder__btsnoop_hci.log")))
        let capture = try BTSnoopCapture(bytes: Array(bytes.dropLast(5)))
        #expect(capture.truncatedTail)
        #expect(capture.records.count == 68)
    }

    @Test(arguments: [[UInt8](), Array("notsnoop00000000".utf8), Array("btsnoop\0\0\0\0\u{1}\0\0\u{3}\u{e9}".utf8)])
    func refusesWhatIsNotACapture(bytes: [UInt8]) {
        #expect(throws: DecodeError.self) { _ = try BTSnoopCapture(bytes: bytes) }
    }

    // MARK: Reading the file as it goes (replay)

    static let captures = [
        "btsnoop-decoder__btsnoop_hci.log", "btsnoop-rs__btsnoop_hci_android.log", "btsnoop-rs__btsnoop_btmon.log",
    ]

    func events(_ reader: BTSnoopFileReader) throws -> [BTSnoopCapture.TimedEvent] {
        var events: [BTSnoopCapture.TimedEvent] = []
        while let event = try reader.nextEvent() { events.append(event) }
        return events
    }

    /// The same events as the whole file parsed at once, with buffers far smaller than the file (records straddle
    /// every refill) and with the default one.
    @Test(arguments: captures)
    func fileReaderGivesTheCapturesEvents(name: String) throws {
        let whole = try load(name)
        for chunk in [64, 100, 1_000, 64 * 1024] {
            let reader = try BTSnoopFileReader(path: RecordedData.btsnoop(name).path, chunk: chunk)
            #expect(reader.datalink == whole.datalink)
            #expect(try events(reader) == whole.hciEvents(), "chunk \(chunk)")
            #expect(!reader.truncatedTail)
            #expect(try reader.nextEvent() == nil)
        }
    }

    @Test func fileReaderStopsAtACutRecord() throws {
        let bytes = Array(try Data(contentsOf: RecordedData.btsnoop("btsnoop-decoder__btsnoop_hci.log")))
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("btsnoop-\(UUID())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        for cut in [1, 5, 30] {
            let file = directory.appendingPathComponent("cut-\(cut).log")
            try Data(bytes.dropLast(cut)).write(to: file)
            let whole = try BTSnoopCapture(bytes: Array(bytes.dropLast(cut)))
            let reader = try BTSnoopFileReader(path: file.path, chunk: 64)
            #expect(try events(reader) == whole.hciEvents())
            #expect(reader.truncatedTail == whole.truncatedTail)
            #expect(reader.truncatedTail)
        }
        // A record declaring 4 GiB in a small file: cut short, not an attempt to read 4 GiB.
        var huge = Array(bytes.prefix(16)) + [0, 0, 0, 9, 0xFF, 0xFF, 0xFF, 0xF0] + [UInt8](repeating: 0, count: 40)
        huge[16 + 3] = 9
        let file = directory.appendingPathComponent("huge.log")
        try Data(huge).write(to: file)
        let reader = try BTSnoopFileReader(path: file.path)
        #expect(try reader.nextEvent() == nil)
        #expect(reader.truncatedTail)
    }

    @Test func fileReaderNamesTheFileItCannotRead() throws {
        let missing = "/nonexistent/capture.btsnoop"
        let error = try #require(throws: DecodeError.self) { _ = try BTSnoopFileReader(path: missing) }
        #expect(error.message.contains(missing) && error.message.contains("No such file"))
        let notCapture = FileManager.default.temporaryDirectory.appendingPathComponent("notsnoop-\(UUID()).log")
        try Data("notsnoop00000000 and more".utf8).write(to: notCapture)
        defer { try? FileManager.default.removeItem(at: notCapture) }
        let refused = try #require(throws: DecodeError.self) { _ = try BTSnoopFileReader(path: notCapture.path) }
        #expect(refused.message.contains(notCapture.path) && refused.message.contains("not a btsnoop capture"))
    }
}
