import BLEScanner
import BeaconDecoding
import Foundation
import Glibc
import Synchronization
import Testing

/// The advertising commands byte for byte. Legacy ones against the packets `hcitool -i hci0 cmd 0x08 …` writes (BlueZ's
/// tool: type 0x01, the opcode little-endian, the length, the parameters), as the usual Raspberry Pi iBeacon recipe
/// gives them; extended ones against the parameter tables of the Core specification (5.0, Vol 4, Part E, 7.8.53–56).
struct HCICommandTests {
    static func hex(_ text: String) -> [UInt8] { bytes(fromHex: text.replacingOccurrences(of: " ", with: ""))! }

    @Test func legacyCommandsAreWhatHcitoolSends() {
        // hcitool -i hci0 cmd 0x08 0x0006 A0 00 A0 00 03 00 00 00 00 00 00 00 00 07 00  (100 ms, non-connectable)
        #expect(
            HCICommand.leSetAdvertisingParameters(intervalMilliseconds: 100).packet
                == Self.hex("01 06 20 0F A0 00 A0 00 03 00 00 00 00 00 00 00 00 07 00"))
        // hcitool -i hci0 cmd 0x08 0x0008 1E 02 01 06 1A FF 4C 00 02 15 <uuid> 00 01 00 02 C5 00
        let data = AdvertisementEncoder.advertisingData(
            beacon: "ibeacon:e2c56db5-dffb-48d2-b060-d0f5a71096e0:1:2", txPower: -59)!
        #expect(
            HCICommand.leSetAdvertisingData(data)?.packet
                == Self.hex(
                    "01 08 20 20 1E 02 01 06 1A FF 4C 00 02 15 E2 C5 6D B5 DF FB 48 D2 B0 60 D0 F5 A7 10 96 E0"
                        + " 00 01 00 02 C5 00"))
        // hcitool -i hci0 cmd 0x08 0x000a 01, and 00
        #expect(HCICommand.leSetAdvertisingEnable(true).packet == Self.hex("01 0A 20 01 01"))
        #expect(HCICommand.leSetAdvertisingEnable(false).packet == Self.hex("01 0A 20 01 00"))
        // hcitool -i hci0 cmd 0x08 0x0007
        #expect(HCICommand.leReadAdvertisingChannelTxPower.packet == Self.hex("01 07 20 00"))
        // 200 ms = 320 units = 0x0140; out-of-range intervals are held to the specification's 20 ms to 10.24 s.
        #expect(
            Array(HCICommand.leSetAdvertisingParameters(intervalMilliseconds: 200).parameters[0..<4]) == [
                0x40, 0x01, 0x40, 0x01,
            ])
        #expect(
            Array(HCICommand.leSetAdvertisingParameters(intervalMilliseconds: 5).parameters[0..<2]) == [0x20, 0x00])
        #expect(HCICommand.leSetAdvertisingData([UInt8](repeating: 0, count: 32)) == nil)
    }

    @Test func extendedCommandsFollowTheSpecificationsTables() {
        // Handle 0; properties 0x0010 (legacy PDU, non-connectable, non-scannable); interval 200 ms = 0x000140 twice
        // (3 bytes each); channels 37–39; public own address; peer type and address unused; no filter; 4 dBm asked;
        // 1M primary PHY; no skip; 1M secondary PHY; SID 0; no scan request notifications.
        #expect(
            HCICommand.leSetExtendedAdvertisingParameters(intervalMilliseconds: 200, txPower: 4).packet
                == Self.hex("01 36 20 19 00 10 00 40 01 00 40 01 00 07 00 00 00 00 00 00 00 00 00 04 01 00 01 00 00"))
        // No preference: 0x7F.
        #expect(
            HCICommand.leSetExtendedAdvertisingParameters(intervalMilliseconds: 200, txPower: nil).parameters[19]
                == 0x7F)
        // Handle 0, operation 0x03 (complete), no fragmenting, the length, the data.
        #expect(
            HCICommand.leSetExtendedAdvertisingData([0x02, 0x01, 0x06])?.packet
                == Self.hex("01 37 20 07 00 03 01 03 02 01 06"))
        // Enable, one set: handle 0, no duration, no event limit.
        #expect(HCICommand.leSetExtendedAdvertisingEnable(true).packet == Self.hex("01 39 20 06 01 01 00 00 00 00"))
        #expect(HCICommand.leRemoveAdvertisingSet.packet == Self.hex("01 3C 20 01 00"))
    }
}

