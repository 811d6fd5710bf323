/// An advertising report with the time it was scanned (unix seconds).
public struct TimedReport: Sendable, Hashable {
    public var report: AdvertisingReport
    public var time: Double

    public init(report: AdvertisingReport, time: Double) {
        self.report = report
        self.time = time
    }
}

/// An HCI event (without the H4 type byte) with the time it was read (unix seconds): what the scanner and replay hand
/// the agent's pipeline, which walks its reports in place (`SightingPipeline.process(event:at:into:)`).
public struct TimedHCIEvent: Sendable, Hashable {
    public var event: [UInt8]
    public var time: Double

    public init(event: [UInt8], time: Double) {
        self.event = event
        self.time = time
    }

    /// The advertising reports it declares (LE advertising report events; 0 for any other), for counting what a
    /// dropped slice held.
    public var declaredReports: Int {
        event.count >= 4 && event[0] == HCIEventParser.leMetaEvent
            && (event[2] == HCIEventParser.advertisingReport || event[2] == HCIEventParser.extendedAdvertisingReport)
            ? Int(event[3]) : 0
    }
}
