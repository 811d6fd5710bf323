import BeaconModel
import Foundation
import Logging
import Synchronization

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// POSTs the hub's events to the URLs of hub.yaml's `webhooks:` (docs/integrations.md), off the hub's hot path.
///
/// `enqueue` only filters and appends to a bounded queue per URL (the oldest waiting event is dropped when it is
/// full); `run()` keeps one worker per URL that delivers its queue in order, one request at a time, retrying with
/// exponential backoff and jitter (`WebhookPolicy`). The body is the event exactly as published on MQTT.
public final class WebhookDispatcher: Sendable {
    /// What became of one URL's events since the hub started.
    public struct Counts: Sendable, Hashable {
        /// Answered with a 2xx.
        public var delivered = 0
        /// Refused (4xx other than 408 and 429), or still failing after `maxAttempts`.
        public var failed = 0
        /// Never sent to the end: the oldest waiting event when the queue was full, and what was left at shutdown.
        public var dropped = 0
        /// Requests made, retries included.
        public var attempts = 0
        /// Waiting now, not counting the one being delivered.
        public var queued = 0
    }

    let targets: [Target]
    let eventsPrefix: String
    let logger: Logger

    /// `topics` gives the event topics that `enqueue(_:)` picks out of what the hub publishes.
    public init(_ webhooks: [WebhookSettings], topics: Topics, logger: Logger) {
        targets = webhooks.enumerated().map { Target(index: $0.offset + 1, settings: $0.element) }
        eventsPrefix = "\(topics.root)/\(topics.site.rawValue)/events/"
        self.logger = logger
    }

    /// The counts of each webhook, in hub.yaml's order.
    public var counts: [Counts] {
        targets.map { target in target.state.withLock { $0.counts(queued: $0.queue.count - $0.head) } }
    }

    // MARK: Intake (the hub's hot path: no I/O, no waiting)

    /// Queues the events among `messages` (topics `events/<type>`) for the webhooks whose filters they pass.
    func enqueue(_ messages: [HubCore.Outgoing]) {
        for message in messages where message.topic.hasPrefix(eventsPrefix) {
            guard let type = ZoneEventType(rawValue: String(message.topic.dropFirst(eventsPrefix.count))) else {
                continue
            }
            let known: ZoneEvent? = if case .event(let event) = message.value { event } else { nil }
            enqueue(type: type, payload: message.payload, event: known)
        }
    }

    /// Queues `event` as the hub would publish it.
    public func enqueue(_ event: ZoneEvent) {
        guard let payload = try? ContractCoding.encode(event) else { return }
        enqueue(type: event.type, payload: payload, event: event)
    }

    func enqueue(type: ZoneEventType, payload: [UInt8], event known: ZoneEvent?) {
        var event = known
        for target in targets where target.settings.events.contains(type) {
            if target.settings.regions != nil || target.settings.zones != nil {
                // Decoded once, and only for webhooks that filter on more than the type.
                if event == nil { event = try? ContractCoding.decode(ZoneEvent.self, from: payload) }
                guard let event, target.settings.accepts(event) else { continue }
            }
            if let dropped = target.push(Pending(type: type, payload: payload)) {
                logger.warning(
                    "webhook queue full: oldest events dropped",
                    metadata: target.metadata(["dropped": "\(dropped)", "maxQueued": "\(target.settings.maxQueued)"]))
            }
        }
    }

    // MARK: Delivery

    /// Delivers until cancelled; what is still queued then is counted as dropped.
    public func run() async {
        logger.info("webhooks ready", metadata: ["webhooks": "\(targets.count)"])
        await withTaskGroup(of: Void.self) { group in
            for target in targets {
                group.addTask { [self] in await work(target) }
            }
        }
        for target in targets {
            let (left, counts) = target.state.withLock { state -> (Int, Counts) in
                let left = state.queue.count - state.head
                state.dropped += left
                state.queue = []
                state.head = 0
                return (left, state.counts(queued: 0))
            }
            if left > 0 {
                logger.warning("webhook events left undelivered at shutdown", metadata: target.metadata([:]))
            }
            logger.info(
                "webhook counts",
                metadata: target.metadata([
                    "delivered": "\(counts.delivered)", "failed": "\(counts.failed)", "dropped": "\(counts.dropped)",
                    "attempts": "\(counts.attempts)",
                ]))
        }
        for target in targets { target.session.finishTasksAndInvalidate() }
    }

    /// Waits, at most `timeout`, until every webhook has nothing left to send or is waiting to retry: a clean stop
    /// lets the last events go out without waiting on a receiver that is down.
    public func finish(within timeout: Duration) async {
        let deadline = ContinuousClock.now.advanced(by: timeout)
        while ContinuousClock.now < deadline {
            let settled = targets.allSatisfy { target in
                target.state.withLock { ($0.head == $0.queue.count && !$0.busy) || $0.backingOff }
            }
            if settled { return }
            do { try await Task.sleep(for: .milliseconds(20)) } catch { return }
        }
    }

