import BeaconModel
import BrokerTestSupport
import Foundation
import Synchronization
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The calibration walk on a running hub (docs/dashboard.md, "The calibration page"): driven by
/// `beacon-hub calibrate --live` and by the page in headless Chromium, recorded from the carried beacon's sightings as
/// the gateways publish them through the broker, applied live, stored as versions, rolled back, and in force again
/// after a restart.
extension HubServiceTests {
    /// The beacon the walker carries.
    static let carried = "ibeacon:c0ffee00-ca11-4b1e-9a7e-5e7c0ffee000:65535:65535"
    static let token = "calibration-test-token-0123456789"

    /// Plays the row venue's three gateways hearing the walker wherever `spot` says they stand: two readings a second
    /// each, at a level that falls with distance (log-distance, exponent 2.2, −59 dBm at 1 m).
    final class Walker: Sendable {
        let agents: [FakeAgent]
        let spot = Mutex<(x: Double, y: Double)?>(nil)
        static let gateways = [("gw-a", 10.0, 4.0), ("gw-b", 30.0, 4.0), ("gw-c", 50.0, 4.0)]

        init(_ broker: MosquittoBroker) async throws {
            var agents: [FakeAgent] = []
            for (gateway, _, _) in Self.gateways {
                let agent = try await FakeAgent(broker, gateway: gateway)
                try await agent.status(heartbeat: 5)
                agents.append(agent)
            }
            self.agents = agents
        }

        func stand(at x: Double, _ y: Double) { spot.withLock { $0 = (x, y) } }

        func walk() async {
            var tick = 0
            while !Task.isCancelled {
                tick += 1
                if let spot = spot.withLock({ $0 }) {
                    for (agent, (_, gx, gy)) in zip(agents, Self.gateways) {
                        let distance = max(
                            ((spot.x - gx) * (spot.x - gx) + (spot.y - gy) * (spot.y - gy)).squareRoot(), 1)
                        let level = -59 - 22 * log10(distance) + Double((tick * 7 + Int(gx)) % 5 - 2)
                        guard level > -100 else { continue }
                        try? await agent.sightings([
                            Sighting(
                                t: Date().timeIntervalSince1970 - 0.2, beacon: HubServiceTests.carried,
                                rssi: Int(level.rounded()), txPower: -59)
                        ])
                    }
                }
                try? await Task.sleep(for: .milliseconds(500))
            }
        }

        func stop() async {
            for agent in agents { await agent.client.shutdown() }
        }
    }

    func calibratingHub(_ broker: MosquittoBroker) throws -> (Programs.Running, String) {
        let tokenFile = directory.appendingPathComponent("token.txt").path
        try Self.token.write(toFile: tokenFile, atomically: true, encoding: .utf8)
        chmod(tokenFile, 0o600)
        let config = try hubConfig(
            broker,
            extra:
                "store: { path: hub.db, commitSeconds: 0.2 }\nhttp: { host: 127.0.0.1, port: 0, tokenFile: token.txt }"
        )
        return (try Programs.Running("beacon-hub", ["run", "--config", config]), config)
    }

