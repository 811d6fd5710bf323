import BeaconDecoding
import BeaconModel
import Testing

@Suite struct AdvertisementEncoderTests {
    @Test(arguments: [
        "ibeacon:e2c56db5-dffb-48d2-b060-d0f5a71096e0:1:2",
        "altbeacon:2f234454-cf6d-4a0f-adf2-f4911ba9ffa6:7:65535",
        "eddystone-uid:edd1ebeac04e5defa017:0123456789ab",
    ])
    func encodedAdvertisementsDecodeToTheSameBeacon(id: String) throws {
        let data = try #require(AdvertisementEncoder.advertisingData(beacon: id, txPower: -61))
        let frames = try BeaconDecoder.decode(data).frames
        #expect(frames.count == 1)
        #expect(frames.first?.beaconID == id)
        #expect(frames.first?.txPowerAt1m == -61)
    }

    /// The simulator's TLM frames: what the decoder reads back is what went in (temperature to 1/256 °C, uptime to
    /// 0.1 s), and an absent temperature is the frame's "not supported".
    @Test func telemetryFramesDecodeToTheSameTelemetry() throws {
        let sent = Telemetry(
            version: 0, batteryMilliVolts: 2712, temperatureCelsius: -3.5, advertisingCount: 4_000_000_001,
            secondsSinceBoot: 86_399.9)
        let frames = try BeaconDecoder.decode(AdvertisementEncoder.telemetryData(sent)).frames
        guard case .eddystoneTLM(let frame) = try #require(frames.first) else {
            Issue.record("not a TLM frame: \(frames)")
            return
        }
        #expect(frame.telemetry == sent)
        var cold = sent
        cold.temperatureCelsius = nil
        let again = try BeaconDecoder.decode(AdvertisementEncoder.telemetryData(cold)).frames
        guard case .eddystoneTLM(let second) = try #require(again.first) else { return }
        #expect(second.telemetry.temperatureCelsius == nil && second.telemetry.batteryMilliVolts == 2712)
    }

    @Test(arguments: [
        "eddystone-url:https://x", "ibeacon:nothex:1:2", "ibeacon:e2c56db5-dffb-48d2-b060-d0f5a71096e0:70000:1", "",
    ])
    func idsItCannotExpressGiveNil(id: String) {
        #expect(AdvertisementEncoder.advertisingData(beacon: id, txPower: -59) == nil)
    }
}