    func work(_ target: Target) async {
        for await _ in target.wake {
            while !Task.isCancelled, let pending = target.take() {
                await deliver(pending, to: target)
                target.state.withLock { $0.busy = false }
            }
            if Task.isCancelled { return }
        }
    }

    func deliver(_ pending: Pending, to target: Target) async {
        let settings = target.settings
        var attempt = 0
        while true {
            attempt += 1
            target.state.withLock { $0.attempts += 1 }
            var metadata = target.metadata(["type": "\(pending.type.rawValue)", "attempt": "\(attempt)"])
            let verdict: WebhookPolicy.Verdict
            do {
                let status = try await post(pending, to: target)
                metadata["status"] = "\(status)"
                verdict = WebhookPolicy.verdict(status: status)
            } catch {
                metadata["error"] = "\(Self.describe(error))"
                verdict = .retry
            }
            if Task.isCancelled {
                target.state.withLock { $0.dropped += 1 }
                return
            }
            switch verdict {
            case .delivered:
                target.state.withLock { $0.delivered += 1 }
                if attempt > 1 { logger.debug("webhook delivered after retries", metadata: metadata) }
                return
            case .refused:
                target.state.withLock { $0.failed += 1 }
                logger.warning("webhook refused an event: not retried", metadata: metadata)
                return
            case .retry where attempt >= settings.maxAttempts:
                target.state.withLock { $0.failed += 1 }
                logger.warning("webhook delivery failed: attempts exhausted", metadata: metadata)
                return
            case .retry:
                let delay = WebhookPolicy.delay(
                    after: attempt, initial: settings.retryInitialSeconds, maximum: settings.retryMaxSeconds,
                    jitter: Double.random(in: 0...1))
                metadata["retryInSeconds"] = "\(delay)"
                logger.debug("webhook attempt failed: retrying", metadata: metadata)
                target.state.withLock { $0.backingOff = true }
                defer { target.state.withLock { $0.backingOff = false } }
                do {
                    try await Task.sleep(for: .seconds(delay))
                } catch {
                    target.state.withLock { $0.dropped += 1 }
                    return
                }
            }
        }
    }

