import BeaconModel
import CoreMetrics
import Prometheus
import Synchronization

/// The hub's Prometheus metrics (`/metrics`, docs/dashboard.md), through the swift-metrics API over a registry of the
/// hub's own (not the process-wide bootstrap: two hubs in one test process keep their figures apart).
///
/// Per-batch figures are recorded where they happen (sightings per gateway, inference time, commit latency); the
/// core's counters are carried over by difference at each tick, so that they stay the one source of the status.
public final class HubMetrics: Sendable {
    public let registry = PrometheusCollectorRegistry()
    let factory: PrometheusMetricsFactory
    let perGateway = Mutex<[GatewayID: CoreMetrics.Counter]>([:])
    let inference: CoreMetrics.Timer
    let commitLatency: CoreMetrics.Timer
    let trackedTags: CoreMetrics.Gauge
    let mqttConnected: CoreMetrics.Gauge
    let uncommittedBatches: CoreMetrics.Gauge
    let deliveryLag: CoreMetrics.Gauge
    let synced = Mutex(Synced())

    struct Synced {
        var ingest = HubStatus.Ingest()
        var dropped = 0
        var webhooks: [WebhookDispatcher.Counts] = []
        var counters: [String: CoreMetrics.Counter] = [:]
        var gauges: [String: CoreMetrics.Gauge] = [:]
    }

    public init() {
        var factory = PrometheusMetricsFactory(registry: registry)
        // A batch takes well under a millisecond to apply; the default buckets start at 5 ms.
        factory.durationHistogramBuckets["beacontracker_inference_seconds"] = [
            .microseconds(50), .microseconds(100), .microseconds(250), .microseconds(500), .milliseconds(1),
            .milliseconds(2), .milliseconds(5), .milliseconds(10), .milliseconds(50), .milliseconds(250),
        ]
        self.factory = factory
        inference = CoreMetrics.Timer(label: "beacontracker_inference_seconds", factory: factory)
        commitLatency = CoreMetrics.Timer(label: "beacontracker_store_commit_seconds", factory: factory)
        trackedTags = CoreMetrics.Gauge(label: "beacontracker_tracked_tags", factory: factory)
        mqttConnected = CoreMetrics.Gauge(label: "beacontracker_mqtt_connected", factory: factory)
        uncommittedBatches = CoreMetrics.Gauge(label: "beacontracker_store_uncommitted_batches", factory: factory)
        deliveryLag = CoreMetrics.Gauge(label: "beacontracker_delivery_lag_seconds", factory: factory)
    }

    /// A batch from `gateway` with `count` sightings, applied in `nanoseconds`.
    func received(gateway: GatewayID, sightings count: Int, appliedIn nanoseconds: Int64) {
        let counter = perGateway.withLock { counters in
            if let counter = counters[gateway] { return counter }
            let counter = CoreMetrics.Counter(
                label: "beacontracker_gateway_sightings_total", dimensions: [("gateway", gateway.rawValue)],
                factory: factory)
            counters[gateway] = counter
            return counter
        }
        counter.increment(by: count)
        inference.recordNanoseconds(nanoseconds)
    }

    func committed(inNanoseconds nanoseconds: Int64) {
        commitLatency.recordNanoseconds(nanoseconds)
    }

    /// Carries the core's counters over (by their increase since the last call) and sets the gauges.
    func sync(_ ingest: HubStatus.Ingest, trackedTags tags: Int, connected: Bool, droppedMessages dropped: Int) {
        trackedTags.record(tags)
        mqttConnected.record(connected ? 1 : 0)
        uncommittedBatches.record(ingest.store?.backlogBatches ?? 0)
        deliveryLag.record(ingest.lagSeconds ?? 0)
        synced.withLock { synced in
            func add(_ name: String, _ labels: [(String, String)] = [], _ now: Int, _ before: Int) {
                // A new active period starts its counters from zero.
                let increase = now >= before ? now - before : now
                guard increase > 0 else { return }
                synced.counter(name, labels, factory).increment(by: increase)
            }
            let before = synced.ingest
            add("beacontracker_batches_total", [], ingest.batches, before.batches)
            add("beacontracker_sightings_total", [], ingest.sightings, before.sightings)
            add("beacontracker_dropped_total", [("reason", "duplicate-batch")], ingest.duplicates, before.duplicates)
            add(
                "beacontracker_dropped_total", [("reason", "sequence-skipped")], ingest.skippedSequences,
                before.skippedSequences)
            for (code, count) in ingest.rejected {
                add("beacontracker_dropped_total", [("reason", code)], count, before.rejected[code] ?? 0)
            }
            add("beacontracker_dropped_total", [("reason", "mqtt-queue-full")], dropped, synced.dropped)
            add("beacontracker_rebased_sightings_total", [], ingest.rebased, before.rebased)
            add("beacontracker_foreign_sightings_total", [], ingest.foreign, before.foreign)
            for (type, count) in ingest.events {
                add("beacontracker_events_total", [("type", type)], count, before.events[type] ?? 0)
            }
            add("beacontracker_store_commits_total", [], ingest.store?.commits ?? 0, before.store?.commits ?? 0)
            add(
                "beacontracker_store_commit_failures_total", [], ingest.store?.failures ?? 0,
                before.store?.failures ?? 0)
            synced.ingest = ingest
            synced.dropped = dropped
        }
    }

    /// Carries the webhooks' counts over (they count for the process's life). A webhook is labelled by its place in
    /// hub.yaml's `webhooks:` list, from 0: its URL may hold a secret.
    func sync(webhooks counts: [WebhookDispatcher.Counts]) {
        synced.withLock { synced in
            for (index, now) in counts.enumerated() {
                let before = index < synced.webhooks.count ? synced.webhooks[index] : WebhookDispatcher.Counts()
                let webhook = ("webhook", "\(index)")
                for (outcome, count, earlier) in [
                    ("delivered", now.delivered, before.delivered), ("failed", now.failed, before.failed),
                    ("dropped", now.dropped, before.dropped),
                ] where count > earlier {
                    synced.counter("beacontracker_webhook_events_total", [webhook, ("outcome", outcome)], factory)
                        .increment(by: count - earlier)
                }
                if now.attempts > before.attempts {
                    synced.counter("beacontracker_webhook_attempts_total", [webhook], factory)
                        .increment(by: now.attempts - before.attempts)
                }
                let key = "beacontracker_webhook_queued|\(index)"
                let gauge =
                    synced.gauges[key]
                    ?? CoreMetrics.Gauge(label: "beacontracker_webhook_queued", dimensions: [webhook], factory: factory)
                synced.gauges[key] = gauge
                gauge.record(now.queued)
            }
            synced.webhooks = counts
        }
    }
}

extension HubMetrics.Synced {
    /// The counter `name` with `labels`, made on first use.
    mutating func counter(
        _ name: String, _ labels: [(String, String)], _ factory: PrometheusMetricsFactory
    ) -> CoreMetrics.Counter {
        let key = name + labels.map { "|\($0.0)=\($0.1)" }.joined()
        if let counter = counters[key] { return counter }
        let counter = CoreMetrics.Counter(label: name, dimensions: labels, factory: factory)
        counters[key] = counter
        return counter
    }
}