    func dashboardURL(of hub: Programs.Running) async throws -> String {
        var base: String?
        for _ in 0..<600 where base == nil {
            base = hub.text.firstMatch(of: /url=(http:\/\/127\.0\.0\.1:[0-9]+)\//).map { String($0.1) }
            if base == nil { try await Task.sleep(for: .milliseconds(50)) }
        }
        return try #require(base, "no dashboard URL in the log: \(hub.text)")
    }

    /// `method` (GET) `path` of the hub's API with the token; the status and the JSON.
    func api(
        _ url: String, _ path: String, token: String? = HubServiceTests.token, method: String = "GET",
        body: [String: Any]? = nil
    ) async throws -> (Int, [String: Any]) {
        var request = URLRequest(url: URL(string: url + path)!)
        request.httpMethod = method
        if let token { request.setValue("Bearer \(token)", forHTTPHeaderField: "Authorization") }
        if let body {
            request.httpBody = try JSONSerialization.data(withJSONObject: body)
            request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        }
        let (data, response) = try await URLSession.shared.data(for: request)
        return (
            (response as? HTTPURLResponse)?.statusCode ?? 0,
            (try? JSONSerialization.jsonObject(with: data)) as? [String: Any] ?? [:]
        )
    }

    /// Polls the walk until `zone` has `seconds` standing seconds (the stay has to last that long).
    func waitForStay(_ url: String, zone: String, seconds: Int) async throws -> [String: Any]? {
        let deadline = ContinuousClock.now.advanced(by: .seconds(60))
        while ContinuousClock.now < deadline {
            let (_, status) = try await api(url, "/api/calibration/session")
            let row = (status["zones"] as? [[String: Any]])?.first { $0["zone"] as? String == zone }
            if (row?["seconds"] as? Int ?? 0) >= seconds { return row }
            try await Task.sleep(for: .milliseconds(250))
        }
        return nil
    }

    func calibrate(_ url: String, _ arguments: [String]) async throws -> (status: Int32, output: String) {
        let tokenFile = directory.appendingPathComponent("token.txt").path
        return try await Programs.run(
            "beacon-hub", ["calibrate", "--live", url] + arguments + ["--token-file", tokenFile])
    }

    @Test func aWalkDrivenFromTheCommandLineIsAppliedStoredRolledBackAndOutlivesARestart() async throws {
        let broker = try MosquittoBroker()
        try await broker.start()
        let (_, statuses) = try await watch(broker, "beacontracker/row/hub/status")
        var (hub, config) = try calibratingHub(broker)
        #expect(await statuses.first { $0.text.contains("\"online\"") } != nil, "hub: \(hub.text)")
        let url = try await dashboardURL(of: hub)
        let walker = try await Walker(broker)
        let walking = Task { await walker.walk() }
        defer { walking.cancel() }

        // Without the token, nothing.
        #expect(try await api(url, "/api/calibration", token: nil).0 == 401)
        let start = try await calibrate(
            url, ["start", "--beacon", Self.carried.uppercased(), "--who", "ana", "--seconds", "8"])
        #expect(start.status == 0 && start.output.contains("started"), "\(start.output)")
        let again = try await calibrate(url, ["start", "--beacon", Self.carried, "--who", "ben"])
        #expect(
            again.status == 65 && again.output.contains("session-open") && again.output.contains("ana"),
            "\(again.output)")
        let wrong = try await calibrate(url, ["mark", "--zone", "attic"])
        #expect(
            wrong.status == 65 && wrong.output.contains("bad-mark") && wrong.output.contains("a, b, c"),
            "\(wrong.output)")
        // No gateway is placed while the walk measures the gateways where they stand.
        let (refusedCode, refused) = try await api(
            url, "/api/gateways/gw-c/place", method: "POST", body: ["x": 55, "y": 6, "who": "ben"])
        #expect(
            refusedCode == 409 && (refused["error"] as? [String: Any])?["code"] as? String == "session-open",
            "\(refused)")

        // Three stays: room a (the zone), room b (a point), room c (the zone).
        walker.stand(at: 8, 4)
        #expect(try await calibrate(url, ["mark", "--zone", "a"]).status == 0)
        let a = try await waitForStay(url, zone: "a", seconds: 4)
        #expect(a?["gateways"] as? Int == 3, "\(String(describing: a))")
        walker.stand(at: 30, 4)
        #expect(try await calibrate(url, ["mark", "--at", "30,4"]).status == 0)
        #expect(try await waitForStay(url, zone: "b", seconds: 4) != nil)
        walker.stand(at: 52, 4)
        #expect(try await calibrate(url, ["mark", "--zone", "c"]).status == 0)
        #expect(try await waitForStay(url, zone: "c", seconds: 4) != nil)
        let status = try await calibrate(url, ["status"])
        #expect(status.output.contains("3 marks") && status.output.contains("expected accuracy"), "\(status.output)")

        let finish = try await calibrate(url, ["finish", "--note", "three rooms"])
        #expect(finish.status == 0 && finish.output.contains("applied: version 1 by ana"), "\(finish.output)")
        #expect(finish.output.contains("3 zones, 3 gateway offsets"), "\(finish.output)")
        // In force in the engine, and stored.
        var (code, overview) = try await api(url, "/api/calibration")
        #expect(code == 200 && (overview["active"] as? [String: Any])?["version"] as? Int == 1, "\(overview)")
        #expect((overview["engine"] as? [String: Any])?["zones"] as? Int == 3, "\(overview)")
        #expect(overview["session"] == nil)
        #expect(hub.text.contains("calibration applied"))

        let rollback = try await calibrate(url, ["rollback", "--who", "ben"])
        #expect(
            rollback.output.contains("rolled back: version 2 by ben") && rollback.output.contains("version 0"),
            "\(rollback.output)")
        (_, overview) = try await api(url, "/api/calibration")
        #expect(overview["engine"] == nil, "hub.yaml has no calibration: after the rollback none is in force")

        // Put version 1 back, place gw-c 5 m along its room where it now stands (version 4: version 1 with gw-c
        // there, its levels of gw-c left out, its three zones kept), then restart: the hub starts with both.
        #expect(try await calibrate(url, ["rollback", "--who", "ben", "--version", "1"]).status == 0)
        let place = try await calibrate(
            url, ["place", "--gateway", "gw-c", "--at", "55,6", "--who", "ben", "--note", "moved to the window"])
        #expect(
            place.status == 0
                && place.output.hasPrefix("placed gw-c at (55.0, 6.0) in c, 5.4 m from where it was: version 4 by ben"),
            "\(place.output)")
        #expect(place.output.contains("placement (moved to the window)"), "\(place.output)")
        let (_, placedOverview) = try await api(url, "/api/calibration")
        let active = placedOverview["active"] as? [String: Any]
        #expect(active?["kind"] as? String == "placement" && active?["zones"] as? Int == 3, "\(placedOverview)")
        let noGateway = try await calibrate(url, ["place", "--at", "55,6", "--who", "ben"])
        #expect(noGateway.status == 64 && noGateway.output.contains("--gateway"), "\(noGateway.output)")
        hub.signal(SIGTERM)
        #expect(await hub.waitForExit(timeout: .seconds(15)) == 0, "hub did not stop: \(hub.text)")
        hub = try Programs.Running("beacon-hub", ["run", "--config", config])
        let servedConfig = config
        config = ""
        let restarted = try await dashboardURL(of: hub)
        var engine: [String: Any]?
        let deadline = ContinuousClock.now.advanced(by: .seconds(60))
        while engine == nil && ContinuousClock.now < deadline {
            engine = try? await api(restarted, "/api/calibration").1["engine"] as? [String: Any]
            if engine == nil { try await Task.sleep(for: .milliseconds(200)) }
        }
        #expect(engine?["zones"] as? Int == 3, "after the restart: \(hub.text.suffix(2000))")
        let versions = try await calibrate(restarted, ["versions"])
        #expect(
            versions.output.contains("in force: version 4") && versions.output.contains("rollback to version 1"),
            "\(versions.output)")
        #expect(versions.output.contains("placement (moved to the window)"), "\(versions.output)")
        let (_, venue) = try await api(restarted, "/api/venue")
        let gatewayC = (venue["gateways"] as? [[String: Any]])?.first { $0["id"] as? String == "gw-c" }
        func point(_ value: Any?) -> [Double]? { (value as? [Any])?.compactMap { ($0 as? NSNumber)?.doubleValue } }
        #expect(point(gatewayC?["position"]) == [55, 6], "\(String(describing: gatewayC))")
        #expect(point(gatewayC?["venueFilePosition"]) == [50, 4], "\(String(describing: gatewayC))")

        // The analytics process runs no engine: it draws gw-c where the history's gateways table has it.
        let serve = try Programs.Running("beacon-hub", ["serve", "--config", servedConfig])
        let (_, servedVenue) = try await api(try await dashboardURL(of: serve), "/api/venue")
        let servedC = (servedVenue["gateways"] as? [[String: Any]])?.first { $0["id"] as? String == "gw-c" }
        #expect(point(servedC?["position"]) == [55, 6], "serve: \(String(describing: servedC))")
        #expect(point(servedC?["venueFilePosition"]) == [50, 4], "serve: \(String(describing: servedC))")
        let servedA = (servedVenue["gateways"] as? [[String: Any]])?.first { $0["id"] as? String == "gw-a" }
        #expect(
            point(servedA?["position"]) == [10, 4] && servedA?["venueFilePosition"] == nil,
            "serve: \(String(describing: servedA))")
        serve.signal(SIGTERM)
        #expect(await serve.waitForExit(timeout: .seconds(30)) == 0, "serve: \(serve.text.suffix(2000))")

        hub.signal(SIGTERM)
        let exit = await hub.waitForExit(timeout: .seconds(30))
        #expect(exit == 0, "the hub's exit \(String(describing: exit)): \(hub.text.suffix(3000))")
        walking.cancel()
        await walker.stop()
    }
}

