import Synchronization
import Testing

/// Teardown that has to wait for something — a server to shut down, a browser to quit — which a `defer` cannot do.
///
/// `defer { TestTeardown.add { await fixture.stop() } }` runs the step when the test ends, pass or fail. Steps run one
/// after the other in the order they were added: from `defer`s, the last written first, as the `defer`s themselves.
/// In a test with the `.awaitsTeardown` trait the test only ends once its steps are done, so what they stop is
/// stopped, and what they delete is deleted, before the next test of a serialized suite starts and before the test
/// process exits. Anywhere else a step starts at once in a task of its own, as `defer { Task { ... } }` would, and a
/// process that is done with its tests does not wait for it: the last tests' servers and folders were left behind.
public enum TestTeardown {
    @TaskLocal static var current: Steps?

    /// Runs `step` when the current test ends (see above).
    public static func add(_ step: @escaping @Sendable () async -> Void) {
        if let current, current.add(step) { return }
        Task { await step() }
    }

    /// The steps of one test, run by `AwaitsTeardownTrait` when its test has returned or thrown.
    final class Steps: Sendable {
        private struct State {
            var steps: [@Sendable () async -> Void] = []
            var finished = false
        }

        private let state = Mutex(State())

        /// Keeps `step` for `run()`; false once that has finished (a task of the test outliving it).
        func add(_ step: @escaping @Sendable () async -> Void) -> Bool {
            state.withLock { state in
                guard !state.finished else { return false }
                state.steps.append(step)
                return true
            }
        }

        /// Runs the steps in the order they were added, and those they add. Each in a task of its own: a test
        /// cancelled by its time limit would cut short the waits inside its stops.
        func run() async {
            while let step = state.withLock({ state -> (@Sendable () async -> Void)? in
                guard !state.steps.isEmpty else {
                    state.finished = true
                    return nil
                }
                return state.steps.removeFirst()
            }) {
                await Task { await step() }.value
            }
        }
    }
}

/// Makes each test of a suite (or one test) end only after its `TestTeardown` steps have run.
public struct AwaitsTeardownTrait: TestTrait, SuiteTrait, TestScoping {
    public var isRecursive: Bool { true }

    /// A scope for each test case; none for a suite as a whole.
    public func scopeProvider(for test: Test, testCase: Test.Case?) -> Self? {
        testCase == nil ? nil : self
    }

    public func provideScope(
        for test: Test, testCase: Test.Case?, performing function: @Sendable () async throws -> Void
    ) async throws {
        let steps = TestTeardown.Steps()
        try await TestTeardown.$current.withValue(steps) {
            do {
                try await function()
            } catch {
                await steps.run()
                throw error
            }
            await steps.run()
        }
    }
}

extension Trait where Self == AwaitsTeardownTrait {
    /// Each test ends only once its `TestTeardown` steps have run.
    public static var awaitsTeardown: Self { Self() }
}
