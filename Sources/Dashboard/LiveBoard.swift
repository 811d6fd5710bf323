import BeaconModel
import Foundation
import Synchronization

/// What the dashboard knows of the venue now, kept from what the hub publishes (tag states, zone occupancy, events,
/// its status) and from its gateway health, and handed out as `Sendable` snapshots. Also the fan-out of the live
/// stream: each change goes to every connected stream, whose buffer is bounded (a slow browser loses its oldest
/// updates, never the hub's time).
///
/// The hub owns the writes (`observe`, `setGateways`, `setRole`); requests only read.
public final class LiveBoard: Sendable {
    /// One gateway's health as the hub sees it.
    public struct GatewayHealth: Sendable, Hashable, Codable {
        public var gateway: GatewayID
        public var online: Bool
        /// Whether the hub watches it for silence (an unwatched gateway is neither up nor down yet).
        public var monitored: Bool
        public var lastContact: Double?
        public var boot: String?
        /// The `gateway-moved` or `gateway-degraded` alert in force: its links shifted and have not come back.
        public var linkAlert: LinkAlert?

        public init(
            gateway: GatewayID, online: Bool, monitored: Bool, lastContact: Double?, boot: String?,
            linkAlert: LinkAlert? = nil
        ) {
            self.gateway = gateway
            self.online = online
            self.monitored = monitored
            self.lastContact = lastContact
            self.boot = boot
            self.linkAlert = linkAlert
        }
    }

    /// A gateway's link alert as the dashboard shows it (docs/mqtt.md `alert` events with these codes).
    public struct LinkAlert: Sendable, Hashable, Codable {
        public var code: String
        public var reason: String
        /// When it was raised (the fit's scan time).
        public var t: Double
        /// `gateway-moved`: where the links place the gateway now, when they do.
        public var estimatedPosition: EstimatedPosition?

        public init(code: String, reason: String, t: Double, estimatedPosition: EstimatedPosition? = nil) {
            self.code = code
            self.reason = reason
            self.t = t
            self.estimatedPosition = estimatedPosition
        }
    }

    /// Whether the hub does its job now, for `/health` (set by the hub every tick).
    public struct Health: Sendable, Hashable, Codable {
        /// `active`, `standby` or `starting`: a standby hub shows the venue but has no live state of its own.
        public var role: String
        public var mqttConnected: Bool
        /// nil without a history database; false while commits fail (disk full, I/O error).
        public var storeWritable: Bool?
        public var uncommittedBatches: Int

        public init(role: String, mqttConnected: Bool, storeWritable: Bool?, uncommittedBatches: Int) {
            self.role = role
            self.mqttConnected = mqttConnected
            self.storeWritable = storeWritable
            self.uncommittedBatches = uncommittedBatches
        }

        /// Why the hub is not ready, empty when it is.
        public var problems: [String] {
            var problems: [String] = []
            // `serve` (the analytics process) reads the history only: ready as soon as it answers.
            if role != "active" && role != "serve" { problems.append("not the active hub (\(role))") }
            // A standby has no ingest connection of its own: its broker state says nothing about readiness.
            if role == "active" && !mqttConnected { problems.append("not connected to the broker") }
            if storeWritable == false { problems.append("the history database cannot be written") }
            return problems
        }
    }

    /// A change, as the live stream sends it: `event` names the SSE event, `data` is its JSON.
    public struct Update: Sendable, Hashable {
        public var event: String
        public var data: [UInt8]
    }

    /// Everything at one moment.
    public struct Snapshot: Sendable {
        public var tags: [TagID: TagState]
        public var occupancy: [ZoneID: ZoneOccupancy]
        public var gateways: [GatewayID: GatewayHealth]
        public var hub: HubStatus?
        /// Newest last, at most `recentEvents`.
        public var events: [ZoneEvent]
        public var health: Health
    }

    struct State {
        var snapshot = Snapshot(
            tags: [:], occupancy: [:], gateways: [:], hub: nil, events: [],
            health: Health(role: "starting", mqttConnected: false, storeWritable: nil, uncommittedBatches: 0))
        var streams: [Int: AsyncStream<Update>.Continuation] = [:]
        var nextStream = 0
    }

    public let topics: Topics
    /// How many recent events are kept for `/api/events` without a database and for a new page.
    public let recentEvents: Int
    /// How many updates a stream holds for a slow reader before dropping its oldest.
    public let streamBuffer: Int
    let state = Mutex(State())
    let decoder = JSONDecoder()

    public init(topics: Topics, recentEvents: Int = 500, streamBuffer: Int = 1000) {
        self.topics = topics
        self.recentEvents = recentEvents
        self.streamBuffer = streamBuffer
    }

