import BeaconDecoding
import Foundation
import Synchronization

/// Where the agent's advertising reports come from.
public enum AdvertisementSource: Sendable {
    /// No BLE source: the agent only drains its outbox.
    case none
    /// Live scanning on the configured adapter.
    case scanner
    /// A btsnoop capture replayed at `speed` × real time (0: as fast as possible). Scan times are re-based to the
    /// wall clock at the start of the replay unless `keepTimes`.
    case capture(path: String, speed: Double, keepTimes: Bool)
    /// Reports handed in by another component (the simulator plays its gateways through this), until it finishes.
    case stream(AsyncStream<TimedReport>)

    /// Replay's slices when none is given: `scanner.sliceMs`'s default.
    public static let defaultSlice = Duration.milliseconds(Int(AgentConfiguration.ScannerSettings().sliceMs))

    /// Opens a capture file for replay, naming it in the error.
    public static func openCapture(_ path: String) throws -> BTSnoopFileReader {
        try BTSnoopFileReader(path: path)
    }

    /// Feeds every HCI event of the capture to `deliver` with its scan time, paced by the capture's timestamps in
    /// slices of `slice` (as the live scanner reads: one wake-up per slice, not per advertisement). The capture is
    /// read as it goes, one event at a time; the consumer walks the events' reports (and counts malformed ones). An
    /// error reading the file ends the replay after what was read is delivered.
    ///
    /// The pacing runs on a thread of its own, like the scanner's reader, and `deliver` is called on it: a slice costs
    /// that thread's one wake-up, not a timer's and a worker's. Cancelling the calling task stops the replay within
    /// 100 ms.
    public static func replay(
        _ capture: BTSnoopFileReader, speed: Double, keepTimes: Bool, slice: Duration = defaultSlice,
        deliver: @escaping @Sendable ([TimedHCIEvent]) -> Void
    ) async throws {
        let stopped = Atomic<Bool>(false)
        let reader = UncheckedTransfer(capture)
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (done: CheckedContinuation<Void, any Error>) in
                let thread = Thread {
                    do {
                        try pace(
                            reader.value, speed: speed, keepTimes: keepTimes, slice: slice,
                            isStopped: { stopped.load(ordering: .relaxed) }, deliver: deliver)
                        done.resume()
                    } catch {
                        done.resume(throwing: error)
                    }
                }
                thread.name = "replay"
                thread.start()
            }
        } onCancel: {
            stopped.store(true, ordering: .relaxed)
        }
    }

    /// The replay's loop, on the calling thread: sleeps until each slice is due, then delivers it.
    static func pace(
        _ capture: BTSnoopFileReader, speed: Double, keepTimes: Bool, slice: Duration,
        isStopped: () -> Bool, deliver: ([TimedHCIEvent]) -> Void
    ) throws {
        var next = try capture.nextEvent()
        guard let first = next?.timestamp else { return }
        let start = Date().timeIntervalSince1970
        let clock = ContinuousClock()
        let started = clock.now
        var pending: [TimedHCIEvent] = []
        var failure: (any Error)?
        while let event = next {
            if isStopped() { break }
            defer {
                do { next = try capture.nextEvent() } catch {
                    failure = error
                    next = nil
                }
            }
            let offset = event.timestamp - first
            if speed > 0 {
                let due = started.advanced(by: .milliseconds(Int(offset / speed * 1000)))
                if due > clock.now {
                    // What is due before it goes now; then sleep until it and take everything due a slice later.
                    if !pending.isEmpty {
                        deliver(pending)
                        pending.removeAll(keepingCapacity: true)
                    }
                    guard sleep(until: due.advanced(by: slice), clock: clock, isStopped: isStopped) else { break }
                }
            }
            let scanTime = keepTimes ? event.timestamp : start + (speed > 0 ? offset / speed : 0)
            pending.append(TimedHCIEvent(event: event.event, time: scanTime))
            if pending.count >= 1_000 {
                deliver(pending)
                pending.removeAll(keepingCapacity: true)
            }
        }
        if !pending.isEmpty { deliver(pending) }
        if let failure { throw failure }
    }

    /// Sleeps the thread until `deadline`, looking at `isStopped` at least every 100 ms; false when stopped.
    private static func sleep(
        until deadline: ContinuousClock.Instant, clock: ContinuousClock, isStopped: () -> Bool
    ) -> Bool {
        while true {
            if isStopped() { return false }
            let left = clock.now.duration(to: deadline)
            guard left > .zero else { return true }
            let (seconds, attoseconds) = left.components
            let microseconds = min(100_000, Int(seconds) * 1_000_000 + Int(attoseconds / 1_000_000_000_000) + 1)
            usleep(UInt32(microseconds))
        }
    }
}

/// Hands a non-Sendable value to the one thread that uses it from then on.
struct UncheckedTransfer<Value>: @unchecked Sendable {
    let value: Value
    init(_ value: Value) { self.value = value }
}
