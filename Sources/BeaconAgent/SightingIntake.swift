import BeaconDecoding
import BeaconModel
import Foundation
import Synchronization

/// The one owner of the agent's per-report state: the decode/filter pipeline and the open batch.
///
/// Called synchronously on the thread that reads the reports (the scanner's reader, the replay's pacer, the
/// simulator's stream), so a slice costs that thread's one wake-up and no hop onto another thread. Closed batches wait
/// here (bounded, `maxWaitingBatches`) for the agent's storing task, which `batchReady` wakes once per batch.
final class SightingIntake: Sendable {
    private struct State {
        var pipeline: SightingPipeline
        var batcher: SightingBatcher
        var reportsSinceStatus = 0
        var malformedEvents = 0
        var statisticsTaken = Date().timeIntervalSince1970
        /// Closed batches not yet taken by the storing task, oldest first.
        var waiting: [[Sighting]] = []
        /// Sightings dropped because `maxWaitingBatches` closed batches were already waiting (a disk far too slow).
        var droppedBacklog = 0
        var finished = false
        /// Closed batches not yet in the outbox: waiting, or taken and being stored.
        var unstored = 0
        /// The one slice buffer, kept between slices.
        var sightings: [Sighting] = []
    }

    private let state: Mutex<State>
    private let maxWaitingBatches: Int
    /// Signalled when a batch opens: the agent's tick sleeps until then, and then until the batch's deadline.
    let batchOpened = Wakeup()
    /// Signalled when a closed batch waits to be stored, and at `finish()`.
    let batchReady = Wakeup()

    init(
        regions: [BeaconRegion], batch: AgentConfiguration.BatchSettings, maxWaitingBatches: Int = 64
    ) {
        state = Mutex(
            State(
                pipeline: SightingPipeline(regions: regions),
                batcher: SightingBatcher(maxSightings: batch.maxSightings, maxDelay: batch.maxDelaySeconds)))
        self.maxWaitingBatches = maxWaitingBatches
    }

    /// A slice of HCI events with their read times; their reports are walked in place. Closes a batch that is full or
    /// due.
    func ingest(_ events: [TimedHCIEvent], now: Double) {
        let (opened, closed) = state.withLock { state -> (Bool, Bool) in
            var sightings = state.sightings
            state.sightings = []
            defer {
                sightings.removeAll(keepingCapacity: true)
                state.sightings = sightings
            }
            for timed in events {
                switch state.pipeline.process(event: timed.event, at: timed.time, into: &sightings) {
                case .reports(let count): state.reportsSinceStatus += count
                case .malformed: state.malformedEvents += 1
                case .notAdvertising: break
                }
            }
            return Self.add(sightings, now: now, to: &state, limit: maxWaitingBatches)
        }
        signal(opened: opened, closed: closed)
    }

    /// A slice of reports with their scan times (the simulator's gateways).
    func ingest(_ reports: [TimedReport], now: Double) {
        let (opened, closed) = state.withLock { state -> (Bool, Bool) in
            state.reportsSinceStatus += reports.count
            var sightings: [Sighting] = []
            for timed in reports { sightings += state.pipeline.process(timed.report, at: timed.time) }
            return Self.add(sightings, now: now, to: &state, limit: maxWaitingBatches)
        }
        signal(opened: opened, closed: closed)
    }

    /// Adds a slice's sightings to the open batch, closing it when full and when due; reports whether a batch opened
    /// (and stays open) and whether one closed.
    private static func add(
        _ sightings: [Sighting], now: Double, to state: inout State, limit: Int
    ) -> (opened: Bool, closed: Bool) {
        let wasOpen = state.batcher.deadline != nil
        var closed = false
        for sighting in sightings {
            if let batch = state.batcher.add(sighting, now: now) {
                enqueue(batch, in: &state, limit: limit)
                closed = true
            }
        }
        if let batch = state.batcher.due(now: now) {
            enqueue(batch, in: &state, limit: limit)
            closed = true
        }
        let opened = state.batcher.deadline != nil && (!wasOpen || closed)
        return (opened, closed)
    }

    private static func enqueue(_ batch: [Sighting], in state: inout State, limit: Int) {
        if state.waiting.count >= limit {
            state.droppedBacklog += state.waiting.removeFirst().count
            state.unstored -= 1
        }
        state.waiting.append(batch)
        state.unstored += 1
    }

    private func signal(opened: Bool, closed: Bool) {
        if opened { batchOpened.signal() }
        if closed { batchReady.signal() }
    }

    /// When the open batch is due, if one is open.
    var deadline: Double? { state.withLock { $0.batcher.deadline } }

    /// Closes the open batch when it is due.
    func tick(now: Double) { close { $0.due(now: now) } }

    /// Closes whatever is open (the end of a replay).
    func flush() { close { $0.flush() } }

    /// Closes whatever is open and lets the storing task end once it has stored every waiting batch (shutdown, after
    /// the source stopped).
    func finish() { close(finishing: true) { $0.flush() } }

    /// Queues the batch `take` closes, if any, for the storing task and wakes it (always when `finishing`).
    private func close(finishing: Bool = false, _ take: (inout SightingBatcher) -> [Sighting]?) {
        let closed = state.withLock { state -> Bool in
            if finishing { state.finished = true }
            guard let batch = take(&state.batcher) else { return false }
            Self.enqueue(batch, in: &state, limit: maxWaitingBatches)
            return true
        }
        if closed || finishing { batchReady.signal() }
    }

    /// The closed batches waiting to be stored, oldest first, and whether `finish()` was called (with nothing waiting:
    /// the storing task is done).
    func takeWaiting() -> (batches: [[Sighting]], finished: Bool) {
        state.withLock { state in
            defer { state.waiting.removeAll() }
            return (state.waiting, state.finished)
        }
    }

    /// The storing task has stored (or given up on) `count` of the batches it took.
    func stored(_ count: Int) { state.withLock { $0.unstored -= count } }

    /// Closed batches not yet stored in the outbox.
    var unstoredBatches: Int { state.withLock { $0.unstored } }

    /// HCI events whose lengths did not add up (skipped whole).
    var malformedEvents: Int { state.withLock { $0.malformedEvents } }

    /// Reports since the previous call, the seconds since then, the pipeline's counters and the sightings dropped
    /// because the outbox could not keep up.
    func takeStatistics(
        now: Double
    ) -> (reports: Int, seconds: Double, counters: SightingPipeline.Counters, droppedBacklog: Int) {
        state.withLock { state in
            defer {
                state.reportsSinceStatus = 0
                state.statisticsTaken = now
            }
            return (
                state.reportsSinceStatus, now - state.statisticsTaken, state.pipeline.counters, state.droppedBacklog
            )
        }
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
