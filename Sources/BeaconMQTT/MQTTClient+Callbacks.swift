import CMosquitto
import Foundation
import Logging

/// libmosquitto's callbacks. They run on the network thread, cannot capture context, and find their client through
/// the userdata pointer (unretained: the client outlives its network thread, which `shutdown()` joins).
extension MQTTClient {
    static func client(_ userdata: UnsafeMutableRawPointer?) -> MQTTClient? {
        userdata.map { Unmanaged<MQTTClient>.fromOpaque($0).takeUnretainedValue() }
    }

    func installCallbacks() {
        mosquitto_connect_with_flags_callback_set(handle) { _, userdata, rc, flags in
            MQTTClient.client(userdata)?.didConnect(rc: rc, sessionPresent: flags & 1 == 1)
        }
        mosquitto_publish_callback_set(handle) { _, userdata, mid in
            MQTTClient.client(userdata)?.didPublish(mid: mid)
        }
        mosquitto_subscribe_callback_set(handle) { _, userdata, mid, count, granted in
            let ok = count > 0 && granted.map { $0[0] != 0x80 } ?? false
            MQTTClient.client(userdata)?.didSubscribe(mid: mid, granted: ok)
        }
        mosquitto_message_callback_set(handle) { _, userdata, message in
            guard let client = MQTTClient.client(userdata), let message else { return }
            // The message and its buffers belong to libmosquitto and are freed after this returns: copy now.
            let raw = message.pointee
            let topic = String(cString: raw.topic)
            let payload: [UInt8] =
                raw.payloadlen > 0 && raw.payload != nil
                ? Array(UnsafeRawBufferPointer(start: raw.payload, count: Int(raw.payloadlen))) : []
            client.didReceive(
                MQTTMessage(topic: topic, payload: payload, qos: Int(raw.qos), retained: raw.retain))
        }
        mosquitto_log_callback_set(handle) { _, userdata, level, text in
            guard let client = MQTTClient.client(userdata), let text else { return }
            client.didLog(level: level, text: String(cString: text))
        }
    }

    private func didConnect(rc: Int32, sessionPresent: Bool) {
        guard rc == 0 else {
            let error = Self.refusal(connack: rc, configuration: configuration)
            state.withLock { $0.refusal = error }
            logger.error("MQTT broker refused the connection", metadata: ["reason": "\(error.message)"])
            return
        }
        let (events, resubscribe) = state.withLock { state in
            state.connected = true
            state.lastFailure = nil
            var filters: [String: (MQTTQoS, [UInt64])] = [:]
            for (id, subscriber) in state.subscriptions where !sessionPresent || !subscriber.granted {
                var entry = filters[subscriber.filter] ?? (subscriber.qos, [])
                entry.0 = max(entry.0, subscriber.qos)
                entry.1.append(id)
                filters[subscriber.filter] = entry
            }
            return (Array(state.eventContinuations.values), filters)
        }
        logger.info(
            "MQTT connected",
            metadata: ["broker": "\(configuration.host):\(configuration.port)", "sessionPresent": "\(sessionPresent)"])
        for (filter, entry) in resubscribe {
            sendSubscribe(filter: filter, qos: entry.0, subscribers: entry.1)
        }
        for event in events { event.yield(MQTTConnectionEvent.connected(sessionPresent: sessionPresent)) }
        finishAllConnectionWaiters(.success(()))
    }

    private static func refusal(connack rc: Int32, configuration: MQTTConfiguration) -> MQTTError {
        let reason = String(cString: mosquitto_connack_string(rc))
        let user = configuration.username.map { "user \"\($0)\"" } ?? "anonymous clients"
        switch rc {
        case 4, 5:
            return MQTTError(
                .notAuthorized,
                "the broker refused \(user) (\(reason)): check the username and password, and the broker's "
                    + "password file")
        default:
            return MQTTError(
                .connectionRefused,
                "the broker refused the connection (\(reason)): check the client id \"\(configuration.clientID)\" "
                    + "and that the broker speaks MQTT 3.1.1")
        }
    }

    private func didPublish(mid: Int32) {
        let pending = state.withLock { state -> PendingPublish? in
            if let pending = state.pendingPublishes.removeValue(forKey: mid) { return pending }
            if state.abandoned.remove(mid) == nil { state.earlyAcknowledgements.insert(mid) }
            return nil
        }
        pending?.continuation.resume(returning: .success(()))
    }

    private func didSubscribe(mid: Int32, granted: Bool) {
        let subscribers = state.withLock { state -> [UInt64] in
            if let ids = state.subscribeMessageIDs.removeValue(forKey: mid) { return ids }
            state.earlySubacks[mid] = granted
            return []
        }
        if !subscribers.isEmpty { completeSubscribe(subscribers, granted: granted) }
    }

    private func didReceive(_ message: MQTTMessage) {
        let (targets, dropped) = state.withLock { state in
            var targets: [AsyncStream<MQTTMessage>.Continuation] = []
            for subscriber in state.subscriptions.values where Self.matches(subscriber.filter, message.topic) {
                targets.append(subscriber.continuation)
            }
            return (targets, state.droppedMessages)
        }
        var droppedNow = 0
        for target in targets {
            if case .dropped = target.yield(message) { droppedNow += 1 }
        }
        if droppedNow > 0 {
            state.withLock { $0.droppedMessages += droppedNow }
            if dropped == 0 || (dropped + droppedNow) % 1000 == 0 {
                logger.error(
                    "subscriber too slow: MQTT messages dropped",
                    metadata: ["topic": "\(message.topic)", "droppedTotal": "\(dropped + droppedNow)"])
            }
        }
    }

    private func didLog(level: Int32, text: String) {
        if level & (MOSQ_LOG_ERR | MOSQ_LOG_WARNING) != 0 {
            state.withLock { $0.lastLogError = text }
            logger.debug("libmosquitto", metadata: ["message": "\(text)"])
        } else {
            logger.trace("libmosquitto", metadata: ["message": "\(text)"])
        }
    }

    static func matches(_ filter: String, _ topic: String) -> Bool {
        var result = false
        return mosquitto_topic_matches_sub(filter, topic, &result) == MOSQ_ERR_SUCCESS.rawValue && result
    }
}
