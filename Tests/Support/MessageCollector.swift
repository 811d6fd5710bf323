import BeaconMQTT
import Synchronization

/// Drains a subscription in the background so tests can wait for messages with a timeout without cancelling the
/// subscription's iterator (cancelling an `AsyncStream` iterator finishes the stream).
public final class MessageCollector: Sendable {
    private let received = Mutex<[MQTTMessage]>([])
    private let task: Mutex<Task<Void, Never>?> = Mutex(nil)

    public init(_ subscription: MQTTSubscription) {
        let task = Task { [weak self] in
            for await message in subscription {
                guard let self else { return }
                received.withLock { $0.append(message) }
            }
        }
        self.task.withLock { $0 = task }
    }

    deinit {
        task.withLock { $0?.cancel() }
    }

    /// Everything received so far.
    public var messages: [MQTTMessage] { received.withLock { $0 } }

    /// Waits until at least `count` messages arrived or `timeout` passed; returns what arrived.
    @discardableResult
    public func wait(for count: Int, within timeout: Duration = .seconds(10)) async -> [MQTTMessage] {
        let deadline = ContinuousClock.now.advanced(by: timeout)
        while ContinuousClock.now < deadline {
            let now = messages
            if now.count >= count { return now }
            try? await Task.sleep(for: .milliseconds(10))
        }
        return messages
    }

    /// Waits for the first message, from the start, whose payload satisfies `predicate`.
    public func first(
        within timeout: Duration = .seconds(10), where predicate: @Sendable (MQTTMessage) -> Bool
    ) async -> MQTTMessage? {
        let deadline = ContinuousClock.now.advanced(by: timeout)
        while ContinuousClock.now < deadline {
            if let match = messages.first(where: predicate) { return match }
            try? await Task.sleep(for: .milliseconds(10))
        }
        return messages.first(where: predicate)
    }
}
