import BeaconDecoding
import BeaconModel
import Foundation

/// The one owner of the agent's per-report state: the decode/filter pipeline and the open batch.
actor SightingIntake {
    private var pipeline: SightingPipeline
    private var batcher: SightingBatcher
    private let publisher: OutboxPublisher
    private let clockSynced: @Sendable () -> Bool
    private var reportsSinceStatus = 0
    private var statisticsTaken = Date().timeIntervalSince1970

    init(
        regions: [BeaconRegion], batch: AgentConfiguration.BatchSettings, publisher: OutboxPublisher,
        clockSynced: @escaping @Sendable () -> Bool
    ) {
        pipeline = SightingPipeline(regions: regions)
        batcher = SightingBatcher(maxSightings: batch.maxSightings, maxDelay: batch.maxDelaySeconds)
        self.publisher = publisher
        self.clockSynced = clockSynced
    }

    /// A slice of reports with their scan times, in one hop onto this actor (not one per advertisement).
    func ingest(_ reports: [TimedReport], now: Double) async {
        reportsSinceStatus += reports.count
        for timed in reports {
            for sighting in pipeline.process(timed.report, at: timed.time) {
                if let batch = batcher.add(sighting, now: now) {
                    await publisher.store(batch, clockSynced: clockSynced())
                }
            }
        }
    }

    /// Closes the open batch when it is due.
    func tick(now: Double) async {
        if let batch = batcher.due(now: now) { await publisher.store(batch, clockSynced: clockSynced()) }
    }

    /// Stores whatever is open (shutdown, end of a replay).
    func flush() async {
        if let batch = batcher.flush() { await publisher.store(batch, clockSynced: clockSynced()) }
    }

    /// Reports since the previous call, the seconds since then, and the pipeline's counters.
    func takeStatistics(now: Double) -> (reports: Int, seconds: Double, counters: SightingPipeline.Counters) {
        defer {
            reportsSinceStatus = 0
            statisticsTaken = now
        }
        return (reportsSinceStatus, now - statisticsTaken, pipeline.counters)
    }
}
