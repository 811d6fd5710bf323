import Foundation

/// Reads a JSON Lines file line by line without loading it whole; `.gz` files are read through `gzip -dc`.
public enum LineFileReader {
    /// Calls `body` with each non-empty line and its 1-based number.
    public static func forEachLine(_ path: String, _ body: (String, Int) throws -> Void) throws {
        let process: Process?
        let handle: FileHandle
        if path.hasSuffix(".gz") {
            let gunzip = Process()
            gunzip.executableURL = URL(fileURLWithPath: "/usr/bin/env")
            gunzip.arguments = ["gzip", "-dc", path]
            let pipe = Pipe()
            gunzip.standardOutput = pipe
            try gunzip.run()
            process = gunzip
            handle = pipe.fileHandleForReading
        } else {
            handle = try FileHandle(forReadingFrom: URL(fileURLWithPath: path))
            process = nil
        }
        defer { try? handle.close() }
        var pending: [UInt8] = []
        var number = 0
        func emit(_ bytes: ArraySlice<UInt8>) throws {
            number += 1
            guard !bytes.isEmpty else { return }
            try body(String(decoding: bytes, as: UTF8.self), number)
        }
        while let chunk = try handle.read(upToCount: 1 << 20), !chunk.isEmpty {
            pending.append(contentsOf: chunk)
            var start = pending.startIndex
            while let newline = pending[start...].firstIndex(of: 0x0A) {
                try emit(pending[start..<newline])
                start = newline + 1
            }
            pending.removeSubrange(..<start)
        }
        if !pending.isEmpty { try emit(pending[...]) }
        if let process {
            process.waitUntilExit()
            guard process.terminationStatus == 0 else {
                throw CocoaError(.fileReadCorruptFile, userInfo: [NSFilePathErrorKey: path])
            }
        }
    }
}
