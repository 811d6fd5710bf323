import Synchronization

/// The hand-off from the tasks that read and decode MQTT messages to the one task that applies them to the hub's core,
/// so that decoding a batch runs on another core beside the engine's work on the one before.
///
/// Bounded: a producer waits while `capacity` inputs are pending, so a backlog stays in the subscription's buffer and
/// the broker's queue for the hub's persistent session (both bounded and counted) instead of growing here. Many
/// producers, one consumer; inputs come out in the order they went in.
final class InputQueue<Element: Sendable>: Sendable {
    private struct State {
        var items: [Element] = []
        var head = 0
        var consumer: CheckedContinuation<Element?, Never>?
        var producers: [CheckedContinuation<Void, Never>] = []
        var finished = false

        var count: Int { items.count - head }

        mutating func pop() -> Element? {
            guard head < items.count else { return nil }
            let item = items[head]
            head += 1
            if head == items.count {
                items.removeAll(keepingCapacity: true)
                head = 0
            }
            return item
        }
    }

    private enum Offer {
        case handed(CheckedContinuation<Element?, Never>?)
        case full
    }

    private enum Take {
        case item(Element, wakes: CheckedContinuation<Void, Never>?)
        case end
        case waiting
    }

    let capacity: Int
    private let state = Mutex(State())

    init(capacity: Int) {
        precondition(capacity >= 1, "an input queue holds at least one input")
        self.capacity = capacity
    }

    /// Hands `item` to the consumer, waiting while the queue is full. After `finish()` the item is dropped.
    func send(_ item: Element) async {
        while true {
            let offer = state.withLock { state -> Offer in
                if state.finished { return .handed(nil) }
                if let consumer = state.consumer {
                    state.consumer = nil
                    return .handed(consumer)
                }
                guard state.count < capacity else { return .full }
                state.items.append(item)
                return .handed(nil)
            }
            switch offer {
            case .handed(let consumer):
                consumer?.resume(returning: item)
                return
            case .full:
                await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                    let retry = state.withLock { state -> Bool in
                        guard state.count >= capacity, !state.finished else { return true }
                        state.producers.append(continuation)
                        return false
                    }
                    if retry { continuation.resume() }
                }
            }
        }
    }

    /// The next input, in order; nil once `finish()` was called and everything before it was taken.
    func next() async -> Element? {
        switch take(waiting: nil) {
        case .item(let item, let producer):
            producer?.resume()
            return item
        case .end:
            return nil
        case .waiting:
            return await withCheckedContinuation { (continuation: CheckedContinuation<Element?, Never>) in
                switch take(waiting: continuation) {
                case .item(let item, let producer):
                    producer?.resume()
                    continuation.resume(returning: item)
                case .end:
                    continuation.resume(returning: nil)
                case .waiting:
                    break
                }
            }
        }
    }

    /// No more inputs: the consumer gets nil after the pending ones, waiting producers return.
    func finish() {
        let (consumer, producers) = state.withLock { state in
            state.finished = true
            defer {
                state.consumer = nil
                state.producers = []
            }
            return (state.count == 0 ? state.consumer : nil, state.producers)
        }
        consumer?.resume(returning: nil)
        for producer in producers { producer.resume() }
    }

    /// Takes an item if there is one; otherwise parks `continuation` (when given) as the waiting consumer.
    private func take(waiting continuation: CheckedContinuation<Element?, Never>?) -> Take {
        state.withLock { state in
            if let item = state.pop() {
                return .item(item, wakes: state.producers.isEmpty ? nil : state.producers.removeFirst())
            }
            if state.finished { return .end }
            if let continuation { state.consumer = continuation }
            return .waiting
        }
    }
}