/// The own beacon through the scanner's real command path (the seam writes each command to its socket pair, where the
/// test reads what "the controller" got): legacy first, extended when the controller refuses legacy, a refusal
/// reported without stopping the scan, advertising restored after a reset and switched off at stop.
extension HCIScannerTests {
    static let advertising = HCIScanner.Advertising(
        data: AdvertisementEncoder.advertisingData(
            beacon: "ibeacon:e2c56db5-dffb-48d2-b060-d0f5a71096e0:7:1", txPower: -59)!,
        intervalMilliseconds: 200, txPower: 4)

    /// Waits (30 s at most) for the next advertising state.
    static func nextAdvertising(
        _ iterator: inout AsyncStream<HCIScanner.Event>.Iterator
    ) async -> HCIScanner.AdvertisingState? {
        while let event = await iterator.next() {
            if case .advertising(let state) = event { return state }
        }
        return nil
    }

    @Test func theOwnBeaconIsAdvertisedWithLegacyCommands() async throws {
        try await HCITestSeam.withPipe { pipe in
            let scanner = HCIScanner(
                settings: HCIScanner.Settings(restartAfterSilence: .seconds(1), advertising: Self.advertising))
            scanner.start()
            var events = scanner.events.makeAsyncIterator()
            #expect(await Self.nextAdvertising(&events) == .on(.legacy, txPower: nil))
            let sent = pipe.sentPackets()
            #expect(
                Array(sent.prefix(5)) == [
                    HCICommand.leSetAdvertisingEnable(false).packet,
                    HCICommand.leSetAdvertisingParameters(intervalMilliseconds: 200).packet,
                    HCICommand.leSetAdvertisingData(Self.advertising.data)!.packet,
                    HCICommand.leReadAdvertisingChannelTxPower.packet,
                    HCICommand.leSetAdvertisingEnable(true).packet,
                ])
            // Silence (what a reset leaves) switches scanning on again, and advertising with it.
            #expect(await Self.nextAdvertising(&events) == .on(.legacy, txPower: nil))
            await scanner.stop()
            #expect(pipe.sentPackets().last == HCICommand.leSetAdvertisingEnable(false).packet)
        }
    }

    @Test func aControllerThatRefusesLegacyCommandsGetsExtendedOnes() async throws {
        try await HCITestSeam.withPipe { pipe in
            // What a controller answers once the kernel has used extended advertising on it.
            HCITestSeam.answer(
                HCICommand.leSetAdvertisingParameters(intervalMilliseconds: 200).opcode,
                status: HCIStatus.commandDisallowed
            )
            let scanner = HCIScanner(settings: HCIScanner.Settings(advertising: Self.advertising))
            scanner.start()
            var events = scanner.events.makeAsyncIterator()
            #expect(await Self.nextAdvertising(&events) == .on(.extended, txPower: nil))
            let sent = pipe.sentPackets()
            #expect(
                Array(sent.suffix(5)) == [
                    HCICommand.leSetExtendedAdvertisingEnable(false).packet,
                    HCICommand.leRemoveAdvertisingSet.packet,
                    HCICommand.leSetExtendedAdvertisingParameters(intervalMilliseconds: 200, txPower: 4).packet,
                    HCICommand.leSetExtendedAdvertisingData(Self.advertising.data)!.packet,
                    HCICommand.leSetExtendedAdvertisingEnable(true).packet,
                ])
            await scanner.stop()
            #expect(
                Array(pipe.sentPackets().prefix(2)) == [
                    HCICommand.leSetExtendedAdvertisingEnable(false).packet, HCICommand.leRemoveAdvertisingSet.packet,
                ])
        }
    }

    @Test func aRefusalIsReportedAndScanningGoesOn() async throws {
        try await HCITestSeam.withPipe { pipe in
            HCITestSeam.answer(
                HCICommand.leSetAdvertisingParameters(intervalMilliseconds: 200).opcode,
                status: HCIStatus.invalidParameters)
            let slices = Mutex(0)
            let scanner = HCIScanner(settings: HCIScanner.Settings(advertising: Self.advertising)) { _ in
                slices.withLock { $0 += 1 }
            }
            scanner.start()
            var events = scanner.events.makeAsyncIterator()
            #expect(
                await Self.nextAdvertising(&events)
                    == .failed("LE Set Advertising Parameters: invalid HCI command parameters"))
            let ibeacon = bytes(fromHex: "0201061aff4c000215e2c56db5dffb48d2b060d0f5a71096e000010002c5")!
            pipe.write(
                [0x04] + BTSnoopWriter.advertisingReportEvent(address: [1, 2, 3, 4, 5, 6], rssi: -50, data: ibeacon))
            let deadline = ContinuousClock.now.advanced(by: .seconds(30))
            while slices.withLock({ $0 }) == 0 && ContinuousClock.now < deadline {
                try await Task.sleep(for: .milliseconds(10))
            }
            await scanner.stop()
            #expect(slices.withLock { $0 } == 1)
        }
    }
}
