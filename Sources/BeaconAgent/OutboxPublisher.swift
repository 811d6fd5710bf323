import BeaconMQTT
import BeaconModel
import BeaconStore
import Foundation
import Logging

/// Closes the loss-free loop of docs/mqtt.md on the agent side: a batch is stored in the outbox before it is
/// published, published only while connected, and deleted only when the hub's acknowledgement covers it.
/// Unacknowledged batches are sent again, oldest first and rate-limited, after `resendAfter` or a reconnect.
actor OutboxPublisher {
    let gateway: GatewayID
    let boot: String
    let topics: Topics
    let client: MQTTClient
    let outbox: Outbox
    let settings: AgentConfiguration.OutboxSettings
    let logger: Logger
    /// When each batch was last handed to the broker, by (boot, seq).
    private var sentAt: [BatchKey: Double] = [:]
    /// The publishes awaiting their PUBACK, by when they were handed over: a slot whose PUBACK has not come within
    /// `inFlightTimeout` is freed by the resend pass (the batch stays in the outbox and is sent again), so a lost
    /// PUBACK cannot block publishing for good. Each send used to race its publish against a 30 s `Task.sleep`, whose
    /// timer fired 30 s later all the same: ten wake-ups a second in a busy shop.
    private var inFlight: [UInt64: Double] = [:]
    private var nextPublish: UInt64 = 0
    let maximumInFlight = 32
    let inFlightTimeout = 30.0
    private(set) var published = 0
    private(set) var resent = 0
    private(set) var rejectedAcknowledgements = 0

    struct BatchKey: Hashable {
        var boot: String
        var seq: UInt64
    }

    init(
        gateway: GatewayID, boot: String, topics: Topics, client: MQTTClient, outbox: Outbox,
        settings: AgentConfiguration.OutboxSettings, logger: Logger
    ) {
        self.gateway = gateway
        self.boot = boot
        self.topics = topics
        self.client = client
        self.outbox = outbox
        self.settings = settings
        self.logger = logger
    }

    /// Stores `sightings` as the next batch and publishes it if connected.
    func store(_ sightings: [Sighting], clockSynced: Bool) async {
        let now = Date().timeIntervalSince1970
        let gateway = self.gateway
        let boot = self.boot
        do {
            let batch = try await outbox.append(boot: boot, at: now) { seq in
                let batch = SightingBatch(
                    gateway: gateway, boot: boot, seq: seq, sent: now, clockSynced: clockSynced, sightings: sightings)
                return try batch.fastEncoded() ?? ContractCoding.encode(batch)
            }
            if client.isConnected { send(batch, now: now) }
        } catch {
            // A full disk or a broken file: the sightings cannot be kept. Say so loudly; the next batch retries.
            logger.error("cannot store a batch in the outbox", metadata: ["error": "\(error)"])
        }
    }

    /// Hands one batch to the client without waiting: the PUBACK only frees the in-flight slot.
    private func send(_ batch: Outbox.Batch, now: Double) {
        guard inFlight.count < maximumInFlight else { return }
        nextPublish += 1
        let publish = nextPublish
        inFlight[publish] = now
        sentAt[BatchKey(boot: batch.boot, seq: batch.seq)] = now
        published += 1
        let client = self.client
        let topic = topics.sightings(gateway)
        Task {
            do {
                try await client.publish(batch.payload, to: topic, qos: .atLeastOnce)
            } catch {
                // Left in the outbox: the resend pass picks it up.
            }
            self.sendFinished(publish)
        }
    }

    private func sendFinished(_ publish: UInt64) { inFlight[publish] = nil }

    /// Frees the slots of publishes whose PUBACK is overdue (see `inFlight`).
    private func expireInFlight(now: Double) {
        guard inFlight.values.contains(where: { now - $0 > inFlightTimeout }) else { return }
        inFlight = inFlight.filter { now - $0.value <= inFlightTimeout }
    }

    /// Waits (at most `timeout`) until every batch handed to the client has its PUBACK or gave up: at a clean stop the
    /// goodbye status goes after the last batches, not beside them.
    func settle(timeout: Duration) async {
        let deadline = ContinuousClock.now.advanced(by: timeout)
        while !inFlight.isEmpty && ContinuousClock.now < deadline {
            guard (try? await Task.sleep(for: .milliseconds(20))) != nil else { return }
        }
    }

    /// Applies the hub's acknowledgement: deletes covered batches of this gateway.
    func receive(_ message: MQTTMessage) async {
        guard !message.payload.isEmpty else { return }
        let acknowledgement: Acknowledgement
        do {
            acknowledgement = try ContractCoding.decode(Acknowledgement.self, from: message.payload)
        } catch {
            rejectedAcknowledgements += 1
            logger.debug("rejected acknowledgement", metadata: ["error": "\(error)"])
            return
        }
        guard acknowledgement.gateway == gateway else {
            rejectedAcknowledgements += 1
            return
        }
        for entry in acknowledgement.acks {
            do {
                try await outbox.acknowledge(boot: entry.boot, upTo: entry.seq)
            } catch {
                logger.error("cannot delete acknowledged batches", metadata: ["error": "\(error)"])
            }
            sentAt = sentAt.filter { !($0.key.boot == entry.boot && $0.key.seq <= entry.seq) }
        }
    }

    /// After a reconnect nothing in flight can be trusted: everything unacknowledged is due again.
    func connectionRestored() {
        sentAt.removeAll()
    }

    /// One pass: enforce the bounds, then resend what is due, at most `resendPerSecond × interval`.
    func resendPass(interval: Double) async {
        let now = Date().timeIntervalSince1970
        expireInFlight(now: now)
        do {
            let dropped = try await outbox.enforceBounds(
                maxBytes: settings.maxBytes, maxAge: settings.maxAgeHours * 3600, now: now)
            if dropped > 0 {
                logger.warning("outbox full: oldest batches dropped", metadata: ["dropped": "\(dropped)"])
            }
            guard client.isConnected else { return }
            let budget = max(1, Int(settings.resendPerSecond * interval))
            var sentNow = 0
            for batch in try await outbox.pending(limit: budget * 4) where sentNow < budget {
                let key = BatchKey(boot: batch.boot, seq: batch.seq)
                if let last = sentAt[key], now - last < settings.resendAfterSeconds { continue }
                if sentAt[key] != nil { resent += 1 }
                send(batch, now: now)
                sentNow += 1
            }
        } catch is CancellationError {
            // Shutting down.
        } catch {
            logger.error("outbox pass failed", metadata: ["error": "\(error)"])
        }
    }

    func statistics() -> (published: Int, resent: Int) { (published, resent) }
}
