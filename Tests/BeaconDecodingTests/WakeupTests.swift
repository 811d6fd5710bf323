import Testing

@testable import BeaconAgent

/// The agent's batch tick sleeps on a `Wakeup` while no batch is open: a signal must never be lost, and shutdown
/// (cancellation) must end the wait.
@Suite(.timeLimit(.minutes(1))) struct WakeupTests {
    @Test func aSignalBeforeTheWaitIsKept() async {
        let wakeup = Wakeup()
        wakeup.signal()
        wakeup.signal()  // one slot: two signals make one wake-up
        await wakeup.wait()
        let second = Task { await wakeup.wait() }
        try? await Task.sleep(for: .milliseconds(50))
        wakeup.signal()
        await second.value
    }

    @Test func aWaitingTaskIsWokenBySignalOrCancellation() async throws {
        let wakeup = Wakeup()
        for _ in 0..<200 {
            let woken = Task { await wakeup.wait() }
            // Signals racing the wait, with and without a pause: every wait returns.
            if Bool.random() { await Task.yield() }
            wakeup.signal()
            await woken.value
        }
        let cancelled = Task { await wakeup.wait() }
        try await Task.sleep(for: .milliseconds(20))
        cancelled.cancel()
        await cancelled.value
        let cancelledFirst = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            await wakeup.wait()
        }
        await cancelledFirst.value
    }
}
