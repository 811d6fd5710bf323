import Synchronization
import Testing

@testable import BeaconHub

@Suite struct InputQueueTests {
    @Test func deliversEveryInputOfEachProducerInOrder() async {
        let queue = InputQueue<(producer: Int, n: Int)>(capacity: 3)
        let producers = 4
        let each = 5_000
        let received = await withTaskGroup(of: [(producer: Int, n: Int)].self) { group in
            group.addTask {
                await withTaskGroup(of: Void.self) { senders in
                    for producer in 0..<producers {
                        senders.addTask {
                            for n in 0..<each { await queue.send((producer, n)) }
                        }
                    }
                }
                queue.finish()
                return []
            }
            group.addTask {
                var all: [(producer: Int, n: Int)] = []
                while let item = await queue.next() { all.append(item) }
                return all
            }
            var all: [(producer: Int, n: Int)] = []
            for await part in group { all += part }
            return all
        }
        #expect(received.count == producers * each)
        for producer in 0..<producers {
            #expect(received.filter { $0.producer == producer }.map(\.n) == Array(0..<each))
        }
    }

    @Test func producerWaitsWhileTheQueueIsFull() async throws {
        let queue = InputQueue<Int>(capacity: 2)
        let sent = Mutex(0)
        let producer = Task {
            for n in 0..<3 {
                await queue.send(n)
                sent.withLock { $0 += 1 }
            }
        }
        // Two fit; the third waits for the consumer.
        let deadline = ContinuousClock.now.advanced(by: .seconds(30))
        while sent.withLock({ $0 }) < 2 && ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(5))
        }
        #expect(sent.withLock { $0 } == 2)
        try await Task.sleep(for: .milliseconds(100))
        #expect(sent.withLock { $0 } == 2)
        #expect(await queue.next() == 0)
        await producer.value
        #expect(sent.withLock { $0 } == 3)
        #expect(await queue.next() == 1)
        #expect(await queue.next() == 2)
        queue.finish()
        #expect(await queue.next() == nil)
    }

    @Test func waitingConsumerEndsAtFinish() async {
        let queue = InputQueue<Int>(capacity: 4)
        let consumer = Task { await queue.next() }
        queue.finish()
        #expect(await consumer.value == nil)
        // Dropped after the end rather than waiting for a consumer that is gone.
        await queue.send(1)
        #expect(await queue.next() == nil)
    }
}