    /// One POST within `timeoutSeconds`; the HTTP status, or an error when no answer came (refused connection,
    /// timeout, TLS).
    func post(_ pending: Pending, to target: Target) async throws -> Int {
        // The deadline is kept here: Linux's URLSession truncates its timeouts to whole seconds (0.5 s fails at once).
        // The attempt is not awaited after its deadline: on Linux a cancelled upload can go on until the server
        // answers (a cancel that comes before the transfer has started is lost), and a task group would wait for it.
        // It is cancelled and left to end on its own; its answer, if one comes, is ignored.
        let outcome = PostOutcome()
        let timeout = target.settings.timeoutSeconds
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Int, any Error>) in
                outcome.start(continuation)
                let upload = Task {
                    do {
                        outcome.finish(.success(try await self.upload(pending, to: target)))
                    } catch {
                        outcome.finish(.failure(error))
                    }
                }
                outcome.onFinish { upload.cancel() }
                Task {
                    try? await Task.sleep(for: .seconds(timeout))
                    outcome.finish(.failure(URLError(.timedOut)))
                }
            }
        } onCancel: {
            outcome.finish(.failure(CancellationError()))
        }
    }

    /// The first of an attempt's endings — its answer, its deadline or the dispatcher's cancellation — resumes the
    /// waiting post; the later ones change nothing.
    final class PostOutcome: Sendable {
        private struct State {
            var continuation: CheckedContinuation<Int, any Error>?
            var result: Result<Int, any Error>?
            var cleanups: [@Sendable () -> Void] = []
        }
        private let state = Mutex(State())

        func start(_ continuation: CheckedContinuation<Int, any Error>) {
            let early = state.withLock { state -> Result<Int, any Error>? in
                if state.result == nil { state.continuation = continuation }
                return state.result
            }
            // Cancelled before the continuation existed.
            if let early { continuation.resume(with: early) }
        }

        func onFinish(_ cleanup: @escaping @Sendable () -> Void) {
            let finished = state.withLock { state -> Bool in
                if state.result == nil { state.cleanups.append(cleanup) }
                return state.result != nil
            }
            if finished { cleanup() }
        }

        func finish(_ result: Result<Int, any Error>) {
            let (continuation, cleanups) = state.withLock {
                state -> (CheckedContinuation<Int, any Error>?, [@Sendable () -> Void]) in
                guard state.result == nil else { return (nil, []) }
                state.result = result
                defer {
                    state.continuation = nil
                    state.cleanups = []
                }
                return (state.continuation, state.cleanups)
            }
            continuation?.resume(with: result)
            for cleanup in cleanups { cleanup() }
        }
    }

    func upload(_ pending: Pending, to target: Target) async throws -> Int {
        let settings = target.settings
        var request = URLRequest(url: settings.url, timeoutInterval: settings.timeoutSeconds + 1)
        request.httpMethod = "POST"
        for (name, value) in settings.headers { request.setValue(value, forHTTPHeaderField: name) }
        request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        request.setValue(pending.type.rawValue, forHTTPHeaderField: "X-BeaconTracker-Event")
        request.setValue("beacon-hub/\(BeaconTrackerVersion.current)", forHTTPHeaderField: "User-Agent")
        let (_, response) = try await target.session.upload(for: request, from: Data(pending.payload))
        guard let http = response as? HTTPURLResponse else { throw URLError(.badServerResponse) }
        return http.statusCode
    }

    /// An attempt's error for the log, without the URL (Foundation's errors carry it whole, query and all).
    static func describe(_ error: any Error) -> String {
        let error = error as NSError
        guard error.domain == NSURLErrorDomain else { return "\(error.domain) \(error.code)" }
        if error.code == URLError.timedOut.rawValue { return "timed out" }
        // libcurl's own message names the host and port only.
        let detail = error.userInfo[NSLocalizedDescriptionKey] as? String
        return "URL error \(error.code)" + (detail.map { ": \($0)" } ?? "")
    }

    // MARK: One URL

    /// An event waiting for one URL: its type and the exact bytes published on MQTT.
    struct Pending: Sendable {
        var type: ZoneEventType
        var payload: [UInt8]
    }

    /// One URL's queue and counts; its worker is woken through `wake` whenever something is queued.
    final class Target: Sendable {
        let index: Int
        let settings: WebhookSettings
        /// Its own session, with this URL's timeout (on Linux a request's own timeout is not honoured).
        let session: URLSession
        let state = Mutex(State())
        let wake: AsyncStream<Void>
        let wakeUp: AsyncStream<Void>.Continuation

        struct State {
            /// Waiting events from `head` on (popped by moving `head`; compacted as it grows).
            var queue: [Pending] = []
            var head = 0
            /// An event is being delivered (it is no longer in `queue`).
            var busy = false
            /// The event being delivered is waiting to retry.
            var backingOff = false
            var delivered = 0
            var failed = 0
            var dropped = 0
            var attempts = 0
            /// Drops not yet logged, and when they last were: one warning a minute at most.
            var unreported = 0
            var reportedAt: ContinuousClock.Instant?

            /// Lets go of the events before `head` once they are many, or all of them.
            mutating func compact() {
                if head == queue.count {
                    queue.removeAll(keepingCapacity: true)
                    head = 0
                } else if head >= 1024, head * 2 >= queue.count {
                    queue.removeFirst(head)
                    head = 0
                }
            }

            func counts(queued: Int) -> Counts {
                Counts(delivered: delivered, failed: failed, dropped: dropped, attempts: attempts, queued: queued)
            }
        }

        init(index: Int, settings: WebhookSettings) {
            self.index = index
            self.settings = settings
            let configuration = URLSessionConfiguration.ephemeral
            // A backstop only: `post` cancels an attempt at its exact deadline.
            configuration.timeoutIntervalForRequest = (settings.timeoutSeconds + 1).rounded(.up)
            configuration.timeoutIntervalForResource = (settings.timeoutSeconds + 1).rounded(.up)
            configuration.httpShouldSetCookies = false
            configuration.urlCache = nil
            configuration.requestCachePolicy = .reloadIgnoringLocalCacheData
            session = URLSession(configuration: configuration)
            (wake, wakeUp) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
        }

        /// Appends, dropping the oldest waiting event when full; returns the drops to log now, if any.
        func push(_ pending: Pending) -> Int? {
            let report = state.withLock { state -> Int? in
                if state.queue.count - state.head >= settings.maxQueued {
                    state.head += 1
                    state.dropped += 1
                    state.unreported += 1
                    state.compact()
                }
                state.queue.append(pending)
                guard state.unreported > 0 else { return nil }
                let now = ContinuousClock.now
                if let last = state.reportedAt, now - last < .seconds(60) { return nil }
                state.reportedAt = now
                defer { state.unreported = 0 }
                return state.unreported
            }
            wakeUp.yield()
            return report
        }

        /// The oldest waiting event, now being delivered.
        func take() -> Pending? {
            state.withLock { state in
                guard state.head < state.queue.count else { return nil }
                let next = state.queue[state.head]
                state.head += 1
                state.compact()
                state.busy = true
                return next
            }
        }

        /// Log metadata naming the webhook without its path or query, which may hold a secret.
        func metadata(_ extra: Logger.Metadata) -> Logger.Metadata {
            var metadata = extra
            metadata["webhook"] = "\(index)"
            metadata["host"] = "\(settings.url.host ?? "")"
            return metadata
        }
    }
}
