import Foundation
import Hummingbird
import NIOCore

extension Dashboard {
    /// The calibration page's API (docs/dashboard.md, "The calibration page"): the walk's session, the versions and
    /// rollback; and a gateway's links started afresh (its link alert accepted). With a token configured every call
    /// needs it, as the rest of `/api/`.
    func addCalibrationRoutes(to router: Router<BasicRequestContext>) {
        router.get("/api/calibration") { [self] _, _ in try json(await desk().overview()) }
        router.post("/api/calibration/session") { [self] request, _ in
            let start = try await body(CalibrationStart.self, of: request)
            return try json(await desk().start(start), status: .created)
        }
        router.get("/api/calibration/session") { [self] _, _ in try json(await desk().session()) }
        router.delete("/api/calibration/session") { [self] _, _ in
            try await desk().cancel()
            return Response(status: .noContent)
        }
        router.post("/api/calibration/session/marks") { [self] request, _ in
            let mark = try await body(CalibrationMark.self, of: request)
            return try json(await desk().mark(mark))
        }
        router.put("/api/calibration/session/plan") { [self] request, _ in
            let plan = try await body(CalibrationPlan.self, of: request)
            return try json(await desk().plan(plan))
        }
        router.post("/api/calibration/session/finish") { [self] request, _ in
            let finish = try await body(CalibrationFinish.self, of: request, emptyAllowed: true) ?? CalibrationFinish()
            return try json(await desk().finish(finish))
        }
        router.post("/api/calibration/rollback") { [self] request, _ in
            let rollback = try await body(CalibrationRollback.self, of: request)
            return try json(await desk().rollback(rollback))
        }
        router.post("/api/gateways/:gateway/relearn") { [self] _, context in
            let gateway = try venueGateway(context)
            return try json(await desk().relearnLinks(of: gateway))
        }
        router.post("/api/gateways/:gateway/place") { [self] request, context in
            let gateway = try venueGateway(context)
            let place = try await body(GatewayPlace.self, of: request)
            return try json(await desk().place(gateway, place))
        }
    }

    /// The route's gateway, one of the venue file's.
    func venueGateway(_ context: BasicRequestContext) throws -> String {
        let gateway = try context.parameters.require("gateway")
        guard configuration.venue?.gateways.contains(where: { $0.id.rawValue == gateway }) ?? true else {
            throw APIError(
                .notFound, "unknown-gateway",
                "the venue file has no gateway \"\(gateway)\": give a gateway id as /api/venue lists them")
        }
        return gateway
    }

    func desk() throws -> any CalibrationDesk {
        guard let desk = configuration.calibration else {
            throw APIError(
                .notFound, "no-calibration",
                "this server does not calibrate: the calibration page and the gateways' links are served by "
                    + "beacon-hub run with a venue file, not by beacon-hub serve")
        }
        return desk
    }

    /// A request's JSON body; an error that names the field when it does not decode.
    func body<T: Decodable>(_ type: T.Type, of request: Request) async throws -> T {
        guard let value = try await body(type, of: request, emptyAllowed: false) else {
            throw APIError.badRequest("this request needs a JSON body (docs/openapi.yaml)")
        }
        return value
    }

    func body<T: Decodable>(_ type: T.Type, of request: Request, emptyAllowed: Bool) async throws -> T? {
        let buffer = try await request.body.collect(upTo: 64 * 1024)
        guard buffer.readableBytes > 0 else {
            if emptyAllowed { return nil }
            throw APIError.badRequest("this request needs a JSON body (docs/openapi.yaml)")
        }
        do {
            return try JSONDecoder().decode(type, from: Data(buffer.readableBytesView))
        } catch let DecodingError.keyNotFound(key, _) {
            throw APIError.badRequest("the body lacks \"\(key.stringValue)\" (docs/openapi.yaml)")
        } catch let DecodingError.typeMismatch(_, context) {
            throw APIError.badRequest(
                "\"\(context.codingPath.map(\.stringValue).joined(separator: "."))\" has the wrong type "
                    + "(docs/openapi.yaml)")
        } catch {
            throw APIError.badRequest("the body is not the JSON this endpoint takes (docs/openapi.yaml): \(error)")
        }
    }
}
