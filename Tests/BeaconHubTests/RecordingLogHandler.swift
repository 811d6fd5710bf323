import Logging
import Synchronization

/// Keeps every log record as text (message and metadata), for checks on what a component logs.
struct RecordingLogHandler: LogHandler {
    /// The records of every logger made with this handler.
    final class Records: Sendable {
        let lines = Mutex<[String]>([])
    }

    let records: Records
    var metadata: Logger.Metadata = [:]
    var logLevel: Logger.Level = .trace

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        let merged = metadata.merging(event.metadata ?? [:]) { $1 }
        let fields = merged.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: " ")
        records.lines.withLock { $0.append("\(event.level) \(event.message) \(fields)") }
    }
}
