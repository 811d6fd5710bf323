import CMosquitto
import Dispatch
import Foundation
import Logging
import Synchronization

/// The project's one MQTT client: libmosquitto driven by a network thread of its own, seen from Swift as async
/// calls and `AsyncSequence`s.
///
/// - `start()` begins connecting and keeps reconnecting with exponential backoff until `shutdown()`.
/// - `publish` completes when the broker has the message: the PUBACK for QoS 1, the socket write for QoS 0. A QoS 1
///   publish while disconnected is queued by libmosquitto and completes after the reconnect; it is never sent
///   twice by us.
/// - `subscribe` returns after the SUBACK, so a caller may publish knowing the subscription is in place, and
///   re-subscribes by itself after a reconnect that lost the session.
///
/// Callbacks arrive on the network thread; they copy what they need and hand it over under `state`'s lock. Nothing
/// here blocks the cooperative thread pool.
public final class MQTTClient: @unchecked Sendable {
    // @unchecked: `handle` is used only through libmosquitto calls that are thread-safe in threaded mode; all
    // mutable Swift state is inside `state`.

    public let configuration: MQTTConfiguration
    let logger: Logger
    let handle: OpaquePointer
    let state = Mutex(State())
    /// Wakes the network thread from a reconnect wait when `shutdown()` is called.
    let wakeUp = DispatchSemaphore(value: 0)

    /// Everything that changes after `init`, guarded by one lock.
    struct State {
        var phase = Phase.idle
        var connected = false
        /// Incremented on every lost connection, so a QoS 0 publish that raced a disconnect can tell.
        var connectionEpoch = 0
        var lastFailure: MQTTError?
        /// Set by a refused CONNACK, consumed when the loop reports the dropped connection.
        var refusal: MQTTError?
        var lastLogError: String?
        var pendingPublishes: [Int32: PendingPublish] = [:]
        /// PUBACKs that arrived before their publisher registered its continuation.
        var earlyAcknowledgements: Set<Int32> = []
        /// Message ids whose publisher gave up (cancelled, timed out): their late PUBACK is dropped, never parked
        /// where a later publish reusing the 16-bit id would claim it.
        var abandoned: Set<Int32> = []
        /// Subscribers waiting for the SUBACK of one SUBSCRIBE packet.
        var subscribeMessageIDs: [Int32: [UInt64]] = [:]
        /// SUBACKs that arrived before their subscriber was registered under the message id.
        var earlySubacks: [Int32: Bool] = [:]
        var subscriptions: [UInt64: Subscriber] = [:]
        var nextSubscriberID: UInt64 = 0
        var connectionWaiters: [UInt64: CheckedContinuation<Result<Void, MQTTError>, Never>] = [:]
        var nextWaiterID: UInt64 = 0
        var eventContinuations: [UInt64: AsyncStream<MQTTConnectionEvent>.Continuation] = [:]
        var droppedMessages = 0
        var threadFinished: CheckedContinuation<Void, Never>?
        var threadDone = false
    }

    enum Phase {
        case idle, running, stopping, stopped
    }

    struct PendingPublish {
        var qos: MQTTQoS
        var continuation: CheckedContinuation<Result<Void, MQTTError>, Never>
    }

    struct Subscriber {
        var filter: String
        var qos: MQTTQoS
        var continuation: AsyncStream<MQTTMessage>.Continuation
        /// True once a SUBACK granted this filter on the current session.
        var granted = false
        /// The `subscribe` call waiting for the first SUBACK.
        var waiter: CheckedContinuation<Result<Void, MQTTError>, Never>?
    }

