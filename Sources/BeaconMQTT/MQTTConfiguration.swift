/// Everything needed to connect to one broker.
public struct MQTTConfiguration: Sendable, Hashable {
    /// TLS settings; paths are read when the client starts.
    public struct TLS: Sendable, Hashable {
        /// Supported protocol versions, as libmosquitto names them.
        public enum Version: String, Sendable, Hashable, CaseIterable {
            case tlsv12 = "tlsv1.2"
            case tlsv13 = "tlsv1.3"
        }

        /// CA certificate (PEM) that signed the broker's certificate.
        public var caFile: String
        /// Client certificate (PEM), when the broker requires one.
        public var certificateFile: String?
        /// Client private key (PEM), with `certificateFile`.
        public var keyFile: String?
        public var version: Version
        /// Skips the host-name check of the broker's certificate; only for test set-ups.
        public var allowInsecureHostname: Bool

        public init(
            caFile: String, certificateFile: String? = nil, keyFile: String? = nil, version: Version = .tlsv12,
            allowInsecureHostname: Bool = false
        ) {
            self.caFile = caFile
            self.certificateFile = certificateFile
            self.keyFile = keyFile
            self.version = version
            self.allowInsecureHostname = allowInsecureHostname
        }
    }

    /// A message the broker publishes for us when the connection drops without a DISCONNECT.
    public struct Will: Sendable, Hashable {
        public var topic: String
        public var payload: [UInt8]
        public var qos: MQTTQoS
        public var retain: Bool

        public init(topic: String, payload: [UInt8], qos: MQTTQoS = .atLeastOnce, retain: Bool = true) {
            self.topic = topic
            self.payload = payload
            self.qos = qos
            self.retain = retain
        }
    }

    public var host: String
    public var port: Int
    /// Required for a persistent session; must be unique per broker.
    public var clientID: String
    public var username: String?
    public var password: String?
    public var tls: TLS?
    /// Seconds between PINGREQs when idle; the broker drops us after 1.5 × this without traffic.
    public var keepAlive: Int
    /// False asks the broker to keep our subscriptions and queued QoS 1 messages while we are away.
    public var cleanSession: Bool
    public var will: Will?
    /// First wait after a lost connection; doubles per failed attempt up to `reconnectMaximumDelay`.
    public var reconnectMinimumDelay: Duration
    public var reconnectMaximumDelay: Duration
    /// QoS 1 messages in flight to the broker at once; more wait inside libmosquitto.
    public var maximumInflightMessages: Int
    /// Messages buffered per subscription before new ones are dropped (and counted).
    public var subscriptionBufferSize: Int
    /// The largest packet the broker accepts (mosquitto's `max_packet_size`); nil: MQTT's own limit. MQTT 3.1.1 has
    /// no way to learn it, and a broker drops a client that sends more — which then sends the message again at every
    /// reconnect. Larger publishes are refused here instead (`payloadTooLarge`).
    public var maximumPacketBytes: Int?

    public init(
        host: String = "127.0.0.1", port: Int = 1883, clientID: String, username: String? = nil,
        password: String? = nil, tls: TLS? = nil, keepAlive: Int = 30, cleanSession: Bool = true,
        will: Will? = nil, reconnectMinimumDelay: Duration = .milliseconds(250),
        reconnectMaximumDelay: Duration = .seconds(30), maximumInflightMessages: Int = 100,
        subscriptionBufferSize: Int = 100_000, maximumPacketBytes: Int? = nil
    ) {
        self.host = host
        self.port = port
        self.clientID = clientID
        self.username = username
        self.password = password
        self.tls = tls
        self.keepAlive = keepAlive
        self.cleanSession = cleanSession
        self.will = will
        self.reconnectMinimumDelay = reconnectMinimumDelay
        self.reconnectMaximumDelay = reconnectMaximumDelay
        self.maximumInflightMessages = maximumInflightMessages
        self.subscriptionBufferSize = subscriptionBufferSize
        self.maximumPacketBytes = maximumPacketBytes
    }
}

/// MQTT quality of service levels this client uses.
public enum MQTTQoS: Int32, Sendable, Hashable, CaseIterable, Comparable {
    /// At most once: completes when written to the socket.
    case atMostOnce = 0
    /// At least once: completes when the broker's PUBACK arrives.
    case atLeastOnce = 1

    public static func < (lhs: MQTTQoS, rhs: MQTTQoS) -> Bool { lhs.rawValue < rhs.rawValue }
}

/// One message received on a subscription; topic and payload are copies owned by Swift.
public struct MQTTMessage: Sendable, Hashable {
    public var topic: String
    public var payload: [UInt8]
    public var qos: Int
    public var retained: Bool

    public init(topic: String, payload: [UInt8], qos: Int, retained: Bool) {
        self.topic = topic
        self.payload = payload
        self.qos = qos
        self.retained = retained
    }

    /// The payload as UTF-8 text (invalid bytes replaced).
    public var text: String { String(decoding: payload, as: UTF8.self) }
}

/// Connection changes, for services that react to them (republish status, log, count).
public enum MQTTConnectionEvent: Sendable, Hashable {
    /// CONNACK accepted; `sessionPresent` tells whether the broker kept our session.
    case connected(sessionPresent: Bool)
    /// The connection dropped or could not be made; the client retries after `retryIn`.
    case disconnected(reason: String, retryIn: Duration)
}
