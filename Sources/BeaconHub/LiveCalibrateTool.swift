import BeaconConfig
import BeaconStore
import Dashboard
import Foundation
import ZoneInference

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// `beacon-hub calibrate --live URL ACTION`: the calibration page's session, driven from a script through the hub's API
/// (docs/hub.md, "beacon-hub calibrate"). Each action is one request; the answer is printed as lines a person reads.
public enum LiveCalibrateTool {
    public enum Action: String, CaseIterable, Sendable {
        case start, mark, plan, status, finish, cancel, rollback, versions, place
    }

    /// What the action needs besides the hub's address.
    public struct Options: Sendable {
        public var beacon: String?
        public var who: String?
        public var seconds: Double?
        public var zone: String?
        /// "x,y" in venue metres.
        public var at: String?
        public var t: Double?
        public var until: Double?
        public var planPath: String?
        public var note: String?
        public var version: Int?
        /// `place`: the gateway placed.
        public var gateway: String?

        public init() {}
    }

    /// What went wrong, and what to do: a refused request carries the hub's code and message.
    public struct Failure: Error, CustomStringConvertible, Sendable {
        public var message: String
        /// The hub's error code (`no-session`, `session-open`, …), nil when the hub was not reached.
        public var code: String?
        /// The action lacks an option or was given a malformed one (exit 64): nothing was asked of the hub.
        public var usage = false
        public var description: String { message }
    }

    public static func run(
        url: String, token: String?, action: Action, options: Options
    ) async throws -> String {
        let client = try Client(url: url, token: token)
        switch action {
        case .start:
            guard let beacon = options.beacon, let who = options.who else {
                throw Failure(message: "start needs --beacon (the beacon you carry) and --who (your name)", usage: true)
            }
            let view: CalibrationSessionView = try await client.send(
                "POST", "/api/calibration/session", CalibrationStart(beacon: beacon, who: who, seconds: options.seconds)
            )
            return "walk \(view.id) started for \(view.beacon) by \(view.who): mark each place you stand "
                + "(beacon-hub calibrate --live \(url) mark --zone ZONE), \(Int(view.seconds)) s each"
        case .mark:
            var mark = CalibrationMark(zone: options.zone, t: options.t, until: options.until)
            if let at = options.at {
                (mark.x, mark.y) = try point(at)
            }
            guard (mark.zone == nil) != (mark.x == nil) else {
                throw Failure(message: "mark needs --zone ZONE or --at X,Y (one of them)", usage: true)
            }
            let view: CalibrationSessionView = try await client.send("POST", "/api/calibration/session/marks", mark)
            return status(view)
        case .plan:
            guard let planPath = options.planPath else { throw Failure(message: "plan needs --plan FILE", usage: true) }
            let plan = try ConfigLoader.load(CalibrateTool.Plan.self, from: planPath)
            let view: CalibrationSessionView = try await client.send(
                "PUT", "/api/calibration/session/plan", CalibrationPlan(stops: plan.stops, route: plan.route))
            guard view.beacon == plan.beacon.lowercased() else {
                throw Failure(
                    message: "the plan is for \(plan.beacon) but the open walk records \(view.beacon): cancel it and "
                        + "start one for the plan's beacon")
            }
            return status(view)
        case .status:
            let view: CalibrationSessionView = try await client.send("GET", "/api/calibration/session", nil as String?)
            return status(view)
        case .finish:
            let finished: CalibrationFinished = try await client.send(
                "POST", "/api/calibration/session/finish", CalibrationFinish(note: options.note))
            return
                (["applied: " + line(finished.version)]
                + status(finished.session).split(separator: "\n").map(
                    String.init)).joined(separator: "\n")
        case .cancel:
            let _: Empty? = try await client.send("DELETE", "/api/calibration/session", nil as String?)
            return "walk cancelled: nothing applied"
        case .rollback:
            guard let who = options.who else { throw Failure(message: "rollback needs --who (your name)", usage: true) }
            let rolled: CalibrationRolledBack = try await client.send(
                "POST", "/api/calibration/rollback", CalibrationRollback(who: who, version: options.version))
            return "rolled back: " + line(rolled.active)
        case .place:
            return try await place(client, options: options)
        case .versions:
            let overview: CalibrationOverview = try await client.send("GET", "/api/calibration", nil as String?)
            var lines = [
                overview.active.map { "in force: version \($0.version)" }
                    ?? "in force: version 0 (\(overview.configured ?? "no calibration file"))"
            ]
            lines += overview.versions.map { "  " + line($0) }
            if !overview.stored { lines.append("  (the hub keeps no database: versions go with a restart)") }
            return lines.joined(separator: "\n")
        }
    }

    struct Empty: Decodable {}

    /// `--at x,y` in venue metres.
    static func point(_ at: String) throws -> (Double, Double) {
        let parts = at.split(separator: ",").map { Double($0.trimmingCharacters(in: .whitespaces)) }
        guard parts.count == 2, let x = parts[0], let y = parts[1] else {
            throw Failure(message: "--at takes x,y in venue metres (e.g. --at 3.5,7), not \(at)", usage: true)
        }
        return (x, y)
    }