extension HubServiceTests {
    @Test(
        .enabled(
            if: WebDriver.available,
            "Chromium and its driver are not installed: apt-get install chromium chromium-driver (scripts/setup.sh does unless BEACONTRACKER_NO_BROWSER=1)"
        ), .awaitsTeardown)
    func aFiveTapWalkOnThePhonePageIsRecordedShownAppliedAndRolledBack() async throws {
        let broker = try MosquittoBroker()
        try await broker.start()
        let (_, statuses) = try await watch(broker, "beacontracker/row/hub/status")
        let (hub, _) = try calibratingHub(broker)
        #expect(await statuses.first { $0.text.contains("\"online\"") } != nil, "hub: \(hub.text)")
        let url = try await dashboardURL(of: hub)
        let walker = try await Walker(broker)
        let walking = Task { await walker.walk() }
        defer { walking.cancel() }

        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        let driver = try await WebDriver.start(
            screenshots: root.appendingPathComponent(".build/test-artifacts"), phone: true)
        defer { driver.stop() }
        try await driver.open("\(url)/calibrate#token=\(Self.token)")

        // The plan is drawn from the venue, and the page fits the phone's width.
        let zones = try await driver.poll("return document.querySelectorAll('#plan g.zone').length") {
            ($0 as? Int) == 3
        }
        #expect(zones as? Int == 3)
        let fits = try await driver.run("return document.documentElement.scrollWidth <= window.innerWidth")
        #expect(fits as? Bool == true, "the page scrolls sideways on a phone")
        // A fresh phone taps zones, 60 s a stay: the walk the figures favour (docs/dashboard.md).
        let defaults = try await driver.run(
            "return [document.getElementById('mode-zone').checked, document.getElementById('seconds').value]")
        #expect(
            (defaults as? [Any])?.first as? Bool == true,
            "a tap does not mark a zone by default: \(String(describing: defaults))")
        #expect((defaults as? [Any])?.last as? String == "60", "\(String(describing: defaults))")

