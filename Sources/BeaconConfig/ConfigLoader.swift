import Foundation
import Yams

/// Reads YAML configuration files strictly: an unknown key, a missing key or a wrong value is an error that names
/// the file, the key and what was expected — a typo must never silently fall back to a default.
public enum ConfigLoader {
    /// Decodes `T` from the YAML file at `path`.
    public static func load<T: Decodable>(_ type: T.Type, from path: String) throws(ConfigError) -> T {
        let text: String
        do {
            text = try String(contentsOfFile: path, encoding: .utf8)
        } catch {
            throw ConfigError(
                .unreadable, file: path, key: "",
                "cannot read the file (\(error.localizedDescription)): check the path and permissions")
        }
        return try decode(type, from: text, file: path)
    }

    /// Decodes `T` from YAML text; `file` is used in error messages.
    public static func decode<T: Decodable>(_ type: T.Type, from text: String, file: String) throws(ConfigError) -> T {
        let node: Node
        do {
            node = try Yams.compose(yaml: text) ?? Node.mapping(Node.Mapping([]))
        } catch let error as YamlError {
            throw ConfigError(.syntax, file: file, key: "", "not valid YAML: \(error)")
        } catch {
            throw ConfigError(.syntax, file: file, key: "", "not valid YAML: \(error)")
        }
        do {
            return try YAMLDecoder().decode(StrictRoot<T>.self, from: node).value
        } catch let error as ConfigError {
            throw ConfigError(error.code, file: file, key: error.key, error.message)
        } catch let error as DecodingError {
            throw describe(error, file: file)
        } catch {
            throw ConfigError(.invalidValue, file: file, key: "", "\(error)")
        }
    }

    static func keyPath(_ path: [any CodingKey]) -> String {
        var result = ""
        for key in path {
            if let index = key.intValue, key.stringValue.hasPrefix("Index") || Int(key.stringValue) == index {
                result += "[\(index)]"
            } else {
                result += result.isEmpty ? key.stringValue : ".\(key.stringValue)"
            }
        }
        return result
    }

    private static func describe(_ error: DecodingError, file: String) -> ConfigError {
        switch error {
        case .keyNotFound(let key, let context):
            let path = keyPath(context.codingPath + [key])
            return ConfigError(.missingKey, file: file, key: path, "required key is missing")
        case .typeMismatch(let type, let context):
            return ConfigError(
                .invalidValue, file: file, key: keyPath(context.codingPath), "expected \(expectation(for: type))")
        case .valueNotFound(let type, let context):
            return ConfigError(
                .invalidValue, file: file, key: keyPath(context.codingPath),
                "expected \(expectation(for: type)) but the value is empty")
        case .dataCorrupted(let context):
            return ConfigError(
                .invalidValue, file: file, key: keyPath(context.codingPath), context.debugDescription)
        @unknown default:
            return ConfigError(.invalidValue, file: file, key: "", "\(error)")
        }
    }

    private static func expectation(for type: Any.Type) -> String {
        switch type {
        case is String.Type: return "a string"
        case is Int.Type, is Int32.Type, is UInt16.Type, is UInt32.Type, is UInt64.Type: return "an integer"
        case is Double.Type: return "a number"
        case is Bool.Type: return "true or false"
        default:
            let name = "\(type)"
            if name.hasPrefix("Array") { return "a list" }
            if name.hasPrefix("Dictionary") { return "a mapping" }
            return "a \(name) mapping"
        }
    }
}

/// A string-valued setting with a fixed set of values; decoding lists them when the file has another.
public protocol ConfigEnum: RawRepresentable<String>, CaseIterable, Decodable, Sendable {}

extension ConfigEnum {
    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        let raw = try container.decode(String.self)
        guard let value = Self(rawValue: raw) else {
            let allowed = Self.allCases.map { "\"\($0.rawValue)\"" }.joined(separator: ", ")
            throw DecodingError.dataCorruptedError(
                in: container, debugDescription: "expected one of \(allowed) but found \"\(raw)\"")
        }
        self = value
    }
}

/// Lets Yams build its decoder for the document and hands it to `StrictDecoder` at once.
private struct StrictRoot<T: Decodable>: Decodable {
    let value: T

    init(from decoder: any Decoder) throws {
        value = try T(from: StrictDecoder(base: decoder))
    }
}

extension ConfigLoader {
    /// YAML text for a value (calibration files), keys sorted so that equal values give equal files.
    public static func yaml(_ value: some Encodable) throws -> String {
        let encoder = YAMLEncoder()
        encoder.options.sortKeys = true
        return try plainNumbers(encoder.encode(value))
    }

    /// Yams writes every real number in exponent form (`-5.95e+1`); people read these files, so a value that ends a
    /// line is rewritten as plain decimals (`-59.5`), which reads back as the same number.
    static func plainNumbers(_ text: String) -> String {
        text.split(separator: "\n", omittingEmptySubsequences: false).map { line -> String in
            guard let space = line.lastIndex(of: " ") else { return String(line) }
            let token = line[line.index(after: space)...]
            guard token.contains("e"), !token.contains("\""), let value = Double(token), value.isFinite else {
                return String(line)
            }
            var plain = value == value.rounded() && abs(value) < 1e15 ? String(Int64(value)) : "\(value)"
            if plain.contains("e") { plain = String(token) }
            return line[...space] + plain
        }.joined(separator: "\n")
    }
}
