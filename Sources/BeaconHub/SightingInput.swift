import BeaconModel
import Foundation

/// Reads recorded sightings for `beacon-hub replay` and `calibrate`: each line a sighting line or a sighting batch
/// payload exactly as published (docs/mqtt.md), `.gz` or plain. Lines come out in time order within a hold of a few
/// seconds, since batches from different gateways interleave.
public enum SightingInput {
    /// What reading a file produced beside the sightings.
    public struct Summary: Sendable, Hashable {
        public var lines = 0
        public var batches = 0
        public var sightings = 0
        /// `file:line: what was wrong`, for every line skipped.
        public var skipped: [String] = []
    }

    /// Calls `body` with every sighting in time order (re-sorted within `hold` seconds); `progress` gets the share of
    /// the file read (plain files) and the latest scan time, now and then.
    public static func read(
        _ path: String, hold: Double = 5, progress: ((Double?, Double) -> Void)? = nil,
        _ body: (SightingLine) throws -> Void
    ) throws -> Summary {
        var summary = Summary()
        var buffer: [SightingLine] = []
        var newest = -Double.infinity
        let size =
            path.hasSuffix(".gz") ? nil : (try? FileManager.default.attributesOfItem(atPath: path)[.size] as? Int)
        var bytes = 0
        func release(upTo limit: Double) throws {
            guard let first = buffer.first, first.t <= limit else { return }
            buffer.sort { $0.t < $1.t }
            let cut = buffer.firstIndex { $0.t > limit } ?? buffer.endIndex
            for sighting in buffer[..<cut] { try body(sighting) }
            buffer.removeSubrange(..<cut)
        }
        try LineFileReader.forEachLine(path) { line, number in
            summary.lines += 1
            bytes += line.utf8.count + 1
            do {
                if Self.isBatch(line) {
                    let batch = try ContractCoding.decode(SightingBatch.self, from: Array(line.utf8))
                    summary.batches += 1
                    for sighting in batch.sightings {
                        buffer.append(SightingLine(sighting, gateway: batch.gateway))
                        newest = max(newest, sighting.t)
                    }
                    summary.sightings += batch.sightings.count
                } else {
                    let sighting = try SightingLine.decode(line: line)
                    buffer.append(sighting)
                    newest = max(newest, sighting.t)
                    summary.sightings += 1
                }
            } catch {
                summary.skipped.append("\(path):\(number): \(error)")
            }
            if buffer.count >= 4096 || number % 50_000 == 0 {
                try release(upTo: newest - hold)
                if let progress, number % 50_000 == 0 {
                    progress(size.map { Double(bytes) / Double(max($0, 1)) }, newest)
                }
            }
        }
        try release(upTo: .infinity)
        return summary
    }

    /// Whether `line` names a batch's `"sightings"` member: compared as bytes (Foundation's `String.contains` took a
    /// tenth of a replay's time).
    static func isBatch(_ line: String) -> Bool {
        let pattern = Array("\"sightings\"".utf8)
        func scan(_ bytes: some Collection<UInt8>) -> Bool {
            var matched = 0
            for byte in bytes {
                if byte == pattern[matched] {
                    matched += 1
                    if matched == pattern.count { return true }
                } else {
                    // The pattern's first byte, `"`, occurs nowhere else in it: a mismatch restarts at this byte.
                    matched = byte == pattern[0] ? 1 : 0
                }
            }
            return false
        }
        return line.utf8.withContiguousStorageIfAvailable(scan) ?? scan(line.utf8)
    }
}
