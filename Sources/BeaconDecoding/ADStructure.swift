/// One AD structure of Bluetooth advertising data: `length, type, data[length - 1]`.
public struct ADStructure: Sendable, Hashable {
    public var type: UInt8
    public var data: [UInt8]

    /// Manufacturer Specific Data.
    public static let manufacturerData: UInt8 = 0xFF
    /// Service Data, 16-bit UUID.
    public static let serviceData16: UInt8 = 0x16

    /// Splits advertising data into AD structures.
    ///
    /// A zero length byte ends the significant part (the rest is padding). A structure whose length runs past the
    /// data is malformed.
    public static func parse(_ data: [UInt8]) throws(DecodeError) -> [ADStructure] {
        var structures: [ADStructure] = []
        var offset = 0
        while offset < data.count {
            let length = Int(data[offset])
            if length == 0 { break }
            guard offset + 1 + length <= data.count else {
                throw DecodeError(
                    "AD structure at byte \(offset) declares \(length) bytes but only \(data.count - offset - 1) remain"
                )
            }
            structures.append(
                ADStructure(type: data[offset + 1], data: Array(data[(offset + 2)..<(offset + 1 + length)])))
            offset += 1 + length
        }
        return structures
    }
}