    public var snapshot: Snapshot { state.withLock { $0.snapshot } }

    /// Takes one message the hub publishes; messages on other topics (acknowledgements, claims) are ignored.
    public func observe(topic: String, payload: [UInt8]) {
        let prefix = "\(topics.root)/\(topics.site.rawValue)/"
        guard topic.hasPrefix(prefix) else { return }
        let path = topic.dropFirst(prefix.count).split(separator: "/", omittingEmptySubsequences: false)
        let data = Data(payload)
        let value: PublishedValue? =
            switch (path.first, path.last) {
            case ("tags", "state"): (try? decoder.decode(TagState.self, from: data)).map { .tagState($0) }
            case ("zones", "occupancy"): (try? decoder.decode(ZoneOccupancy.self, from: data)).map { .occupancy($0) }
            case ("events", _): (try? decoder.decode(ZoneEvent.self, from: data)).map { .event($0) }
            case ("hub", "status"): (try? decoder.decode(HubStatus.self, from: data)).map { .hubStatus($0) }
            default: nil
            }
        if let value { observe(value, payload: payload) }
    }

    /// Takes a message the hub publishes as the value it encoded (no decoding); `payload` is streamed as it is.
    public func observe(_ value: PublishedValue, payload: [UInt8]) {
        switch value {
        case .tagState(let state):
            update(payload, as: "tag") { $0.tags[state.tag] = state }
        case .occupancy(let occupancy):
            update(payload, as: "occupancy") { $0.occupancy[occupancy.zone] = occupancy }
        case .event(let event):
            let keep = recentEvents
            update(payload, as: "event") { snapshot in
                snapshot.events.append(event)
                if snapshot.events.count > keep { snapshot.events.removeFirst(snapshot.events.count - keep) }
            }
        case .hubStatus(let status):
            update(payload, as: "hub") { $0.hub = status }
        }
    }

    /// The hub's view of its gateways; streamed only when something other than the contact time changed.
    public func setGateways(_ gateways: [GatewayHealth]) {
        let byID = Dictionary(gateways.map { ($0.gateway, $0) }, uniquingKeysWith: { first, _ in first })
        let changed = state.withLock { state in
            let before = state.snapshot.gateways
            state.snapshot.gateways = byID
            return before.count != byID.count
                || byID.contains { id, health in
                    before[id].map {
                        $0.online != health.online || $0.boot != health.boot || $0.linkAlert != health.linkAlert
                    } ?? true
                }
        }
        guard changed,
            let data = try? JSONEncoder().encode(gateways.sorted { $0.gateway.rawValue < $1.gateway.rawValue })
        else {
            return
        }
        broadcast(Update(event: "gateways", data: Array(data)))
    }

    /// Changes the hub's health; streamed when it changed (other than the backlog count).
    public func updateHealth(_ change: (inout Health) -> Void) {
        let (changed, health) = state.withLock { state in
            let before = state.snapshot.health
            change(&state.snapshot.health)
            var after = state.snapshot.health
            after.uncommittedBatches = before.uncommittedBatches
            return (after != before, state.snapshot.health)
        }
        if changed, let data = try? JSONEncoder().encode(health) {
            broadcast(Update(event: "health", data: Array(data)))
        }
    }

    func update(_ payload: [UInt8], as event: String, _ change: (inout Snapshot) -> Void) {
        state.withLock { change(&$0.snapshot) }
        broadcast(Update(event: event, data: payload))
    }

    func broadcast(_ update: Update) {
        let streams = state.withLock { Array($0.streams.values) }
        for stream in streams { stream.yield(update) }
    }

    /// A stream of every change from now on; it ends when the caller stops iterating or `finishStreams` is called.
    public func updates() -> AsyncStream<Update> {
        let (stream, continuation) = AsyncStream<Update>.makeStream(bufferingPolicy: .bufferingNewest(streamBuffer))
        let id = state.withLock { state in
            defer { state.nextStream += 1 }
            state.streams[state.nextStream] = continuation
            return state.nextStream
        }
        continuation.onTermination = { [weak self] _ in
            _ = self?.state.withLock { $0.streams.removeValue(forKey: id) }
        }
        return stream
    }

    /// The number of connected live streams (`/health` says it).
    public var streamCount: Int { state.withLock { $0.streams.count } }

    /// Ends every live stream (at shutdown, so that open connections close).
    public func finishStreams() {
        let streams = state.withLock { state in
            defer { state.streams = [:] }
            return Array(state.streams.values)
        }
        for stream in streams { stream.finish() }
    }
}