    /// Creates the client; nothing touches the network until `start()`.
    public init(configuration: MQTTConfiguration, logger: Logger = Logger(label: "beacontracker.mqtt"))
        throws(MQTTError)
    {
        MosquittoLibrary.initialiseOnce()
        if !configuration.cleanSession && configuration.clientID.isEmpty {
            throw MQTTError(
                .invalidConfiguration, "a persistent session (cleanSession false) needs a client id: set clientID")
        }
        guard (1...65535).contains(configuration.port) else {
            throw MQTTError(.invalidConfiguration, "port \(configuration.port) is not in 1...65535")
        }
        guard let handle = mosquitto_new(configuration.clientID, configuration.cleanSession, nil) else {
            throw MQTTError(.other, "mosquitto_new failed: out of memory or an invalid client id")
        }
        self.configuration = configuration
        self.logger = logger
        self.handle = handle
        mosquitto_user_data_set(handle, Unmanaged.passUnretained(self).toOpaque())
        // Every stored property is set: if this throws, `deinit` runs and destroys the handle. Destroying it here
        // as well would close libmosquitto's descriptors twice — by then reused by SQLite files or other sockets.
        try applyOptions()
        installCallbacks()
    }

    deinit {
        mosquitto_destroy(handle)
    }

    private func applyOptions() throws(MQTTError) {
        let configuration = self.configuration
        try check(mosquitto_int_option(handle, MOSQ_OPT_PROTOCOL_VERSION, MQTT_PROTOCOL_V311), "protocol version")
        try check(mosquitto_threaded_set(handle, true), "threaded mode")
        try check(
            mosquitto_max_inflight_messages_set(handle, UInt32(max(1, configuration.maximumInflightMessages))),
            "maximum in-flight messages")
        if configuration.username != nil || configuration.password != nil {
            try check(
                mosquitto_username_pw_set(handle, configuration.username, configuration.password), "username")
        }
        if let will = configuration.will {
            try Self.validatePublishTopic(will.topic)
            let rc = will.payload.withUnsafeBytes { bytes in
                mosquitto_will_set(
                    handle, will.topic, Int32(bytes.count), bytes.baseAddress, will.qos.rawValue, will.retain)
            }
            try check(rc, "last-will")
        }
        if let tls = configuration.tls {
            for (name, path) in [("CA file", tls.caFile), ("certificate", tls.certificateFile), ("key", tls.keyFile)] {
                if let path, !FileManager.default.isReadableFile(atPath: path) {
                    throw MQTTError(
                        .invalidConfiguration, "TLS \(name) \(path) is missing or unreadable: check the path and mode")
                }
            }
            if (tls.certificateFile == nil) != (tls.keyFile == nil) {
                throw MQTTError(
                    .invalidConfiguration, "TLS client certificate and key go together: set both or neither")
            }
            try check(
                mosquitto_tls_set(handle, tls.caFile, nil, tls.certificateFile, tls.keyFile, nil),
                "TLS files (are they PEM, and does the key match the certificate?)")
            try check(mosquitto_tls_opts_set(handle, 1, tls.version.rawValue, nil), "TLS options")
            try check(mosquitto_tls_insecure_set(handle, tls.allowInsecureHostname), "TLS host-name check")
        }
    }

    private func check(_ rc: Int32, _ what: String) throws(MQTTError) {
        guard rc == MOSQ_ERR_SUCCESS.rawValue else {
            throw MQTTError(.invalidConfiguration, "cannot set \(what): \(Self.describe(rc))")
        }
    }

    // MARK: - Connecting

    /// Starts the network thread, which connects and keeps reconnecting until `shutdown()`. Returns at once.
    public func start() {
        let shouldStart = state.withLock { state -> Bool in
            guard state.phase == .idle else { return false }
            state.phase = .running
            return true
        }
        guard shouldStart else { return }
        let thread = Thread { [self] in runNetworkLoop() }
        thread.name = "mqtt-\(configuration.clientID)"
        thread.start()
    }

    /// Starts the client if needed and waits for the first accepted CONNACK.
    ///
    /// On a refused CONNACK or a TLS failure this throws at once; with no answer it throws `brokerUnreachable` after
    /// `timeout`. Either way the client keeps retrying in the background until `shutdown()`.
    public func connect(timeout: Duration = .seconds(10)) async throws(MQTTError) {
        start()
        let result = await waitForConnection(timeout: timeout)
        try result.get()
    }

    /// True while a CONNACK-accepted connection is up.
    public var isConnected: Bool { state.withLock { $0.connected } }

    /// Messages dropped because a subscription's buffer was full.
    public var droppedMessages: Int { state.withLock { $0.droppedMessages } }

