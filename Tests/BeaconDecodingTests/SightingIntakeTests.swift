import BeaconDecoding
import BeaconModel
import Foundation
import Synchronization
import Testing

@testable import BeaconAgent

/// The agent's intake runs on the reading thread and hands closed batches to the storing task: batches close when full
/// and when due, in order; a backlog the disk cannot take is bounded and counted; `finish` closes what is open.
@Suite(.timeLimit(.minutes(1))) struct SightingIntakeTests {
    static let ibeacon = bytes(fromHex: "0201061aff4c000215e2c56db5dffb48d2b060d0f5a71096e000010002c5")!

    /// `count` advertising events of one iBeacon from distinct addresses, read at `time`.
    static func events(_ count: Int, at time: Double) -> [TimedHCIEvent] {
        (0..<count).map { index in
            TimedHCIEvent(
                event: BTSnoopWriter.advertisingReportEvent(
                    address: [1, 2, 3, 4, UInt8(index / 256), UInt8(index % 256)], rssi: -60, data: ibeacon),
                time: time)
        }
    }

    static func settings(maxSightings: Int, maxDelay: Double) -> AgentConfiguration.BatchSettings {
        var settings = AgentConfiguration.BatchSettings()
        settings.maxSightings = maxSightings
        settings.maxDelaySeconds = maxDelay
        return settings
    }

    @Test func batchesCloseWhenFullAndWhenDueInOrder() {
        let intake = SightingIntake(regions: [], batch: Self.settings(maxSightings: 10, maxDelay: 1))
        intake.ingest(Self.events(25, at: 100), now: 100)
        var (batches, finished) = intake.takeWaiting()
        #expect(batches.map(\.count) == [10, 10] && !finished)
        #expect(intake.deadline == 101)
        intake.tick(now: 100.5)
        #expect(intake.takeWaiting().batches.isEmpty)
        // A slice that arrives after the deadline joins the open batch, which then closes.
        intake.ingest(Self.events(1, at: 101.2), now: 101.2)
        (batches, finished) = intake.takeWaiting()
        #expect(batches.map(\.count) == [6])
        #expect(intake.unstoredBatches == 3)
        intake.stored(3)
        #expect(intake.unstoredBatches == 0)
        intake.finish()
        (batches, finished) = intake.takeWaiting()
        #expect(batches.isEmpty && finished)
        let statistics = intake.takeStatistics(now: 102)
        #expect(statistics.reports == 26 && statistics.counters.sightings == 26 && statistics.droppedBacklog == 0)
    }

    @Test func aBacklogIsBoundedAndCounted() {
        let intake = SightingIntake(
            regions: [], batch: Self.settings(maxSightings: 5, maxDelay: 1), maxWaitingBatches: 3)
        intake.ingest(Self.events(27, at: 100), now: 100)
        let (batches, _) = intake.takeWaiting()
        // Five batches closed; the two oldest made way for the newest, and their sightings are counted.
        #expect(batches.count == 3)
        #expect(intake.takeStatistics(now: 101).droppedBacklog == 10)
        #expect(intake.unstoredBatches == 3)
    }

    @Test func theStoringTaskIsWokenOncePerClose() async {
        let intake = SightingIntake(regions: [], batch: Self.settings(maxSightings: 4, maxDelay: 1))
        let stored = Task {
            var sightings = 0
            while true {
                let (batches, finished) = intake.takeWaiting()
                sightings += batches.reduce(0) { $0 + $1.count }
                intake.stored(batches.count)
                if batches.isEmpty {
                    if finished { return sightings }
                    await intake.batchReady.wait()
                }
            }
        }
        // Slices from another thread, as the scanner's reader delivers them.
        let reader = Thread {
            for slice in 0..<50 { intake.ingest(Self.events(3, at: Double(slice)), now: Double(slice)) }
        }
        reader.start()
        while reader.isExecuting || !reader.isFinished { try? await Task.sleep(for: .milliseconds(5)) }
        intake.finish()
        #expect(await stored.value == 150)
        #expect(intake.unstoredBatches == 0)
    }

    /// The replay's pacing thread delivers every event, in order, in slices; cancelling the caller stops it.
    @Test func replayPacesOnItsOwnThreadAndStopsWhenCancelled() async throws {
        var writer = BTSnoopWriter()
        for (index, event) in Self.events(40, at: 0).enumerated() {
            writer.appendEvent(event.event, at: 1_700_000_000 + Double(index) * 0.005)
        }
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("pace-\(UUID()).btsnoop").path
        try Data(writer.bytes).write(to: URL(fileURLWithPath: path))
        defer { try? FileManager.default.removeItem(atPath: path) }

        let delivered = Mutex<[[TimedHCIEvent]]>([])
        try await AdvertisementSource.replay(
            try AdvertisementSource.openCapture(path), speed: 1, keepTimes: true, slice: .milliseconds(50)
        ) { slice in delivered.withLock { $0.append(slice) } }
        let slices = delivered.withLock { $0 }
        let times: [Double] = slices.flatMap { $0 }.map(\.time)
        let expected: [Double] = (0..<40).map { 1_700_000_000 + Double($0) * 0.005 }
        #expect(times.count == 40)
        #expect(zip(times, expected).allSatisfy { abs($0 - $1) < 0.000_01 })
        // 0.2 s of capture in slices of 50 ms: a handful of deliveries, not one per event.
        #expect(slices.count >= 2 && slices.count <= 8)

        // A capture of an hour, cancelled: the replay ends promptly.
        var long = BTSnoopWriter()
        long.appendEvent(Self.events(1, at: 0)[0].event, at: 1_700_000_000)
        long.appendEvent(Self.events(1, at: 0)[0].event, at: 1_700_003_600)
        try Data(long.bytes).write(to: URL(fileURLWithPath: path))
        let started = ContinuousClock.now
        let replay = Task {
            try await AdvertisementSource.replay(
                try AdvertisementSource.openCapture(path), speed: 1, keepTimes: true
            ) { _ in }
        }
        try await Task.sleep(for: .milliseconds(100))
        replay.cancel()
        try await replay.value
        #expect(ContinuousClock.now - started < .seconds(20))
    }
}
