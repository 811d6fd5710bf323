/// An advertising report with the time it was scanned (unix seconds).
public struct TimedReport: Sendable, Hashable {
    public var report: AdvertisingReport
    public var time: Double

    public init(report: AdvertisingReport, time: Double) {
        self.report = report
        self.time = time
    }
}