        _ = try await driver.run(
            """
            for (const [id, value] of [['beacon', '\(Self.carried)'], ['who', 'cleo'], ['seconds', '6']]) {
              const input = document.getElementById(id);
              input.value = value;
              input.dispatchEvent(new Event('input'));
              input.dispatchEvent(new Event('change'));
            }
            """)
        try await driver.click("#start")
        let started = try await driver.poll("return document.getElementById('session-section').hidden") {
            ($0 as? Bool) == false
        }
        #expect(started as? Bool == false, "the walk did not start: \(hub.text.suffix(1000))")

        // Five taps: a (a point), b (the zone), c (a point), b (a point), a (the zone); the walker stands where tapped.
        let taps: [(zone: String, point: Bool, x: Double)] = [
            ("a", true, 10), ("b", false, 30), ("c", true, 50), ("b", true, 30), ("a", false, 10),
        ]
        for (index, tap) in taps.enumerated() {
            walker.stand(at: tap.x, 4)
            try await driver.click(tap.point ? "#mode-point" : "#mode-zone")
            // What the countdown says is recorded as it changes: a busy machine may poll after the stay's end. So is
            // a stay still highlighted (its zone, spot or list line) once the countdown has ended.
            _ = try await driver.run(
                """
                window.told = [];
                window.lingered ??= [];
                window.teller ??= new MutationObserver(() => {
                  const node = document.getElementById('current');
                  window.told.push(node.textContent);
                  const shown = document.querySelector('#zones g.zone.current, #marks li.current, #current-layer circle');
                  if (node.className === 'prompt' && shown) window.lingered.push(shown.outerHTML.slice(0, 80));
                });
                window.teller.observe(document.getElementById('current'), { childList: true, subtree: true, characterData: true });
                """)
            try await driver.click("#plan g.zone[data-zone=\"\(tap.zone)\"] polygon")
            let marks = try await driver.poll("return document.querySelectorAll('#marks li').length") {
                ($0 as? Int) == index + 1
            }
            #expect(marks as? Int == index + 1, "tap \(index + 1) not recorded")
            // The countdown says how to walk: stand at a point, stroll about a zone.
            let says = tap.point ? "Stay here" : "Stroll about"
            let told = try await driver.poll("return window.told.join(' | ')") {
                ($0 as? String)?.contains(says) == true
            }
            #expect((told as? String)?.contains(says) == true, "tap \(index + 1): \(String(describing: told))")
            if index == 1 { try await driver.screenshot("calibrate-1-strolling") }
            if index == 2 { try await driver.screenshot("calibrate-1-walking") }
            // The stay runs its 6 s before the walker moves on.
            let deadline = ContinuousClock.now.advanced(by: .seconds(60))
            while ContinuousClock.now < deadline {
                if try await api(url, "/api/calibration/session").1["current"] == nil { break }
                try await Task.sleep(for: .milliseconds(250))
            }
        }

