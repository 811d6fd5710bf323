/// What webhook delivery makes of an answer, and how long it waits before trying again (docs/integrations.md).
public enum WebhookPolicy {
    /// The fate of one attempt.
    public enum Verdict: Sendable, Hashable {
        /// 2xx: the receiver has the event.
        case delivered
        /// 4xx other than 408 and 429: the receiver refuses this request, and would refuse it again.
        case refused
        /// Anything else (5xx, 408, 429, 1xx, 3xx left after redirects, no answer): worth another attempt.
        case retry
    }

    /// The verdict on an HTTP status.
    public static func verdict(status: Int) -> Verdict {
        switch status {
        case 200..<300: .delivered
        case 408, 429: .retry
        case 400..<500: .refused
        default: .retry
        }
    }

    /// The wait after failed attempt number `attempt` (1 for the first): `initial` doubled per earlier retry, at most
    /// `maximum`, scaled by a factor between 0.5 and 1 that `jitter` (0...1) picks.
    public static func delay(after attempt: Int, initial: Double, maximum: Double, jitter: Double) -> Double {
        let doublings = min(max(attempt - 1, 0), 62)
        let base = min(initial * Double(1 << doublings), maximum)
        return base * (0.5 + 0.5 * min(max(jitter, 0), 1))
    }
}
