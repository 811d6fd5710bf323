import BeaconDecoding
import Dispatch
import Foundation
import Synchronization

/// Live BLE scanning: a thread of its own opens the adapter, scans, and turns HCI events into advertising reports.
///
/// It never gives up: when the adapter is missing, down, blocked or busy it reports why and retries with backoff;
/// when it disappears mid-scan (unplugged, reset) it reopens it and restores the scan state; when a controller goes
/// silent for `restartAfterSilence` (a reset by another program switches scanning off) scanning is switched on again.
public final class HCIScanner: Sendable {
    /// Scan settings (agent.yaml `scanner:`).
    public struct Settings: Sendable, Hashable {
        public var adapter: String
        /// Active scanning asks for scan responses; passive only listens (beacons need no more).
        public var active: Bool
        public var intervalMilliseconds: Double
        public var windowMilliseconds: Double
        public var retryMinimum: Duration
        public var retryMaximum: Duration
        public var restartAfterSilence: Duration

        public init(
            adapter: String = "hci0", active: Bool = false, intervalMilliseconds: Double = 100,
            windowMilliseconds: Double = 100, retryMinimum: Duration = .seconds(1),
            retryMaximum: Duration = .seconds(30),
            restartAfterSilence: Duration = .seconds(60)
        ) {
            self.adapter = adapter
            self.active = active
            self.intervalMilliseconds = intervalMilliseconds
            self.windowMilliseconds = windowMilliseconds
            self.retryMinimum = retryMinimum
            self.retryMaximum = retryMaximum
            self.restartAfterSilence = restartAfterSilence
        }
    }

    /// What the scanner tells its consumer.
    public enum Event: Sendable, Hashable {
        /// One advertising report, received at `time` (unix seconds).
        case report(AdvertisingReport, time: Double)
        /// Scanning runs.
        case scanning
        /// The adapter cannot be used now; the scanner retries.
        case unavailable(HCIError)
        /// Scanning was switched on again after silence.
        case restarted
    }

    public let settings: Settings
    private let running = Mutex(false)
    private let finished = DispatchSemaphore(value: 0)
    private let wakeUp = DispatchSemaphore(value: 0)
    private let continuation: AsyncStream<Event>.Continuation
    /// The scanner's events, in order; reports beyond the buffer are dropped (and counted in `droppedReports`).
    public let events: AsyncStream<Event>
    private let dropped = Mutex(0)
    private let malformed = Mutex(0)

    /// HCI events whose lengths did not add up (skipped).
    public var malformedEvents: Int { malformed.withLock { $0 } }

    public init(settings: Settings, bufferSize: Int = 10_000) {
        self.settings = settings
        (events, continuation) = AsyncStream<Event>.makeStream(bufferingPolicy: .bufferingOldest(bufferSize))
    }

    /// Reports dropped because the consumer fell behind.
    public var droppedReports: Int { dropped.withLock { $0 } }

    /// Starts the scanning thread.
    public func start() {
        let alreadyRunning = running.withLock { running in
            defer { running = true }
            return running
        }
        guard !alreadyRunning else { return }
        let thread = Thread { [self] in
            run()
            continuation.finish()
            finished.signal()
        }
        thread.name = "hci-\(settings.adapter)"
        thread.start()
    }

    /// Switches scanning off, closes the adapter and ends `events`.
    public func stop() async {
        let wasRunning = running.withLock { running in
            defer { running = false }
            return running
        }
        guard wasRunning else { return }
        wakeUp.signal()
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
            DispatchQueue.global().async {
                self.finished.wait()
                done.resume()
            }
        }
    }

    private var isRunning: Bool { running.withLock { $0 } }

    private func emit(_ event: Event) {
        if case .dropped = continuation.yield(event) { dropped.withLock { $0 += 1 } }
    }

    private func run() {
        var delay = settings.retryMinimum
        var buffer = [UInt8](repeating: 0, count: 1024)
        while isRunning {
            do throws(HCIError) {
                let adapter = try HCIAdapter.open(settings.adapter)
                try adapter.startScanning(
                    active: settings.active, intervalMilliseconds: settings.intervalMilliseconds,
                    windowMilliseconds: settings.windowMilliseconds)
                emit(.scanning)
                delay = settings.retryMinimum
                try readLoop(adapter, buffer: &buffer)
                adapter.stopScanning()
            } catch {
                emit(.unavailable(error))
                _ = wakeUp.wait(timeout: .now() + .milliseconds(Int(delay.milliseconds)))
                delay = min(delay * 2, settings.retryMaximum)
            }
        }
    }

    /// Reads until stopped (returns) or the adapter fails (throws, so the caller reopens it).
    private func readLoop(_ adapter: HCIAdapter, buffer: inout [UInt8]) throws(HCIError) {
        var lastReport = ContinuousClock.now
        while isRunning {
            let count = try adapter.readPacket(into: &buffer, timeoutMilliseconds: 250)
            if count == 0 {
                if ContinuousClock.now - lastReport > settings.restartAfterSilence {
                    try adapter.startScanning(
                        active: settings.active, intervalMilliseconds: settings.intervalMilliseconds,
                        windowMilliseconds: settings.windowMilliseconds)
                    emit(.restarted)
                    lastReport = ContinuousClock.now
                }
                continue
            }
            // H4 type 0x04 = event; the socket filter lets nothing else through, the check keeps bad input out.
            guard buffer[0] == 0x04, count >= 3 else { continue }
            let event = Array(buffer[1..<count])
            if event[0] == 0x10 {  // Hardware Error: the controller resets; reopen and restore scanning.
                throw HCIError(.other, "adapter \(adapter.name) reported a hardware error; reopening it")
            }
            let reports: [AdvertisingReport]
            do {
                guard let found = try HCIEventParser.advertisingReports(inEvent: event) else { continue }
                reports = found
            } catch {
                malformed.withLock { $0 += 1 }
                continue
            }
            let now = Date().timeIntervalSince1970
            for report in reports { emit(.report(report, time: now)) }
            if !reports.isEmpty { lastReport = ContinuousClock.now }
        }
    }
}

extension Duration {
    var milliseconds: Double {
        let (seconds, attoseconds) = components
        return Double(seconds) * 1000 + Double(attoseconds) / 1e15
    }
}