    /// A new stream of connection changes; finishes at shutdown.
    public func connectionEvents() -> AsyncStream<MQTTConnectionEvent> {
        let (stream, continuation) = AsyncStream<MQTTConnectionEvent>.makeStream(bufferingPolicy: .bufferingNewest(64))
        let id = state.withLock { state -> UInt64? in
            guard state.phase != .stopped else { return nil }
            state.nextWaiterID += 1
            state.eventContinuations[state.nextWaiterID] = continuation
            return state.nextWaiterID
        }
        if let id {
            continuation.onTermination = { [weak self] _ in
                self?.state.withLock { _ = $0.eventContinuations.removeValue(forKey: id) }
            }
        } else {
            continuation.finish()
        }
        return stream
    }

    private func waitForConnection(timeout: Duration) async -> Result<Void, MQTTError> {
        let waiterID = state.withLock { state -> UInt64 in
            state.nextWaiterID += 1
            return state.nextWaiterID
        }
        let timer = Task { [weak self] in
            try? await Task.sleep(for: timeout)
            guard let self else { return }
            finishConnectionWaiter(waiterID, with: unreachableError(after: timeout))
        }
        defer { timer.cancel() }
        return await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                let immediate = state.withLock { state -> Result<Void, MQTTError>? in
                    if state.connected { return .success(()) }
                    if state.phase == .stopping || state.phase == .stopped {
                        return .failure(MQTTError(.shutdown, "the client was shut down"))
                    }
                    state.connectionWaiters[waiterID] = continuation
                    return nil
                }
                if let immediate { continuation.resume(returning: immediate) }
            }
        } onCancel: {
            finishConnectionWaiter(waiterID, with: MQTTError(.cancelled, "connect was cancelled"))
        }
    }

    private func unreachableError(after timeout: Duration) -> MQTTError {
        let (failure, logLine) = state.withLock { ($0.lastFailure, $0.lastLogError) }
        var detail = failure.map { " (last error: \($0.message))" } ?? ""
        if failure == nil, let logLine { detail = " (libmosquitto: \(logLine))" }
        return MQTTError(
            .brokerUnreachable,
            "no answer from the broker at \(configuration.host):\(configuration.port) within \(timeout)\(detail): "
                + "check that mosquitto runs, the host and port, and any firewall")
    }

    private func finishConnectionWaiter(_ id: UInt64, with error: MQTTError) {
        let continuation = state.withLock { $0.connectionWaiters.removeValue(forKey: id) }
        continuation?.resume(returning: .failure(error))
    }

    /// Resumes every connect waiter with `result`; called by the network thread.
    func finishAllConnectionWaiters(_ result: Result<Void, MQTTError>) {
        let waiters = state.withLock { state in
            defer { state.connectionWaiters.removeAll() }
            return Array(state.connectionWaiters.values)
        }
        for waiter in waiters { waiter.resume(returning: result) }
    }

    // MARK: - Publishing

    /// Publishes `payload` and returns once the broker has it: the PUBACK for QoS 1, the socket write for QoS 0.
    ///
    /// A QoS 1 message published while disconnected is queued by libmosquitto and this call waits until it is
    /// delivered after the reconnect. A QoS 0 message while disconnected throws `notConnected`.
    public func publish(
        _ payload: some Collection<UInt8>, to topic: String, qos: MQTTQoS = .atLeastOnce, retain: Bool = false
    ) async throws(MQTTError) {
        try Self.validatePublishTopic(topic)
        let bytes = Array(payload)
        guard bytes.count <= 268_435_455 else {
            throw MQTTError(.payloadTooLarge, "payload of \(bytes.count) bytes exceeds MQTT's 256 MiB limit")
        }
        try checkPacketSize(payload: bytes.count, topic: topic, qos: qos)
        let midBox = Mutex<Int32?>(nil)
        let result = await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                enqueuePublish(bytes, topic: topic, qos: qos, retain: retain, continuation: continuation) { mid in
                    midBox.withLock { $0 = mid }
                }
            }
        } onCancel: {
            if let mid = midBox.withLock({ $0 }) {
                let pending = state.withLock { state in
                    let pending = state.pendingPublishes.removeValue(forKey: mid)
                    if pending != nil { state.abandoned.insert(mid) }
                    return pending
                }
                pending?.continuation.resume(
                    returning: .failure(
                        MQTTError(.cancelled, "publish to \(topic) was cancelled; it may still be delivered")))
            }
        }
        try result.get()
    }

    /// `publish` bounded in time: for messages that must not hold up their caller, such as a final status while
    /// shutting down when the broker may already be gone. Throws `timeout` when no acknowledgement came in time.
    public func publish(
        _ payload: some Collection<UInt8>, to topic: String, qos: MQTTQoS = .atLeastOnce, retain: Bool = false,
        timeout: Duration
    ) async throws(MQTTError) {
        let bytes = Array(payload)
        let outcome = await withTaskGroup(of: MQTTError?.self) { group in
            group.addTask {
                do throws(MQTTError) {
                    try await self.publish(bytes, to: topic, qos: qos, retain: retain)
                    return nil
                } catch {
                    return error
                }
            }
            group.addTask {
                do {
                    try await Task.sleep(for: timeout)
                } catch {
                    return MQTTError(.cancelled, "publish to \(topic) was cancelled; it may still be delivered")
                }
                return MQTTError(.timeout, "no acknowledgement for \(topic) within \(timeout)")
            }
            let first = await group.next() ?? nil
            group.cancelAll()
            return first
        }
        if let outcome { throw outcome }
    }

    /// Hands `payload` to libmosquitto and returns at once, without waiting for the broker: for a producer that
    /// must not stall on acknowledgements (the hub's events and retained state). QoS 1 messages are queued while
    /// disconnected and delivered after the reconnect; a QoS 0 message while disconnected throws `notConnected`.
    public func send(
        _ payload: [UInt8], to topic: String, qos: MQTTQoS = .atLeastOnce, retain: Bool = false
    ) throws(MQTTError) {
        try Self.validatePublishTopic(topic)
        try checkPacketSize(payload: payload.count, topic: topic, qos: qos)
        let live = state.withLock { $0.phase != .stopping && $0.phase != .stopped }
        guard live else { throw MQTTError(.shutdown, "the client was shut down") }
        var mid: Int32 = 0
        let rc = payload.withUnsafeBytes { raw in
            mosquitto_publish(handle, &mid, topic, Int32(raw.count), raw.baseAddress, qos.rawValue, retain)
        }
        if let error = Self.publishFailure(rc, qos: qos, topic: topic) { throw error }
        // Nobody waits for this PUBACK (or QoS 0 write notice): drop it when it comes, or now if it came already.
        state.withLock { state in
            if state.earlyAcknowledgements.remove(mid) == nil { state.abandoned.insert(mid) }
        }
    }

    private func enqueuePublish(
        _ bytes: [UInt8], topic: String, qos: MQTTQoS, retain: Bool,
        continuation: CheckedContinuation<Result<Void, MQTTError>, Never>, registered: (Int32) -> Void
    ) {
        let epoch = state.withLock { state -> Int? in
            state.phase == .stopping || state.phase == .stopped ? nil : state.connectionEpoch
        }
        guard let epoch else {
            continuation.resume(returning: .failure(MQTTError(.shutdown, "the client was shut down")))
            return
        }
        var mid: Int32 = 0
        let rc = bytes.withUnsafeBytes { raw in
            mosquitto_publish(handle, &mid, topic, Int32(raw.count), raw.baseAddress, qos.rawValue, retain)
        }
        if let error = Self.publishFailure(rc, qos: qos, topic: topic) {
            continuation.resume(returning: .failure(error))
            return
        }
        let immediate = state.withLock { state -> Result<Void, MQTTError>? in
            if state.earlyAcknowledgements.remove(mid) != nil { return .success(()) }
            if qos == .atMostOnce && state.connectionEpoch != epoch {
                return .failure(MQTTError(.connectionLost, "the connection dropped while sending to \(topic)"))
            }
            if state.pendingPublishes[mid] != nil {
                return .failure(
                    MQTTError(.tooManyInFlight, "65535 publishes await acknowledgement: wait for some to complete"))
            }
            state.pendingPublishes[mid] = PendingPublish(qos: qos, continuation: continuation)
            return nil
        }
        if let immediate {
            continuation.resume(returning: immediate)
        } else {
            registered(mid)
        }
    }

    /// What `mosquitto_publish`'s result means for the caller: nil when the message is queued — which includes a
    /// QoS 1 message while disconnected (libmosquitto sends it after the reconnect).
    private static func publishFailure(_ rc: Int32, qos: MQTTQoS, topic: String) -> MQTTError? {
        if rc == MOSQ_ERR_SUCCESS.rawValue || (rc == MOSQ_ERR_NO_CONN.rawValue && qos == .atLeastOnce) { return nil }
        if rc == MOSQ_ERR_NO_CONN.rawValue {
            return MQTTError(.notConnected, "not connected: a QoS 0 message to \(topic) is not queued; retry later")
        }
        return publishError(rc, topic: topic)
    }

    private static func publishError(_ rc: Int32, topic: String) -> MQTTError {
        switch rc {
        case MOSQ_ERR_PAYLOAD_SIZE.rawValue, MOSQ_ERR_OVERSIZE_PACKET.rawValue:
            return MQTTError(.payloadTooLarge, "payload to \(topic) is larger than the broker accepts")
        case MOSQ_ERR_INVAL.rawValue:
            return MQTTError(.invalidTopic, "cannot publish to \"\(topic)\": invalid topic or arguments")
        default:
            return MQTTError(.other, "publish to \(topic) failed: \(describe(rc))")
        }
    }

    /// Refuses a PUBLISH packet larger than `maximumPacketBytes`: the broker would drop the connection, and
    /// libmosquitto would send the message again after every reconnect, for ever.
    func checkPacketSize(payload: Int, topic: String, qos: MQTTQoS) throws(MQTTError) {
        guard let limit = configuration.maximumPacketBytes else { return }
        // The whole packet, as MQTT 5 defines its maximum packet size. mosquitto 2.0 leaves out the 1–4 bytes of the
        // remaining length (with max_packet_size 4096 it took a 4,098-byte packet), so this refuses a few bytes early.
        let remaining = 2 + topic.utf8.count + (qos == .atMostOnce ? 0 : 2) + payload
        let lengthBytes = remaining < 128 ? 1 : remaining < 16_384 ? 2 : remaining < 2_097_152 ? 3 : 4
        let packet = 1 + lengthBytes + remaining
        guard packet > limit else { return }
        throw MQTTError(
            .payloadTooLarge,
            "a \(packet)-byte message to \(topic) exceeds the broker's packet limit of \(limit) bytes "
                + "(mqtt.maxPacketBytes; mosquitto's max_packet_size): not sent, since the broker would drop the "
                + "connection and the message would be sent again at every reconnect")
    }

    static func validatePublishTopic(_ topic: String) throws(MQTTError) {
        guard mosquitto_pub_topic_check(topic) == MOSQ_ERR_SUCCESS.rawValue else {
            throw MQTTError(
                .invalidTopic, "\"\(topic)\" is not a valid topic to publish to (no +, #, or empty topic)")
        }
    }

    // MARK: - Subscribing

    /// Subscribes to `filter` and returns once the broker's SUBACK granted it.
    ///
    /// Messages matching `filter` arrive on the returned sequence in order. If the consumer falls more than
    /// `subscriptionBufferSize` messages behind, newer messages are dropped and counted in `droppedMessages`; the
    /// contract's acknowledgements make such batches come again.
    public func subscribe(to filter: String, qos: MQTTQoS = .atLeastOnce) async throws(MQTTError) -> MQTTSubscription {
        guard mosquitto_sub_topic_check(filter) == MOSQ_ERR_SUCCESS.rawValue else {
            throw MQTTError(.invalidTopic, "\"\(filter)\" is not a valid subscription filter")
        }
        let (stream, continuation) = AsyncStream<MQTTMessage>.makeStream(
            bufferingPolicy: .bufferingOldest(max(1, configuration.subscriptionBufferSize)))
        let subscriberID = state.withLock { state -> UInt64? in
            guard state.phase != .stopping && state.phase != .stopped else { return nil }
            state.nextSubscriberID += 1
            state.subscriptions[state.nextSubscriberID] = Subscriber(
                filter: filter, qos: qos, continuation: continuation)
            return state.nextSubscriberID
        }
        guard let subscriberID else { throw MQTTError(.shutdown, "the client was shut down") }
        continuation.onTermination = { [weak self] _ in
            self?.removeSubscriber(subscriberID)
        }
        let result = await withCheckedContinuation { waiter in
            let active = state.withLock { state -> Bool in
                guard state.subscriptions[subscriberID] != nil else { return false }
                state.subscriptions[subscriberID]?.waiter = waiter
                return true
            }
            guard active else {
                waiter.resume(returning: .failure(MQTTError(.shutdown, "the client was shut down")))
                return
            }
            // While disconnected the connect callback subscribes every filter not yet granted.
            sendSubscribe(filter: filter, qos: qos, subscribers: [subscriberID])
        }
        switch result {
        case .success:
            return MQTTSubscription(stream: stream, subscriberID: subscriberID)
        case .failure(let error):
            continuation.finish()
            throw error
        }
    }

    /// Registers `filter` at once and returns its messages without waiting for the broker; the SUBSCRIBE goes out
    /// now if connected, else with the next connect. Call it before `start()` on a persistent session: the messages
    /// the broker queued while the client was away arrive right after the CONNACK, before any `subscribe` made after
    /// the connect could register, and would otherwise be dropped. `granted(_:)` waits for the SUBACK.
    public func register(_ filter: String, qos: MQTTQoS = .atLeastOnce) throws(MQTTError) -> MQTTSubscription {
        guard mosquitto_sub_topic_check(filter) == MOSQ_ERR_SUCCESS.rawValue else {
            throw MQTTError(.invalidTopic, "\"\(filter)\" is not a valid subscription filter")
        }
        let (stream, continuation) = AsyncStream<MQTTMessage>.makeStream(
            bufferingPolicy: .bufferingOldest(max(1, configuration.subscriptionBufferSize)))
        let registered = state.withLock { state -> (id: UInt64, connected: Bool)? in
            guard state.phase != .stopping && state.phase != .stopped else { return nil }
            state.nextSubscriberID += 1
            state.subscriptions[state.nextSubscriberID] = Subscriber(
                filter: filter, qos: qos, continuation: continuation)
            return (state.nextSubscriberID, state.connected)
        }
        guard let registered else { throw MQTTError(.shutdown, "the client was shut down") }
        continuation.onTermination = { [weak self] _ in
            self?.removeSubscriber(registered.id)
        }
        if registered.connected { sendSubscribe(filter: filter, qos: qos, subscribers: [registered.id]) }
        return MQTTSubscription(stream: stream, subscriberID: registered.id)
    }

    /// Waits until the broker granted `subscription` (its SUBACK); throws if it refused or the client shut down.
    public func granted(_ subscription: MQTTSubscription) async throws(MQTTError) {
        guard let id = subscription.subscriberID else { return }
        let result = await withCheckedContinuation { waiter in
            let known = state.withLock { state -> Result<Void, MQTTError>? in
                guard let subscriber = state.subscriptions[id] else {
                    return .failure(MQTTError(.shutdown, "the client was shut down"))
                }
                if subscriber.granted { return .success(()) }
                state.subscriptions[id]?.waiter = waiter
                return nil
            }
            if let known { waiter.resume(returning: known) }
        }
        try result.get()
    }

    /// Sends one SUBSCRIBE and files `subscribers` under its message id for the SUBACK callback.
    func sendSubscribe(filter: String, qos: MQTTQoS, subscribers: [UInt64]) {
        var mid: Int32 = 0
        let rc = mosquitto_subscribe(handle, &mid, filter, qos.rawValue)
        if rc == MOSQ_ERR_NO_CONN.rawValue { return }
        guard rc == MOSQ_ERR_SUCCESS.rawValue else {
            let error = MQTTError(.other, "subscribe to \(filter) failed: \(Self.describe(rc))")
            let waiters = state.withLock { state in
                subscribers.compactMap { id in
                    defer { state.subscriptions[id]?.waiter = nil }
                    return state.subscriptions[id]?.waiter
                }
            }
            for waiter in waiters { waiter.resume(returning: .failure(error)) }
            return
        }
        let early = state.withLock { state -> Bool? in
            if let granted = state.earlySubacks.removeValue(forKey: mid) { return granted }
            state.subscribeMessageIDs[mid, default: []].append(contentsOf: subscribers)
            return nil
        }
        if let early { completeSubscribe(subscribers, granted: early) }
    }

    /// Marks `subscribers` granted or refused and resumes their waiting `subscribe` calls.
    func completeSubscribe(_ subscribers: [UInt64], granted: Bool) {
        let resumptions = state.withLock { state in
            subscribers.compactMap { id -> (String, CheckedContinuation<Result<Void, MQTTError>, Never>?)? in
                guard let subscriber = state.subscriptions[id] else { return nil }
                state.subscriptions[id]?.granted = granted
                state.subscriptions[id]?.waiter = nil
                return (subscriber.filter, subscriber.waiter)
            }
        }
        for (filter, waiter) in resumptions {
            if granted {
                waiter?.resume(returning: .success(()))
            } else {
                let error = MQTTError(
                    .subscriptionRefused,
                    "the broker refused the subscription to \(filter): check the broker's ACL for this user")
                if let waiter {
                    waiter.resume(returning: .failure(error))
                } else {
                    logger.error("subscription refused after reconnect", metadata: ["filter": "\(filter)"])
                }
            }
        }
    }

    private func removeSubscriber(_ id: UInt64) {
        let filter = state.withLock { state -> String? in
            guard let removed = state.subscriptions.removeValue(forKey: id) else { return nil }
            let stillUsed = state.subscriptions.values.contains { $0.filter == removed.filter }
            return stillUsed || state.phase != .running ? nil : removed.filter
        }
        if let filter {
            mosquitto_unsubscribe(handle, nil, filter)
        }
    }

    // MARK: - Shutting down

    /// Waits up to `drainTimeout` for publishes in flight, sends DISCONNECT (so the broker does not publish the
    /// last-will), stops the network thread and ends every subscription and pending call.
    public func shutdown(drainTimeout: Duration = .seconds(2)) async {
        let clock = ContinuousClock()
        let deadline = clock.now.advanced(by: drainTimeout)
        while clock.now < deadline {
            let busy = state.withLock { $0.connected && !$0.pendingPublishes.isEmpty }
            if !busy { break }
            try? await Task.sleep(for: .milliseconds(10))
        }
        let wasRunning = state.withLock { state -> Bool in
            switch state.phase {
            case .idle:
                state.phase = .stopped
                return false
            case .running:
                state.phase = .stopping
                return true
            case .stopping, .stopped:
                return false
            }
        }
        if wasRunning {
            mosquitto_disconnect(handle)
            wakeUp.signal()
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let done = state.withLock { state -> Bool in
                    if state.threadDone { return true }
                    state.threadFinished = continuation
                    return false
                }
                if done { continuation.resume() }
            }
        }
        failEverything(with: MQTTError(.shutdown, "the client was shut down"))
    }

    /// Resumes every pending call with `error` and finishes every stream.
    private func failEverything(with error: MQTTError) {
        let (publishes, waiters, subscribers, events) = state.withLock { state in
            state.phase = .stopped
            defer {
                state.pendingPublishes.removeAll()
                state.subscribeMessageIDs.removeAll()
                state.connectionWaiters.removeAll()
                state.subscriptions.removeAll()
                state.eventContinuations.removeAll()
            }
            return (
                Array(state.pendingPublishes.values), Array(state.connectionWaiters.values),
                Array(state.subscriptions.values), Array(state.eventContinuations.values)
            )
        }
        for publish in publishes { publish.continuation.resume(returning: .failure(error)) }
        for waiter in waiters { waiter.resume(returning: .failure(error)) }
        for subscriber in subscribers {
            subscriber.waiter?.resume(returning: .failure(error))
            subscriber.continuation.finish()
        }
        for event in events { event.finish() }
    }

    /// libmosquitto's text for a return code.
    static func describe(_ rc: Int32) -> String {
        if rc == MOSQ_ERR_ERRNO.rawValue {
            return String(cString: strerror(errno))
        }
        return String(cString: mosquitto_strerror(rc))
    }
}
