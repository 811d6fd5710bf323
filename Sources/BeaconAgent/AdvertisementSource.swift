import BeaconDecoding
import Foundation

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

    /// Opens a capture file for replay, naming it in the error.
    public static func openCapture(_ path: String) throws -> BTSnoopFileReader {
        try BTSnoopFileReader(path: path)
    }

    /// Feeds every HCI event of the capture to `deliver` with its scan time, paced by the capture's timestamps in
    /// slices of `slice` (as the live scanner reads: one wake-up per slice, not per advertisement). The capture is
    /// read as it goes, one event at a time; the consumer walks the events' reports (and counts malformed ones). An
    /// error reading the file ends the replay after what was read is delivered.
    public static func replay(
        _ capture: BTSnoopFileReader, speed: Double, keepTimes: Bool, slice: Duration = .milliseconds(20),
        deliver: ([TimedHCIEvent]) async -> Void
    ) async throws {
        var next = try capture.nextEvent()
        guard let first = next?.timestamp else { return }
        let start = Date().timeIntervalSince1970
        let clock = ContinuousClock()
        let started = clock.now
        var pending: [TimedHCIEvent] = []
        var failure: (any Error)?
        while let event = next {
            if Task.isCancelled { break }
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
                        await deliver(pending)
                        pending.removeAll(keepingCapacity: true)
                    }
                    try? await Task.sleep(until: due.advanced(by: slice), clock: clock)
                }
            }
            let scanTime = keepTimes ? event.timestamp : start + (speed > 0 ? offset / speed : 0)
            pending.append(TimedHCIEvent(event: event.event, time: scanTime))
            if pending.count >= 1_000 {
                await deliver(pending)
                pending.removeAll(keepingCapacity: true)
            }
        }
        if !pending.isEmpty { await deliver(pending) }
        if let failure { throw failure }
    }
}
