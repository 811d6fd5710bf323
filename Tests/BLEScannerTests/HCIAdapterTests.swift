import BLEScanner
import BeaconDecoding
import Foundation
import Glibc
import Synchronization
import Testing

/// The scanner's real code path with the OS calls substituted at the CBluetooth shim: errors injected there, and
/// recorded HCI packets fed through the same read path from a pipe. Serialized: the seam is process-wide.
@Suite(.serialized, .timeLimit(.minutes(1)))
struct HCIScannerTests {
    @Test(arguments: [
        (EAFNOSUPPORT, HCIError.Code.noBluetoothInKernel, "replay"),
        (ENODEV, .noAdapter, "btmgmt info"),
        (ENETDOWN, .adapterDown, "power on"),
        (ERFKILL, .blocked, "rfkill unblock"),
        (EPERM, .permissionDenied, "CAP_NET_RAW"),
        (EACCES, .permissionDenied, "CAP_NET_ADMIN"),
        (EBUSY, .busy, "another program"),
    ])
    func osErrorsBecomeOperatorFixes(errno value: Int32, code: HCIError.Code, fix: String) {
        let error = HCIError.fromErrno(value, adapter: "hci0")
        #expect(error.code == code)
        #expect(error.message.contains(fix))
    }

    /// The real libbluetooth path. This machine's kernel has no AF_BLUETOOTH, so the open must fail with the
    /// kernel's error; on a Pi with an adapter it opens (docs/agent.md lists the on-Pi checks).
    @Test func openingAnAdapterReportsWhyItCannot() async {
        await HCITestSeam.exclusive {
            let probe = socket(31 /* AF_BLUETOOTH */, Int32(SOCK_RAW.rawValue), 1 /* BTPROTO_HCI */)
            let kernelError = errno
            if probe >= 0 { close(probe) }
            guard probe < 0, kernelError == EAFNOSUPPORT else { return }
            #expect(throws: HCIError.fromErrno(EAFNOSUPPORT, adapter: "hci0")) {
                _ = try HCIAdapter.open("hci0")
            }
        }
    }

    /// Recorded packets through the same read path: every report of every LE advertising event comes out; other
    /// events and a malformed one are skipped.
    @Test func recordedPacketsFlowThroughTheReadPath() async throws {
        try await HCITestSeam.withPipe { pipe in
            let ibeacon = bytes(fromHex: "0201061aff4c000215e2c56db5dffb48d2b060d0f5a71096e000010002c5")!
            var packets: [[UInt8]] = []
            for index in 0..<20 {
                packets.append(
                    [0x04]
                        + BTSnoopWriter.advertisingReportEvent(
                            address: [1, 2, 3, 4, 5, UInt8(index)], rssi: Int8(-40 - index), data: ibeacon))
            }
            packets.insert([0x04, 0x0E, 0x04, 0x01, 0x0C, 0x20, 0x00], at: 5)  // Command Complete: not a report
            packets.insert([0x04, 0x3E, 0x05, 0x02, 0x01, 0x00], at: 9)  // lengths disagree: skipped, counted
            for packet in packets { pipe.write(packet) }

            let scanner = HCIScanner(settings: HCIScanner.Settings(restartAfterSilence: .seconds(30)))
            scanner.start()
            var reports: [AdvertisingReport] = []
            var states: [HCIScanner.Event] = []
            var slices = 0
            var malformed = 0
            var forwarded = 0
            for await event in scanner.events {
                switch event {
                case .events(let slice):
                    forwarded += slice.count
                    for timed in slice {
                        do { reports += try HCIEventParser.advertisingReports(inEvent: timed.event) ?? [] } catch {
                            malformed += 1
                        }
                    }
                    slices += 1
                default: states.append(event)
                }
                if reports.count == 20 { break }
            }
            await scanner.stop()
            #expect(states.first == .scanning)
            #expect(reports.map(\.rssi) == (0..<20).map { -40 - $0 })
            #expect(reports.last?.addressString == "01:02:03:04:05:13")
            // The command complete stayed in the scanner; the broken event went on, for the pipeline to count.
            #expect(malformed == 1 && forwarded == 21)
            // What the socket held was read in one go and handed on as one slice, not an event per advertisement.
            #expect(slices == 1)
            #expect(HCITestSeam.calls(.scanParameters) == 1)
            #expect(HCITestSeam.calls(.filter) == 1)
        }
    }

    /// Missing permissions, then the adapter vanishes mid-scan: each is reported, and scanning comes back by itself
    /// with its scan state restored.
    @Test func retriesAndRestoresScanningAfterFailures() async throws {
        try await HCITestSeam.withPipe { pipe in
            HCITestSeam.inject(.open, EPERM, count: 1)
            let scanner = HCIScanner(
                settings: HCIScanner.Settings(retryMinimum: .milliseconds(20), retryMaximum: .milliseconds(100)))
            scanner.start()
            var iterator = scanner.events.makeAsyncIterator()
            let first = await iterator.next()
            #expect(first == .unavailable(HCIError.fromErrno(EPERM, adapter: "hci0")))
            #expect(await iterator.next() == .scanning)

            HCITestSeam.inject(.read, ENODEV, count: 1)  // unplugged
            pipe.write([0x04, 0x0E, 0x01, 0x00])  // wakes the read so the injected error is seen
            #expect(await iterator.next() == .unavailable(HCIError.fromErrno(ENODEV, adapter: "hci0")))
            #expect(await iterator.next() == .scanning)
            await scanner.stop()
            #expect(HCITestSeam.calls(.scanParameters) == 2)
        }
    }

    /// Silence longer than `restartAfterSilence` switches scanning on again (a reset by another program stops it).
    @Test func silenceRestartsScanning() async throws {
        try await HCITestSeam.withPipe { pipe in
            let scanner = HCIScanner(settings: HCIScanner.Settings(restartAfterSilence: .milliseconds(300)))
            scanner.start()
            var iterator = scanner.events.makeAsyncIterator()
            #expect(await iterator.next() == .scanning)
            #expect(await iterator.next() == .restarted)
            await scanner.stop()
            #expect(HCITestSeam.calls(.scanParameters) >= 2)
        }
    }
}