    /// `place`: one request, one line.
    static func place(_ client: Client, options: Options) async throws -> String {
        guard let gateway = options.gateway, let at = options.at, let who = options.who else {
            throw Failure(
                message: "place needs --gateway GW, --at X,Y (where it stands now) and --who (your name)", usage: true)
        }
        let (x, y) = try point(at)
        let placed: GatewayPlaced = try await client.send(
            "POST", "/api/gateways/\(gateway)/place",
            GatewayPlace(x: x, y: y, zone: options.zone, who: who, note: options.note))
        return String(
            format: "placed %@ at (%.1f, %.1f)%@, %.1f m from where it was: ", placed.gateway, placed.x, placed.y,
            placed.zone.map { " in \($0)" } ?? ", in no zone", placed.movedMetres)
            + line(placed.version)
            + "; \(placed.linksForgotten) links forgotten"
            + (placed.alertCleared.map { ", \($0.code) cleared" } ?? "")
    }

    static func line(_ version: CalibrationVersion) -> String {
        let when = ISO8601DateFormatter().string(from: Date(timeIntervalSince1970: version.created))
        var text = "version \(version.version) by \(version.who) at \(when): "
        switch version.kind {
        case .walk:
            text += "walk, \(version.zones) zones, \(version.gateways) gateway offsets"
            if let before = version.before, let after = version.after {
                text += ", expected accuracy \(percent(before)) → \(percent(after))"
            }
        case .rollback:
            text += "rollback to version \(version.restores ?? 0)"
        case .placement:
            text += "placement"
        }
        if let note = version.note, version.kind != .rollback { text += " (\(note))" }
        return text
    }

    static func percent(_ share: Double) -> String { String(format: "%.0f %%", share * 100) }

    /// The walk as lines: marks, per zone seconds / gateways / quality / before → after, the check, warnings.
    static func status(_ view: CalibrationSessionView) -> String {
        var lines = [
            "walk \(view.id): \(view.beacon) carried by \(view.who), \(Int(view.now - view.started)) s, "
                + "\(view.sightings) sightings, \(view.marks.count) marks"
                + (view.current.map { ", stay \($0.n) has \(Int($0.remaining.rounded(.up))) s left" } ?? "")
        ]
        let width = max(view.zones.map(\.zone.count).max() ?? 0, 4)
        for zone in view.zones where zone.seconds > 0 {
            let accuracy =
                zone.before.flatMap { before in zone.after.map { percent(before) + " → " + percent($0) } } ?? "–"
            lines.append(
                "  " + zone.zone.padding(toLength: width, withPad: " ", startingAt: 0)
                    + String(format: " %4d s %2d gateways ", zone.seconds, zone.gateways)
                    + zone.quality.padding(toLength: 5, withPad: " ", startingAt: 0) + " " + accuracy)
        }
        if let check = view.check {
            lines.append(
                "  expected accuracy over the walk: \(percent(check.before)) → \(percent(check.after)) "
                    + "(\(check.seconds) s scored, \(check.folds) folds)")
        }
        lines += view.warnings.map { "  warning: \($0)" }
        return lines.joined(separator: "\n")
    }

    /// An API error's body.
    struct Refusal: Decodable {
        struct Detail: Decodable {
            var code: String
            var message: String
        }
        var error: Detail
    }

    /// One hub's API, with its token.
    struct Client {
        let base: URL
        let token: String?

        init(url: String, token: String?) throws {
            guard let base = URL(string: url), base.scheme == "http" || base.scheme == "https", base.host != nil else {
                throw Failure(
                    message: "--live takes the hub's dashboard address, e.g. http://hub.local:8080, not \(url)")
            }
            self.base = base
            self.token = token
        }

        func send<Body: Encodable, Answer: Decodable>(
            _ method: String, _ path: String, _ body: Body?
        ) async throws -> Answer {
            var request = URLRequest(url: base.appendingPathComponent(path))
            request.httpMethod = method
            request.timeoutInterval = 60
            if let token { request.setValue("Bearer \(token)", forHTTPHeaderField: "Authorization") }
            if let body {
                request.httpBody = try JSONEncoder().encode(body)
                request.setValue("application/json", forHTTPHeaderField: "Content-Type")
            }
            let data: Data
            let response: URLResponse
            do {
                (data, response) = try await URLSession.shared.data(for: request)
            } catch {
                throw Failure(
                    message: "cannot reach the hub at \(base): \(error.localizedDescription) — is it running, with "
                        + "http: in hub.yaml?")
            }
            let status = (response as? HTTPURLResponse)?.statusCode ?? 0
            guard (200..<300).contains(status) else {
                if let refusal = try? JSONDecoder().decode(Refusal.self, from: data) {
                    throw Failure(
                        message: "the hub refused (\(refusal.error.code)): \(refusal.error.message)",
                        code: refusal.error.code)
                }
                throw Failure(message: "the hub answered HTTP \(status) to \(method) \(path)")
            }
            if status == 204, let empty = Optional<Empty>.none as? Answer { return empty }
            do {
                return try JSONDecoder().decode(Answer.self, from: data)
            } catch {
                throw Failure(
                    message: "the hub's answer to \(method) \(path) is not what this version expects: \(error)")
            }
        }
    }
}
