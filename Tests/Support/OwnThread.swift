import Foundation
import Synchronization

/// Runs `work` on a thread of its own instead of the cooperative pool, for tests with seconds of synchronous work
/// (a simulation, a replay, a cross-validated calibration).
///
/// Swift Testing runs tests side by side on the cooperative pool, which has one thread per core: two on the machines
/// CI uses. A test computing for 30 s on a pool thread holds it, and the live tests beside it — brokers, HTTP
/// receivers, hubs — stop being scheduled and miss their deadlines. On a thread of its own the work competes for the
/// cores like any other program and the pool stays free. The test's task runs there (a task executor preference), so
/// `#expect` and `#require` are attributed to the test as usual.
public func onOwnThread<T: Sendable>(_ work: () async throws -> T) async rethrows -> T {
    let executor = OwnThreadExecutor()
    defer { executor.finish() }
    return try await withTaskExecutorPreference(executor) {
        // The preference applies from the task's next enqueue on: suspend once, so the work resumes on the thread.
        await Task.yield()
        return try await work()
    }
}

/// A task executor with one thread, which runs the jobs given to it in order until `finish()`.
final class OwnThreadExecutor: TaskExecutor, @unchecked Sendable {
    // @unchecked: `jobs` and `finished` are only touched under `condition`.
    private let condition = NSCondition()
    private var jobs: [UnownedJob] = []
    private var finished = false

    init() {
        let thread = Thread { [self] in
            Thread.current.name = "test work"
            run()
        }
        // Debug builds recurse deeply (YAML decoding, the engine); the pool's threads have 8 MiB too.
        thread.stackSize = 8 << 20
        thread.start()
    }

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        condition.lock()
        jobs.append(job)
        condition.signal()
        condition.unlock()
    }

    /// Ends the thread once the jobs given so far have run.
    func finish() {
        condition.lock()
        finished = true
        condition.signal()
        condition.unlock()
    }

    private func run() {
        while true {
            condition.lock()
            while jobs.isEmpty, !finished { condition.wait() }
            if jobs.isEmpty {
                condition.unlock()
                return
            }
            let job = jobs.removeFirst()
            condition.unlock()
            job.runSynchronously(on: asUnownedTaskExecutor())
        }
    }
}
