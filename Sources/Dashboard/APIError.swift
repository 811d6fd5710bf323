import Foundation
import Hummingbird

/// An API error as the client sees it: `{"error": {"code": "...", "message": "..."}}` with an HTTP status. The message
/// says what was wrong and what to send instead.
public struct APIError: Error, HTTPResponseError, Sendable {
    public var status: HTTPResponse.Status
    /// Stable, for scripts: `bad-request`, `not-found`, `unauthorized`, `no-history`, `store-error`, `no-web-page`,
    /// `no-chart-js`, `internal`, `http`; the calibration's `no-calibration`, `not-active`, `bad-mark`, `no-session`,
    /// `session-open`, `nothing-recorded`, `no-version`, `busy`, `bad-version`; `unknown-gateway` (docs/openapi.yaml).
    public var code: String
    public var message: String

    public init(_ status: HTTPResponse.Status, _ code: String, _ message: String) {
        self.status = status
        self.code = code
        self.message = message
    }

    /// For code outside the HTTP layer (the hub's calibration desk), by status number.
    public init(status: Int, _ code: String, _ message: String) {
        self.init(HTTPResponse.Status(code: status), code, message)
    }

    static func badRequest(_ message: String) -> APIError { APIError(.badRequest, "bad-request", message) }
    static func notFound(_ message: String) -> APIError { APIError(.notFound, "not-found", message) }

    struct Body: Encodable {
        struct Detail: Encodable {
            var code: String
            var message: String
        }
        var error: Detail
    }

    public func response(from request: Request, context: some RequestContext) throws -> Response {
        var headers: HTTPFields = [.contentType: "application/json; charset=utf-8"]
        if status == .unauthorized { headers[.wwwAuthenticate] = "Bearer realm=\"beacontracker\"" }
        let data = try JSONEncoder().encode(Body(error: .init(code: code, message: message)))
        return Response(status: status, headers: headers, body: .init(byteBuffer: ByteBuffer(bytes: data)))
    }
}
