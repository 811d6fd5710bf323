/// Turns advertising data into beacon frames. Pure; never traps on any input.
public enum BeaconDecoder {
    /// What one advertisement holds.
    public struct Result: Sendable, Hashable {
        /// Beacon frames found, in AD order (one advertisement may carry several).
        public var frames: [BeaconFrame]
        /// Why look-alikes were not taken as beacons (for the decode tool), e.g. an iBeacon prefix of wrong length.
        public var notes: [String]
    }

    /// What a look at the AD framing says, before any decoding.
    public enum Screen: Sendable, Hashable {
        /// The framing is broken (`decode` throws).
        case malformed
        /// No structure that could be a beacon frame (`decode` finds no frame).
        case notBeacon
        /// A manufacturer data structure with the iBeacon or AltBeacon prefix, or Eddystone service data.
        case candidate
    }

    /// Walks the AD structures in place, without copying anything: the same framing checks as `decode`, and whether
    /// any structure could hold a beacon frame. A phone's advertisement is turned away here.
    public static func screen(_ data: [UInt8]) -> Screen {
        data.withUnsafeBufferPointer { screen($0) }
    }

    /// `screen` over bytes in place (an advertisement inside the HCI event being read).
    public static func screen(_ bytes: UnsafeBufferPointer<UInt8>) -> Screen {
        var offset = 0
        var candidate = false
        while offset < bytes.count {
            let length = Int(bytes[offset])
            if length == 0 { break }
            guard offset + 1 + length <= bytes.count else { return .malformed }
            let type = bytes[offset + 1]
            let body = offset + 2
            if type == ADStructure.manufacturerData && length >= 5 {
                let code = (bytes[body + 2], bytes[body + 3])
                if code == (0x02, 0x15) || code == (0xBE, 0xAC) { candidate = true }
            } else if type == ADStructure.serviceData16 && length >= 4 && bytes[body] == 0xAA
                && bytes[body + 1] == 0xFE
            {
                candidate = true
            }
            offset += 1 + length
        }
        return candidate ? .candidate : .notBeacon
    }

    /// Decodes every AD structure of `advertisingData`; throws only for malformed AD framing.
    public static func decode(_ advertisingData: [UInt8]) throws(DecodeError) -> Result {
        var result = Result(frames: [], notes: [])
        for structure in try ADStructure.parse(advertisingData) {
            switch structure.type {
            case ADStructure.manufacturerData:
                decodeManufacturerData(structure.data, into: &result)
            case ADStructure.serviceData16:
                decodeServiceData(structure.data, into: &result)
            default:
                continue
            }
        }
        return result
    }

    private static func decodeManufacturerData(_ data: [UInt8], into result: inout Result) {
        guard data.count >= 4 else { return }
        let company = UInt16(data[1]) << 8 | UInt16(data[0])
        if company == 0x004C && data[2] == 0x02 && data[3] == 0x15 {
            // Apple type 0x02, length 0x15 (21): uuid 16, major 2, minor 2, power 1.
            guard data.count == 25 else {
                result.notes.append("iBeacon prefix with \(data.count - 4) bytes after it instead of 21")
                return
            }
            result.frames.append(
                .iBeacon(
                    IBeaconFrame(
                        uuid: Array(data[4..<20]), major: data[20..<22].bigEndian(), minor: data[22..<24].bigEndian(),
                        txPower: Int8(bitPattern: data[24]))))
        } else if data[2] == 0xBE && data[3] == 0xAC {
            // AltBeacon: company 2, code 2, id 20, reference RSSI 1, reserved 1.
            guard data.count == 26 else {
                result.notes.append("AltBeacon code 0xBEAC with \(data.count) bytes instead of 26")
                return
            }
            result.frames.append(
                .altBeacon(
                    AltBeaconFrame(
                        manufacturer: company, id1: Array(data[4..<20]), id2: data[20..<22].bigEndian(),
                        id3: data[22..<24].bigEndian(), txPower: Int8(bitPattern: data[24]), reserved: data[25])))
        } else if data[2] == 0x02 && data[3] == 0x15 {
            result.notes.append(
                "0x02 0x15 prefix from company 0x\(String(company, radix: 16, uppercase: true)), not Apple's 0x004C")
        }
    }

    private static func decodeServiceData(_ data: [UInt8], into result: inout Result) {
        // Eddystone's 16-bit service UUID 0xFEAA, little-endian on air.
        guard data.count >= 3, data[0] == 0xAA, data[1] == 0xFE else { return }
        let frame = Array(data[2...])
        switch frame[0] {
        case 0x00:
            // Frame type, power, namespace 10, instance 6, and 2 reserved bytes that many beacons leave out.
            guard frame.count == 18 || frame.count == 20 else {
                result.notes.append("Eddystone-UID frame of \(frame.count) bytes instead of 18 or 20")
                return
            }
            result.frames.append(
                .eddystoneUID(
                    EddystoneUIDFrame(
                        namespace: Array(frame[2..<12]), instance: Array(frame[12..<18]),
                        txPower0m: Int8(bitPattern: frame[1]))))
        case 0x10:
            guard frame.count >= 3, frame.count <= 20 else {
                result.notes.append("Eddystone-URL frame of \(frame.count) bytes (3 to 20 allowed)")
                return
            }
            switch EddystoneURL.expand(scheme: frame[2], encoded: frame[3...]) {
            case .success(let url):
                result.frames.append(.eddystoneURL(EddystoneURLFrame(url: url, txPower0m: Int8(bitPattern: frame[1]))))
            case .failure(let problem):
                result.notes.append("Eddystone-URL \(problem.message)")
            }
        case 0x20:
            decodeTelemetry(frame, into: &result)
        case 0x30:
            guard frame.count == 10 else {
                result.notes.append("Eddystone-EID frame of \(frame.count) bytes instead of 10")
                return
            }
            result.frames.append(
                .eddystoneEID(EddystoneEIDFrame(eid: Array(frame[2..<10]), txPower0m: Int8(bitPattern: frame[1]))))
        default:
            result.notes.append("Eddystone frame type 0x\(String(frame[0], radix: 16)) is not one we decode")
        }
    }

    private static func decodeTelemetry(_ frame: [UInt8], into result: inout Result) {
        guard frame.count >= 2 else {
            result.notes.append("Eddystone-TLM frame without a version byte")
            return
        }
        switch (frame[1], frame.count) {
        case (0x00, 14):
            let rawTemperature: UInt16 = frame[4..<6].bigEndian()
            // Signed 8.8 fixed point; 0x8000 means "not supported".
            let temperature = rawTemperature == 0x8000 ? nil : Double(Int16(bitPattern: rawTemperature)) / 256
            let tenths: UInt32 = frame[10..<14].bigEndian()
            result.frames.append(
                .eddystoneTLM(
                    .plain(
                        batteryMilliVolts: frame[2..<4].bigEndian(), temperatureCelsius: temperature,
                        advertisementCount: frame[6..<10].bigEndian(), uptimeSeconds: Double(tenths) / 10)))
        case (0x01, 18):
            // Encrypted TLM: 12 bytes ETLM, 2 salt, 2 MIC — readable only with the beacon's identity key.
            result.frames.append(.eddystoneTLM(.encrypted(raw: Array(frame[2...]))))
        case (let version, let count):
            result.notes.append("Eddystone-TLM version \(version) with \(count) bytes is not one we decode")
        }
    }
}
