import CMosquitto
import Dispatch
import Foundation
import Logging

extension MQTTClient {
    /// The network thread: connect, run libmosquitto's loop, and on any failure wait with exponential backoff and
    /// jitter before reconnecting — until `shutdown()`. Runs on its own thread because every call here blocks.
    func runNetworkLoop() {
        var delay = configuration.reconnectMinimumDelay
        var needsConnect = true
        var firstAttempt = true
        var stopDeadline: ContinuousClock.Instant?
        while true {
            let stopping = state.withLock { $0.phase != .running }
            if stopping {
                // DISCONNECT gets a moment to be written; a dead socket must not hold shutdown.
                let deadline = stopDeadline ?? .now.advanced(by: .seconds(2))
                stopDeadline = deadline
                if ContinuousClock.now >= deadline { break }
            }
            if needsConnect {
                if stopping { break }
                let rc =
                    firstAttempt
                    ? mosquitto_connect_async(
                        handle, configuration.host, Int32(configuration.port), Int32(configuration.keepAlive))
                    : mosquitto_reconnect_async(handle)
                firstAttempt = false
                if rc != MOSQ_ERR_SUCCESS.rawValue {
                    connectionFailed(rc: rc, retryIn: delay)
                    if waitBeforeReconnect(delay) { break }
                    delay = nextDelay(after: delay)
                    continue
                }
                needsConnect = false
            }
            let rc = mosquitto_loop(handle, 100, 1)
            if rc == MOSQ_ERR_SUCCESS.rawValue {
                if state.withLock({ $0.connected }) { delay = configuration.reconnectMinimumDelay }
                continue
            }
            if stopping { break }
            connectionFailed(rc: rc, retryIn: delay)
            if waitBeforeReconnect(delay) { break }
            delay = nextDelay(after: delay)
            needsConnect = true
        }
        let finished = state.withLock { state -> CheckedContinuation<Void, Never>? in
            state.connected = false
            state.threadDone = true
            defer { state.threadFinished = nil }
            return state.threadFinished
        }
        finished?.resume()
    }

    /// Sleeps `delay`, or less when `shutdown()` wakes us; true when the client is stopping.
    private func waitBeforeReconnect(_ delay: Duration) -> Bool {
        let (seconds, attoseconds) = delay.components
        let nanoseconds = Double(seconds) * 1e9 + Double(attoseconds) / 1e9
        _ = wakeUp.wait(timeout: .now() + .nanoseconds(Int(nanoseconds)))
        return state.withLock { $0.phase != .running }
    }

    /// Doubles the delay up to the maximum, with ±20 % jitter so that many gateways do not reconnect in step.
    private func nextDelay(after delay: Duration) -> Duration {
        let doubled = min(delay * 2, configuration.reconnectMaximumDelay)
        return doubled * Double.random(in: 0.8...1.2)
    }

    /// Records why the connection is down, tells listeners, and fails waiters that cannot succeed by waiting.
    private func connectionFailed(rc: Int32, retryIn delay: Duration) {
        let (error, events, qos0, wasConnected) = state.withLock { state in
            // A refused CONNACK says more than the loop's return code that follows it.
            let error = state.refusal ?? classify(rc: rc, logLine: state.lastLogError)
            state.refusal = nil
            state.lastLogError = nil
            state.lastFailure = error
            let wasConnected = state.connected
            state.connected = false
            state.connectionEpoch += 1
            // libmosquitto drops unsent QoS 0 packets with the connection; their waiters must not hang.
            let lost = state.pendingPublishes.filter { $0.value.qos == .atMostOnce }
            for mid in lost.keys { state.pendingPublishes.removeValue(forKey: mid) }
            return (error, Array(state.eventContinuations.values), Array(lost.values), wasConnected)
        }
        for publish in qos0 {
            publish.continuation.resume(
                returning: .failure(MQTTError(.connectionLost, "the connection dropped before the message was sent")))
        }
        for event in events { event.yield(.disconnected(reason: error.message, retryIn: delay)) }
        if wasConnected {
            logger.warning("MQTT connection lost", metadata: ["reason": "\(error.message)", "retryIn": "\(delay)"])
        } else {
            logger.debug("MQTT connect failed", metadata: ["reason": "\(error.message)", "retryIn": "\(delay)"])
        }
        // Waiting longer will not help these; a plain "unreachable" is reported by the connect timeout instead.
        if error.code == .tlsFailure || error.code == .notAuthorized || error.code == .connectionRefused {
            finishAllConnectionWaiters(.failure(error))
        }
    }

    private func classify(rc: Int32, logLine: String?) -> MQTTError {
        let endpoint = "\(configuration.host):\(configuration.port)"
        let detail = logLine.map { " (\($0))" } ?? ""
        switch rc {
        case MOSQ_ERR_TLS.rawValue, MOSQ_ERR_TLS_HANDSHAKE.rawValue:
            return MQTTError(
                .tlsFailure,
                "TLS handshake with \(endpoint) failed\(detail): check the CA file matches the broker's certificate, "
                    + "the certificate's host name, its dates, and the TLS version")
        case MOSQ_ERR_EAI.rawValue, MOSQ_ERR_LOOKUP.rawValue:
            return MQTTError(.brokerUnreachable, "cannot resolve host \(configuration.host): check the broker address")
        default:
            if let logLine, logLine.contains("OpenSSL") || logLine.contains("TLS") || logLine.contains("SSL") {
                return MQTTError(
                    .tlsFailure,
                    "TLS with \(endpoint) failed (\(logLine)): check the CA file, certificate host name and dates")
            }
            return MQTTError(.brokerUnreachable, "connection to \(endpoint) failed: \(Self.describe(rc))\(detail)")
        }
    }
}
