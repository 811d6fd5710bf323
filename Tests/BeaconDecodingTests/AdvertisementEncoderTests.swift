import BeaconDecoding
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

    @Test(arguments: [
        "eddystone-url:https://x", "ibeacon:nothex:1:2", "ibeacon:e2c56db5-dffb-48d2-b060-d0f5a71096e0:70000:1", "",
    ])
    func idsItCannotExpressGiveNil(id: String) {
        #expect(AdvertisementEncoder.advertisingData(beacon: id, txPower: -59) == nil)
    }
}
