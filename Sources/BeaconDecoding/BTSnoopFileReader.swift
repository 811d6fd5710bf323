#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A btsnoop capture read from its file one HCI event at a time, through one buffer of `chunk` bytes: what replay
/// holds is that buffer and the event in hand, however long the capture (a gateway replays hours of it in the memory
/// of live scanning). The same records and events as `BTSnoopCapture(bytes:)` and its `hciEvents()`.
public final class BTSnoopFileReader {
    public let path: String
    public let datalink: BTSnoopCapture.Datalink
    /// Set once the file ended inside a record (a capture cut short); the complete records were read.
    public private(set) var truncatedTail = false

    private let descriptor: Int32
    private let chunk: Int
    private var buffer: [UInt8] = []
    /// The unread bytes start at `buffer[position]`, which is byte `bufferStart + position` of the file.
    private var position = 0
    private var bufferStart = 0
    private var endOfFile = false

    /// Opens the file and reads its header; the errors name the file and what is wrong.
    public init(path: String, chunk: Int = 64 * 1024) throws(DecodeError) {
        self.path = path
        self.chunk = max(chunk, 64)
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        self.descriptor = descriptor
        guard descriptor >= 0 else {
            throw DecodeError("cannot read capture \(path): \(String(cString: strerror(errno)))")
        }
        // The header, read before the buffer takes over at byte 16.
        var header = [UInt8](repeating: 0, count: 16)
        var got = 0
        while got < 16 {
            let count = header.withUnsafeMutableBytes { read(descriptor, $0.baseAddress! + got, 16 - got) }
            if count < 0, errno == EINTR { continue }
            guard count > 0 else { break }
            got += count
        }
        do {
            datalink = try BTSnoopCapture.header(Array(header.prefix(got)))
        } catch {
            close(descriptor)
            throw DecodeError("\(path): \(error.message)")
        }
        bufferStart = 16
        buffer.reserveCapacity(self.chunk)
    }

    deinit { close(descriptor) }

    /// The next HCI event (commands, ACL data and monitor bookkeeping skipped), or nil at the end of the file.
    public func nextEvent() throws(DecodeError) -> BTSnoopCapture.TimedEvent? {
        while true {
            try fill(24)
            guard buffer.count - position >= 24 else {
                truncatedTail = buffer.count > position
                return nil
            }
            let (included, flags, microseconds) = BTSnoopCapture.recordHeader(buffer, at: position)
            // A length past the end of the file is a capture cut short, not a reason to read gigabytes. (HCI events
            // are at most 258 bytes, so the file's size is asked only for a record longer than the buffer.)
            guard included <= chunk || bufferStart + position + 24 + included <= fileSize() else {
                truncatedTail = true
                return nil
            }
            try fill(24 + included)
            guard buffer.count - position >= 24 + included else {
                truncatedTail = true
                return nil
            }
            let payload = buffer[(position + 24)..<(position + 24 + included)]
            position += 24 + included
            if let event = BTSnoopCapture.event(payload: payload, flags: flags, datalink: datalink) {
                return BTSnoopCapture.TimedEvent(timestamp: BTSnoopCapture.seconds(microseconds), event: event)
            }
        }
    }

    /// The file's size now (btmon may still be writing it).
    private func fileSize() -> Int {
        var status = stat()
        return fstat(descriptor, &status) == 0 ? Int(status.st_size) : Int.max
    }

    /// Makes at least `count` unread bytes available unless the file ends first; unread bytes move to the front.
    private func fill(_ count: Int) throws(DecodeError) {
        guard buffer.count - position < count, !endOfFile else { return }
        if position > 0 {
            buffer.removeSubrange(0..<position)
            bufferStart += position
            position = 0
        }
        while buffer.count < count, !endOfFile {
            let want = max(chunk, count - buffer.count)
            let start = buffer.count
            buffer.append(contentsOf: repeatElement(0, count: want))
            let got = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress! + start, want) }
            guard got >= 0 else {
                buffer.removeSubrange(start...)
                if errno == EINTR { continue }
                throw DecodeError("cannot read capture \(path): \(String(cString: strerror(errno)))")
            }
            buffer.removeSubrange((start + got)...)
            if got == 0 { endOfFile = true }
        }
    }
}
