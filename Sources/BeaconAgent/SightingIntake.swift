import BeaconDecoding
import BeaconModel
import Foundation
import Synchronization

/// The one owner of the agent's per-report state: the decode/filter pipeline and the open batch.
actor SightingIntake {
    private var pipeline: SightingPipeline
    private var batcher: SightingBatcher
    private let publisher: OutboxPublisher
    private let clockSynced: @Sendable () -> Bool
    private var reportsSinceStatus = 0
    /// HCI events whose lengths did not add up (skipped whole).
    private(set) var malformedEvents = 0
    /// Signalled when a batch opens: the agent's tick sleeps until then, and then until the batch's deadline.
    nonisolated let batchOpened = Wakeup()
    private var statisticsTaken = Date().timeIntervalSince1970

    init(
        regions: [BeaconRegion], batch: AgentConfiguration.BatchSettings, publisher: OutboxPublisher,
        clockSynced: @escaping @Sendable () -> Bool
    ) {
        pipeline = SightingPipeline(regions: regions)
        batcher = SightingBatcher(maxSightings: batch.maxSightings, maxDelay: batch.maxDelaySeconds)
        self.publisher = publisher
        self.clockSynced = clockSynced
    }

    /// A slice of HCI events with their read times, in one hop onto this actor (not one per advertisement); their
    /// reports are walked in place.
    func ingest(_ events: [TimedHCIEvent], now: Double) async {
        // The slice's own buffer: storing a batch suspends this actor, and nothing shared may change meanwhile.
        var sightings: [Sighting] = []
        sightings.reserveCapacity(min(events.count, 256))
        for timed in events {
            switch pipeline.process(event: timed.event, at: timed.time, into: &sightings) {
            case .reports(let count): reportsSinceStatus += count
            case .malformed: malformedEvents += 1
            case .notAdvertising: break
            }
        }
        for sighting in sightings { await add(sighting, now: now) }
        await tick(now: now)
    }

    /// A slice of reports with their scan times (the simulator's gateways), in one hop onto this actor.
    func ingest(_ reports: [TimedReport], now: Double) async {
        reportsSinceStatus += reports.count
        for timed in reports {
            for sighting in pipeline.process(timed.report, at: timed.time) { await add(sighting, now: now) }
        }
        await tick(now: now)
    }

    private func add(_ sighting: Sighting, now: Double) async {
        let opening = batcher.deadline == nil
        if let batch = batcher.add(sighting, now: now) {
            await publisher.store(batch, clockSynced: clockSynced())
        } else if opening {
            batchOpened.signal()
        }
    }

    /// When the open batch is due, if one is open.
    var deadline: Double? { batcher.deadline }

    /// Closes the open batch when it is due.
    func tick(now: Double) async {
        if let batch = batcher.due(now: now) { await publisher.store(batch, clockSynced: clockSynced()) }
    }

    /// Stores whatever is open (shutdown, end of a replay).
    func flush() async {
        if let batch = batcher.flush() { await publisher.store(batch, clockSynced: clockSynced()) }
    }

    /// Reports since the previous call, the seconds since then, and the pipeline's counters.
    func takeStatistics(now: Double) -> (reports: Int, seconds: Double, counters: SightingPipeline.Counters) {
        defer {
            reportsSinceStatus = 0
            statisticsTaken = now
        }
        return (reportsSinceStatus, now - statisticsTaken, pipeline.counters)
    }
}

/// A one-slot wake-up for one waiting task: `wait()` returns once `signal()` was called since the previous wait (at
/// once if it already was), or when the waiting task is cancelled. A signal without a waiter is kept, never lost.
final class Wakeup: Sendable {
    private let state = Mutex<(signalled: Bool, waiter: CheckedContinuation<Void, Never>?)>((false, nil))

    func signal() {
        let waiter = state.withLock { state -> CheckedContinuation<Void, Never>? in
            guard let waiter = state.waiter else {
                state.signalled = true
                return nil
            }
            state.waiter = nil
            return waiter
        }
        waiter?.resume()
    }

    func wait() async {
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let now = state.withLock { state -> Bool in
                    guard !state.signalled && !Task.isCancelled else {
                        state.signalled = false
                        return true
                    }
                    state.waiter = continuation
                    return false
                }
                if now { continuation.resume() }
            }
        } onCancel: {
            signal()
        }
    }
}
