import Foundation

/// Writes JSON lines to a file, buffered; with `gzip`, through the `gzip` program (which compresses on another core),
/// for long runs that would otherwise fill the disk.
public final class LineFileWriter {
    private let handle: FileHandle
    private let compressor: Process?
    private var buffer: [UInt8] = []
    public private(set) var lines = 0

    /// Creates (truncates) `path`; with `gzip`, `path` should end in `.gz`.
    public init(path: String, gzip: Bool = false) throws {
        guard FileManager.default.createFile(atPath: path, contents: nil) else {
            throw CocoaError(.fileWriteNoPermission, userInfo: [NSFilePathErrorKey: path])
        }
        let file = try FileHandle(forWritingTo: URL(fileURLWithPath: path))
        if gzip {
            let process = Process()
            process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
            process.arguments = ["gzip", "-c", "-1"]
            let pipe = Pipe()
            process.standardInput = pipe
            process.standardOutput = file
            try process.run()
            handle = pipe.fileHandleForWriting
            compressor = process
        } else {
            handle = file
            compressor = nil
        }
        buffer.reserveCapacity(1 << 20)
    }

    /// Appends one line (a newline is added).
    public func write(_ line: String) {
        buffer.append(contentsOf: line.utf8)
        buffer.append(0x0A)
        lines += 1
        if buffer.count >= 1 << 20 { flush() }
    }

    private func flush() {
        handle.write(Data(buffer))
        buffer.removeAll(keepingCapacity: true)
    }

    /// Flushes and closes; waits for gzip to finish the file.
    public func close() throws {
        flush()
        try handle.close()
        if let compressor {
            compressor.waitUntilExit()
            guard compressor.terminationStatus == 0 else {
                throw CocoaError(.fileWriteUnknown, userInfo: [NSLocalizedDescriptionKey: "gzip failed"])
            }
        }
    }
}