        // The countdown and the highlights end together, not a poll apart.
        let lingered = try await driver.run("return window.lingered")
        #expect(
            (lingered as? [Any])?.isEmpty == true, "highlighted after the countdown: \(String(describing: lingered))")
        try await driver.click("#mode-point")

        // Recorded: the hub has the five marks, each where it was tapped.
        let (_, session) = try await api(url, "/api/calibration/session")
        let marks = session["marks"] as? [[String: Any]] ?? []
        #expect(marks.map { $0["zone"] as? String } == taps.map(\.zone), "\(marks)")
        #expect(marks.map { $0["x"] is Double } == taps.map(\.point), "points have x, zones not: \(marks)")
        for (mark, tap) in zip(marks, taps) where tap.point {
            #expect(abs((mark["x"] as? Double ?? 0) - tap.x) < 1 && abs((mark["y"] as? Double ?? 0) - 4) < 1, "\(mark)")
        }
        // Shown: every zone has its seconds and a quality, and the page the expected accuracy.
        let qualities = try await driver.poll(
            "return [...document.querySelectorAll('#zones-table tbody tr')].map(r => r.querySelector('.quality').textContent.trim())"
        ) { ($0 as? [String])?.allSatisfy { $0 != "none" } == true }
        #expect(
            (qualities as? [String])?.count == 3 && (qualities as? [String])?.contains("none") == false,
            "\(String(describing: qualities))")
        let check = try await driver.poll("return document.getElementById('check').textContent") {
            ($0 as? String)?.contains("%") == true
        }
        #expect((check as? String)?.contains("%") == true, "no expected accuracy shown: \(String(describing: check))")
        try await driver.screenshot("calibrate-2-walked")

        // Applied: finish stores version 1 and the engine runs with it.
        _ = try await driver.run("document.getElementById('note').value = 'five taps'")
        try await driver.click("#finish")
        // Finishing fits the walk again and checks it by cross-validation: with both cores busy, a debug build once took
        // longer than the 30 s the other polls wait.
        let active = try await driver.poll(
            "return document.getElementById('active').textContent", timeout: .seconds(180)
        ) {
            ($0 as? String)?.contains("1") == true
        }
        #expect((active as? String)?.contains("cleo") == true, "\(String(describing: active))")
        var (_, overview) = try await api(url, "/api/calibration")
        let version = overview["active"] as? [String: Any]
        #expect(version?["version"] as? Int == 1 && version?["who"] as? String == "cleo", "\(overview)")
        #expect(version?["note"] as? String == "five taps" && version?["kind"] as? String == "walk")
        #expect((overview["engine"] as? [String: Any])?["zones"] as? Int == 3, "\(overview)")
        #expect(((overview["engine"] as? [String: Any])?["points"] as? Int ?? 0) > 0, "the point stays made a route")
        try await driver.screenshot("calibrate-3-applied")

        // Rolled back: one tap, a version recording it, and hub.yaml's (none) in force again.
        try await driver.click("#rollback")
        let versions = try await driver.poll("return document.querySelectorAll('#versions li').length") {
            ($0 as? Int) == 2
        }
        #expect(versions as? Int == 2)
        (_, overview) = try await api(url, "/api/calibration")
        let rolled = overview["active"] as? [String: Any]
        #expect(rolled?["version"] as? Int == 2 && rolled?["kind"] as? String == "rollback", "\(overview)")
        #expect(rolled?["restores"] as? Int == 0 && rolled?["who"] as? String == "cleo")
        #expect(overview["engine"] == nil, "\(overview)")
        try await driver.screenshot("calibrate-4-rolled-back")

        let errors = try await driver.consoleErrors()
        #expect(errors.isEmpty, "console errors: \(errors)")

        // The phone keeps the walker's choice of mark: "a point" chosen after the last tap, the page opens with it.
        try await driver.open("\(url)/calibrate?reopened#token=\(Self.token)")
        let kept = try await driver.poll(
            "return document.querySelectorAll('#plan g.zone').length === 3 && document.getElementById('mode-point').checked"
        ) {
            ($0 as? Bool) == true
        }
        #expect(kept as? Bool == true, "the point mode was not kept")
        hub.signal(SIGTERM)
        let exit = await hub.waitForExit(timeout: .seconds(30))
        #expect(exit == 0, "the hub's exit \(String(describing: exit)): \(hub.text.suffix(3000))")
        walking.cancel()
        await walker.stop()
    }
}
