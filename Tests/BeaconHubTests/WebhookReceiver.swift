import Foundation
import Hummingbird
import Logging
import NIOCore
import Synchronization

/// A live HTTP server on 127.0.0.1 and a free port that records every POST and answers with scripted statuses, for
/// webhook tests.
final class WebhookReceiver: Sendable {
    /// One request as received.
    struct Request: Sendable {
        var path: String
        /// Header names lowercased.
        var headers: [String: String]
        var body: [UInt8]
        var at: ContinuousClock.Instant
    }

    struct State {
        var requests: [Request] = []
        /// Statuses for the next requests, in order; 200 once used up.
        var answers: [Int] = []
        /// Requests to this many first ones are held until `release()` (or for at most `holdLimit`).
        var holdFirst = 0
        var holdLimit = Duration.seconds(30)
        var released = false
        var port: Int?
        /// Why the server stopped before it listened, if it did.
        var failure: String?
    }

    let state: Mutex<State>
    let task = Mutex<Task<Void, Never>?>(nil)

    init(answers: [Int] = [], holdFirst: Int = 0, holdLimit: Duration = .seconds(30)) {
        state = Mutex(State(answers: answers, holdFirst: holdFirst, holdLimit: holdLimit))
    }

    deinit { task.withLock { $0?.cancel() } }

    /// Starts serving; returns the base URL (`http://127.0.0.1:<port>`).
    func start() async throws -> URL {
        let router = Router()
        router.post(":name") { [self] request, _ -> Response in
            let body = try await request.body.collect(upTo: 1 << 20)
            var headers: [String: String] = [:]
            for field in request.headers { headers[field.name.canonicalName] = field.value }
            let (status, hold, limit) = state.withLock { state -> (Int, Bool, Duration) in
                state.requests.append(
                    Request(
                        path: request.uri.path, headers: headers, body: Array(body.readableBytesView),
                        at: .now))
                let status = state.answers.isEmpty ? 200 : state.answers.removeFirst()
                return (status, state.requests.count <= state.holdFirst, state.holdLimit)
            }
            if hold {
                let deadline = ContinuousClock.now.advanced(by: limit)
                while !state.withLock({ $0.released }), ContinuousClock.now < deadline {
                    try await Task.sleep(for: .milliseconds(10))
                }
            }
            return Response(status: HTTPResponse.Status(code: status))
        }
        let app = Application(
            router: router,
            configuration: ApplicationConfiguration(address: .hostname("127.0.0.1", port: 0)),
            onServerRunning: { [self] channel in
                let port = channel.localAddress?.port
                state.withLock { $0.port = port }
            },
            logger: Logger(label: "test.webhook-receiver"))
        task.withLock {
            $0 = Task { [self] in
                do { try await app.run() } catch { state.withLock { $0.failure = "\(error)" } }
            }
        }
        // The server starts on the cooperative pool, which the tests beside it can hold for tens of seconds when both
        // cores are busy (CI ran 41 s without it being scheduled): a generous deadline, and a failure said at once.
        // Looked at once more after the deadline: a starved pool may wake this loop only after the server started.
        let deadline = ContinuousClock.now.advanced(by: Self.startSeconds)
        while true {
            let (port, failure) = state.withLock { ($0.port, $0.failure) }
            if let port { return URL(string: "http://127.0.0.1:\(port)")! }
            if let failure { throw ReceiverError(message: "the test receiver could not listen: \(failure)") }
            if ContinuousClock.now >= deadline { break }
            try await Task.sleep(for: .milliseconds(10))
        }
        throw ReceiverError(message: "the test receiver did not start listening within \(Self.startSeconds)")
    }

    static let startSeconds = Duration.seconds(180)

    struct ReceiverError: Error {
        var message: String
    }

    func stop() { task.withLock { $0?.cancel() } }

    /// Lets held requests be answered.
    func release() { state.withLock { $0.released = true } }

    var requests: [Request] { state.withLock { $0.requests } }

    /// Waits until at least `count` requests came (or `timeout` passed); returns them.
    @discardableResult
    func wait(for count: Int, within timeout: Duration = .seconds(20)) async -> [Request] {
        let deadline = ContinuousClock.now.advanced(by: timeout)
        while ContinuousClock.now < deadline, requests.count < count {
            try? await Task.sleep(for: .milliseconds(10))
        }
        return requests
    }
}
