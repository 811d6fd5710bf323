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
}
