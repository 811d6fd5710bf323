/// Eddystone-URL's scheme prefixes and expansion codes (google/eddystone, eddystone-url).
enum EddystoneURL {
    static let schemes = ["http://www.", "https://www.", "http://", "https://"]
    static let expansions = [
        ".com/", ".org/", ".edu/", ".net/", ".info/", ".biz/", ".gov/",
        ".com", ".org", ".edu", ".net", ".info", ".biz", ".gov",
    ]

    struct Problem: Error {
        let message: String
    }

    /// Expands the compressed URL; reserved bytes (0x0E–0x20, 0x7F–0xFF) and unknown schemes are refused.
    static func expand(scheme: UInt8, encoded: ArraySlice<UInt8>) -> Swift.Result<String, Problem> {
        guard Int(scheme) < schemes.count else {
            return .failure(Problem(message: "scheme byte 0x\(String(scheme, radix: 16)) is reserved"))
        }
        guard encoded.count <= 17 else {
            return .failure(Problem(message: "URL of \(encoded.count) bytes exceeds 17"))
        }
        var url = schemes[Int(scheme)]
        for byte in encoded {
            switch byte {
            case 0x00...0x0D:
                url += expansions[Int(byte)]
            case 0x21...0x7E:
                url.unicodeScalars.append(Unicode.Scalar(byte))
            default:
                return .failure(Problem(message: "uses reserved byte 0x\(String(byte, radix: 16))"))
            }
        }
        return .success(url)
    }
}