/// Scan times come from the kernel's receive timestamps (HCI_TIME_STAMP on the adapter; SO_TIMESTAMP on the seam's
/// socket pair), so the reader's pause between slices costs no timing accuracy. (In the serialized suite: the seam is
/// process-wide.)
extension HCIScannerTests {
    /// A control message as the kernel writes it: header, then the data, padded to the alignment of a long.
    static func controlMessage(level: Int32, type: Int32, data: [UInt8]) -> [UInt8] {
        var header = cmsghdr()
        header.cmsg_len = .init(MemoryLayout<cmsghdr>.size + data.count)
        header.cmsg_level = level
        header.cmsg_type = type
        var bytes = withUnsafeBytes(of: header) { Array($0) } + data
        while bytes.count % MemoryLayout<Int>.size != 0 { bytes.append(0) }
        return bytes
    }

    static func timestamp(_ control: [UInt8]) -> Double {
        HCIAdapter.receiveTime(inControl: control) ?? 0
    }

    @Test func theHCISocketsTimestampIsReadInEitherWidth() {
        let seconds: Int64 = 1_764_000_000
        let wide = withUnsafeBytes(of: seconds) { Array($0) } + withUnsafeBytes(of: Int64(250_000)) { Array($0) }
        let narrow =
            withUnsafeBytes(of: Int32(truncatingIfNeeded: seconds)) { Array($0) }
            + withUnsafeBytes(of: Int32(500_000)) { Array($0) }
        let direction = Self.controlMessage(level: 0, type: 1 /* HCI_CMSG_DIR */, data: [1, 0, 0, 0])
        // SOL_HCI is 0, HCI_CMSG_TSTAMP 2.
        #expect(Self.timestamp(direction + Self.controlMessage(level: 0, type: 2, data: wide)) == 1_764_000_000.25)
        #expect(Self.timestamp(Self.controlMessage(level: 0, type: 2, data: narrow)) == 1_764_000_000.5)
        #expect(Self.timestamp(direction) == 0)
        #expect(Self.timestamp([]) == 0)
    }

    @Test func packetsCarryTheirReceiveTimeNotTheReadTime() async throws {
        try await HCITestSeam.withPipe { pipe in
            let ibeacon = bytes(fromHex: "0201061aff4c000215e2c56db5dffb48d2b060d0f5a71096e000010002c5")!
            let written = Date().timeIntervalSince1970
            for index in 0..<5 {
                pipe.write(
                    [0x04]
                        + BTSnoopWriter.advertisingReportEvent(
                            address: [1, 2, 3, 4, 5, UInt8(index)], rssi: -50, data: ibeacon))
            }
            // The packets wait in the socket well beyond a slice before the reader starts.
            try await Task.sleep(for: .milliseconds(600))
            let read = Date().timeIntervalSince1970
            let slices = Mutex<[[TimedHCIEvent]]>([])
            let scanner = HCIScanner(settings: HCIScanner.Settings(restartAfterSilence: .seconds(30))) { slice in
                slices.withLock { $0.append(slice) }
            }
            scanner.start()
            let deadline = ContinuousClock.now.advanced(by: .seconds(30))
            while slices.withLock({ $0.flatMap { $0 }.count }) < 5 && ContinuousClock.now < deadline {
                try await Task.sleep(for: .milliseconds(10))
            }
            await scanner.stop()
            let times = slices.withLock { $0.flatMap { $0 }.map(\.time) }
            #expect(times.count == 5)
            // Stamped when written, not when read (at least 0.6 s later). Under load the write itself may be late,
            // never early.
            #expect(
                times.allSatisfy { $0 >= written - 0.001 && $0 < read }, "written \(written), read \(read): \(times)")
            // Slices went to the handler on the reader's thread; the stream carried only the scanner's state.
            var states = scanner.events.makeAsyncIterator()
            let first = await states.next()
            let second = await states.next()
            #expect(first == .scanning)
            #expect(second == nil, "\(String(describing: second))")
        }
    }
}
