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

    /// Reads a capture file, naming it in the error.
    public static func loadCapture(_ path: String) throws -> BTSnoopCapture {
        let data: Data
        do {
            data = try Data(contentsOf: URL(fileURLWithPath: path))
        } catch {
            throw DecodeError("cannot read capture \(path): \(error.localizedDescription)")
        }
        do {
            return try BTSnoopCapture(bytes: Array(data))
        } catch {
            throw DecodeError("\(path): \(error.message)")
        }
    }

    /// Feeds every advertising report of `capture` to `deliver` with its scan time, paced by the capture's timestamps
    /// in slices of `slice` (as the live scanner reads: one wake-up per slice, not per advertisement). Malformed events
    /// are counted and skipped. Returns the number of malformed events.
    public static func replay(
        _ capture: BTSnoopCapture, speed: Double, keepTimes: Bool, slice: Duration = .milliseconds(20),
        deliver: ([TimedReport]) async -> Void
    ) async -> Int {
        let events = capture.hciEvents()
        guard let first = events.first?.timestamp else { return 0 }
        let start = Date().timeIntervalSince1970
        let clock = ContinuousClock()
        let started = clock.now
        var malformed = 0
        var pending: [TimedReport] = []
        for event in events {
            if Task.isCancelled { break }
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
            let reports: [AdvertisingReport]?
            do {
                reports = try HCIEventParser.advertisingReports(inEvent: event.event)
            } catch {
                malformed += 1
                continue
            }
            let scanTime = keepTimes ? event.timestamp : start + (speed > 0 ? offset / speed : 0)
            for report in reports ?? [] { pending.append(TimedReport(report: report, time: scanTime)) }
            if pending.count >= 1_000 {
                await deliver(pending)
                pending.removeAll(keepingCapacity: true)
            }
        }
        if !pending.isEmpty { await deliver(pending) }
        return malformed
    }
}
