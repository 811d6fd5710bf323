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
        /// After taking what the socket holds, the reader waits this long before it reads again, so that the events
        /// of a busy place arrive in slices (the kernel queues them) instead of waking the reader and the agent once
        /// per advertisement. Scan times are the kernel's receive times (`HCI_TIME_STAMP`), so the pause costs no
        /// timing accuracy; a packet without one gets the time of its read, within this of the truth.
        public var readPause: Duration = .milliseconds(50)
        /// The gateway's own beacon, advertised while scanning; nil advertises nothing.
        public var advertising: Advertising?

        public init(
            adapter: String = "hci0", active: Bool = false, intervalMilliseconds: Double = 100,
            windowMilliseconds: Double = 100, retryMinimum: Duration = .seconds(1),
            retryMaximum: Duration = .seconds(30),
            restartAfterSilence: Duration = .seconds(60), readPause: Duration = .milliseconds(50),
            advertising: Advertising? = nil
        ) {
            self.adapter = adapter
            self.active = active
            self.intervalMilliseconds = intervalMilliseconds
            self.windowMilliseconds = windowMilliseconds
            self.retryMinimum = retryMinimum
            self.retryMaximum = retryMaximum
            self.restartAfterSilence = restartAfterSilence
            self.readPause = readPause
            self.advertising = advertising
        }
    }

    /// What the scanner tells its consumer.
    public enum Event: Sendable, Hashable {
        /// The LE advertising report events of one read slice, in order, each with the time of its read. Their reports
        /// are walked by the agent's pipeline, which also counts events whose lengths do not add up.
        case events([TimedHCIEvent])
        /// Scanning runs.
        case scanning
        /// The adapter cannot be used now; the scanner retries.
        case unavailable(HCIError)
        /// Scanning was switched on again after silence.
        case restarted
        /// The gateway's own beacon: advertising, or why the controller would not (after each open and restart).
        case advertising(AdvertisingState)
    }

    /// Most packets taken in one slice (a bound on the slice's array; the rest wait for the next slice).
    static let packetsPerSlice = 1_000

    public let settings: Settings
    private let running = Mutex(false)
    private let finished = DispatchSemaphore(value: 0)
    private let wakeUp = DispatchSemaphore(value: 0)
    private let continuation: AsyncStream<Event>.Continuation
    /// The scanner's events, in order; slices beyond the buffer are dropped (their reports counted in
    /// `droppedReports`).
    public let events: AsyncStream<Event>
    private let dropped = Mutex(0)

    /// Takes each slice of events on the reader's thread instead of `events`, when set.
    private let onEvents: (@Sendable ([TimedHCIEvent]) -> Void)?

    /// With `onEvents`, each read slice is handed to it on the reader's own thread (it must not block for long: the
    /// socket fills meanwhile), and `events` carries only the scanner's state changes. A slice then costs the reader's
    /// one wake-up instead of also waking a task to take it from the stream.
    public init(
        settings: Settings, bufferSize: Int = 1_000, onEvents: (@Sendable ([TimedHCIEvent]) -> Void)? = nil
    ) {
        self.settings = settings
        self.onEvents = onEvents
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
        if let onEvents, case .events(let events) = event {
            onEvents(events)
            return
        }
        guard case .dropped = continuation.yield(event) else { return }
        let lost = if case .events(let events) = event { events.reduce(0) { $0 + $1.declaredReports } } else { 0 }
        dropped.withLock { $0 += lost }
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
                var advertisingMode = try advertise(on: adapter)
                delay = settings.retryMinimum
                try readLoop(adapter, buffer: &buffer, advertisingMode: &advertisingMode)
                if let advertisingMode { Self.stopAdvertising(advertisingMode, on: adapter) }
                adapter.stopScanning()
            } catch {
                emit(.unavailable(error))
                _ = wakeUp.wait(timeout: .now() + .milliseconds(Int(delay.milliseconds)))
                delay = min(delay * 2, settings.retryMaximum)
            }
        }
    }

    /// Reads until stopped (returns) or the adapter fails (throws, so the caller reopens it): waits for a packet, takes
    /// every packet the socket holds with it, hands their reports on as one slice, pauses.
    private func readLoop(
        _ adapter: HCIAdapter, buffer: inout [UInt8], advertisingMode: inout AdvertisingMode?
    ) throws(HCIError) {
        var lastReport = ContinuousClock.now
        let pauseMicroseconds = UInt32(max(0, settings.readPause.milliseconds * 1000))
        var slice: [TimedHCIEvent] = []
        while isRunning {
            var (count, received) = try adapter.readPacket(into: &buffer, timeoutMilliseconds: 250)
            if count == 0 {
                if ContinuousClock.now - lastReport > settings.restartAfterSilence {
                    try adapter.startScanning(
                        active: settings.active, intervalMilliseconds: settings.intervalMilliseconds,
                        windowMilliseconds: settings.windowMilliseconds)
                    emit(.restarted)
                    // Whatever switched scanning off (a reset) switched advertising off too.
                    advertisingMode = try advertise(on: adapter)
                    lastReport = ContinuousClock.now
                }
                continue
            }
            var packets = 0
            // Packets the kernel did not stamp get the time of this read: within a slice of the truth.
            let readTime = Date().timeIntervalSince1970
            while count > 0 {
                try take(buffer, count: count, time: received ?? readTime, adapter: adapter, into: &slice)
                packets += 1
                guard packets < Self.packetsPerSlice else { break }
                (count, received) = try adapter.readPacket(into: &buffer, timeoutMilliseconds: 0)
            }
            if !slice.isEmpty {
                emit(.events(slice))
                slice.removeAll(keepingCapacity: true)
                lastReport = ContinuousClock.now
            }
            if pauseMicroseconds > 0 && isRunning { usleep(pauseMicroseconds) }
        }
    }

    /// Starts the configured advertising, tells the consumer how it went, and returns how it runs (nil: not at all).
    private func advertise(on adapter: HCIAdapter) throws(HCIError) -> AdvertisingMode? {
        guard let advertising = settings.advertising else { return nil }
        let state = try Self.startAdvertising(advertising, on: adapter)
        emit(.advertising(state))
        if case .on(let mode, _) = state { return mode }
        return nil
    }

    /// One packet's LE meta event with its receive time; other events are not for the agent.
    private func take(
        _ buffer: [UInt8], count: Int, time: Double, adapter: HCIAdapter, into slice: inout [TimedHCIEvent]
    ) throws(HCIError) {
        // H4 type 0x04 = event; the socket filter lets nothing else through, the check keeps bad input out.
        guard buffer[0] == 0x04, count >= 3 else { return }
        if buffer[1] == 0x10 {  // Hardware Error: the controller resets; reopen and restore scanning.
            throw HCIError(.other, "adapter \(adapter.name) reported a hardware error; reopening it")
        }
        guard buffer[1] == 0x3E else { return }
        slice.append(TimedHCIEvent(event: Array(buffer[1..<count]), time: time))
    }
}

extension Duration {
    var milliseconds: Double {
        let (seconds, attoseconds) = components
        return Double(seconds) * 1000 + Double(attoseconds) / 1e15
    }
}
