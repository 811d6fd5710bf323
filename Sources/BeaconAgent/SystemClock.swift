import Glibc

/// Whether the kernel considers the clock synchronised (NTP/chrony): gateways have no RTC, and batches scanned
/// before synchronisation are marked so the hub can re-base them.
enum SystemClock {
    private typealias AdjTimex = @convention(c) (UnsafeMutableRawPointer) -> Int32

    /// `adjtimex(2)` with modes 0 only reads; it returns TIME_ERROR (5) while the clock is unsynchronised.
    /// <sys/timex.h> does not import into Swift, so the symbol is looked up; its struct (208 bytes on 64-bit Linux)
    /// is passed as a zeroed buffer, large enough on every ABI.
    static func isSynchronized() -> Bool {
        guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "adjtimex") else { return false }
        let adjtimex = unsafeBitCast(symbol, to: AdjTimex.self)
        let buffer = UnsafeMutableRawPointer.allocate(byteCount: 512, alignment: 16)
        defer { buffer.deallocate() }
        buffer.initializeMemory(as: UInt8.self, repeating: 0, count: 512)
        return adjtimex(buffer) != 5
    }
}
