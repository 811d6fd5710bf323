/// Why an MQTT operation failed, with a message that says what to do about it.
public struct MQTTError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The failure class; stable, usable as a metric label.
    public enum Code: String, Sendable, Hashable {
        /// The broker refused the username or password (CONNACK 4 or 5).
        case notAuthorized = "not-authorized"
        /// No CONNACK within the connect timeout: broker down, wrong host or port, or a firewall.
        case brokerUnreachable = "broker-unreachable"
        /// The TLS handshake failed: wrong CA, expired or mismatched certificate, TLS version.
        case tlsFailure = "tls-failure"
        /// The broker refused the connection for another reason (protocol version, client id, unavailable).
        case connectionRefused = "connection-refused"
        /// A QoS 0 publish while disconnected: libmosquitto does not queue QoS 0.
        case notConnected = "not-connected"
        /// The connection dropped before a QoS 0 message was written.
        case connectionLost = "connection-lost"
        /// The broker refused a subscription (SUBACK 0x80), usually an ACL.
        case subscriptionRefused = "subscription-refused"
        /// A topic or filter that MQTT does not allow.
        case invalidTopic = "invalid-topic"
        /// A payload over the broker's or the protocol's limit.
        case payloadTooLarge = "payload-too-large"
        /// A setting that cannot work (unreadable certificate, persistent session without client id, …).
        case invalidConfiguration = "invalid-configuration"
        /// Too many publishes awaiting acknowledgement at once.
        case tooManyInFlight = "too-many-in-flight"
        /// The client was shut down before the operation completed.
        case shutdown
        /// The waiting task was cancelled; a queued QoS 1 message may still be delivered.
        case cancelled
        /// No acknowledgement within the caller's timeout; a queued QoS 1 message may still be delivered.
        case timeout
        /// Any other libmosquitto error.
        case other
    }

    public let code: Code
    public let message: String

    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    public var description: String { "\(code.rawValue): \(message)" }
}
