import BeaconModel
import BrokerTestSupport
import Foundation
import Testing

/// The web page in a real headless Chromium, driven through Debian's chromedriver (WebDriver over HTTP): the page
/// loads without console errors, draws the museum's zones, moves a tag's dot when the hub moves the tag, shows a tag's
/// path, and renders a zone's dwell chart. Screenshots go to .build/test-artifacts/ (not committed).
@Suite(.serialized) struct BrowserTests {
    static let chromium = "/usr/bin/chromium"
    static let chromedriver = "/usr/bin/chromedriver"
    static var available: Bool {
        FileManager.default.isExecutableFile(atPath: chromium)
            && FileManager.default.isExecutableFile(atPath: chromedriver)
    }

    @Test(
        .enabled(
            if: BrowserTests.available,
            "Chromium and its driver are not installed: apt-get install chromium chromium-driver (scripts/setup.sh does unless BEACONTRACKER_NO_BROWSER=1)"
        ))
    func thePageShowsTheVenueLiveAndItsHistory() async throws {
        // History within the page's last 24 hours: the itinerary began an hour ago.
        let fixture = try await DashboardFixture(historyStart: Date().timeIntervalSince1970 - 7200)
        defer { Task { await fixture.stop() } }
        try fixture.place("visitor-1", in: "entrance")
        // visitor-2 comes with the position engine's estimate: its dot goes there, on a disc of its uncertainty.
        try fixture.place(
            "visitor-2", in: "entrance", minor: 2, position: TagState.Position(x: 2.5, y: 6.25, radius: 1.5))
        try fixture.occupy("entrance", with: ["visitor-1", "visitor-2"])

        let driver = try await WebDriver.start()
        defer { driver.stop() }
        try await driver.open("http://127.0.0.1:\(fixture.port)/")

        // The zones of the venue file, drawn.
        let zones = try await driver.poll("return document.querySelectorAll('#zones g.zone').length") {
            ($0 as? Int) == 9
        }
        #expect(zones as? Int == 9, "zones drawn: \(String(describing: zones))")
        let names = try await driver.run(
            "return [...document.querySelectorAll('#zones g.zone text:not(.count)')].map(t => t.textContent)")
        #expect((names as? [String])?.contains("Ancient Egypt") == true)
        // Its 11 doors, each a gap across a wall or zone edge, naming the zones they join.
        let doors =
            try await driver.run(
                "return [...document.querySelectorAll('#structure line.door')].map(d => d.dataset.door)") as? [String]
        #expect(doors?.count == 11, "\(String(describing: doors))")
        #expect(doors?.contains("outside|entrance") == true, "\(String(describing: doors))")

        // The live stream's snapshot puts the tag's dot in the entrance hall.
        let dot = """
            const d = document.querySelector('circle.tag[data-tag="visitor-1"]');
            return d ? [d.dataset.zone, d.getAttribute('cx'), d.getAttribute('cy')] : null;
            """
        let before = try await driver.poll(dot) { ($0 as? [String])?.first == "entrance" } as? [String]
        #expect(before?.first == "entrance", "dot: \(String(describing: before))")
        let estimate = try await driver.poll(
            """
            const d = document.querySelector('circle.tag[data-tag="visitor-2"]');
            const u = document.querySelector('circle.uncertainty[data-tag="visitor-2"]');
            return d && u ? [d.getAttribute('cx'), d.getAttribute('cy'), u.getAttribute('r')] : null;
            """
        ) { $0 is [String] }
        #expect(estimate as? [String] == ["2.500", "6.250", "1.500"], "estimated dot: \(String(describing: estimate))")
        try await driver.screenshot("dashboard-1-loaded")

        // The hub moves the tag: the dot follows, to another place on the plan.
        try fixture.place("visitor-1", in: "egypt")
        try fixture.occupy("entrance", with: ["visitor-2"])
        try fixture.occupy("egypt", with: ["visitor-1"])
        let after = try await driver.poll(dot) { ($0 as? [String])?.first == "egypt" } as? [String]
        #expect(after?.first == "egypt", "dot after the move: \(String(describing: after))")
        #expect(after != nil && before != nil && after?[1] != before?[1], "the dot did not move on the plan")
        let count = try await driver.run(
            "return document.querySelector('#zones g[data-zone=\"egypt\"] text.count').textContent")
        #expect(count as? String == "1")
        try await driver.screenshot("dashboard-2-moved")

        // Click the tag (once its dot has glided to its new place: a 0.6 s transition): its path from the database,
        // as a timeline.
        try await Task.sleep(for: .seconds(1))
        try await driver.click("circle.tag[data-tag=\"visitor-1\"]")
        let path = try await driver.poll(
            "return [...document.querySelectorAll('#tag-timeline li')].map(li => li.dataset.zone || '')"
        ) { ($0 as? [String])?.count == 4 }
        #expect(path as? [String] == ["entrance", "egypt", "greece", "rome"], "\(String(describing: path))")
        try await driver.screenshot("dashboard-3-tag-path")

        // Click the zone (its row in the zone list): the dwell chart by hour of day renders the database's visits.
        try await driver.click("#zones-table tr[data-zone=\"egypt\"]")
        let chart = try await driver.poll(
            """
            const chart = typeof Chart === 'undefined' ? null : Chart.getChart('dwell-chart');
            if (!chart || document.getElementById('dwell-chart').dataset.zone !== 'egypt') return null;
            return [chart.data.datasets[0].data.reduce((a, b) => a + b, 0), chart.canvas.width];
            """
        ) { ($0 as? [Double])?.first ?? 0 > 0 }
        let values = chart as? [Double]
        // Egypt's two closed visits: 300 s and 60 s, median 180 s = 3 minutes, in one hour of the day.
        #expect(values?.first == 3, "median dwell bars: \(String(describing: chart))")
        #expect((values?.last ?? 0) > 0, "the chart has no width")
        let routes = try await driver.run(
            "return [...document.querySelectorAll('#zone-routes li')].map(li => li.textContent)")
        #expect((routes as? [String])?.first?.contains("Ancient Egypt") == true, "\(String(describing: routes))")
        try await driver.screenshot("dashboard-4-zone-dwell")

        // The itinerary is two hours old: with the History window at the last hour, the zone has no dwell nor route.
        _ = try await driver.run(
            "const s = document.getElementById('window'); s.value = '1'; s.dispatchEvent(new Event('change'));")
        let narrowed =
            try await driver.poll(
                """
                return [String(document.getElementById('dwell-empty').hidden),
                  document.querySelector('#zone-routes li')?.textContent ?? ''];
                """
            ) { ($0 as? [String])?.first == "false" } as? [String]
        #expect(narrowed?.first == "false", "dwell-empty shown: \(String(describing: narrowed))")
        #expect(narrowed?.last?.hasPrefix("No routes") == true, "\(String(describing: narrowed))")

        let errors = try await driver.consoleErrors()
        #expect(errors.isEmpty, "console errors: \(errors)")
    }
}

/// Just enough of the WebDriver protocol to drive chromedriver.
struct WebDriver: Sendable {
    let process: Process
    let base: String
    let session: String

    static func start() async throws -> WebDriver {
        let port = try FreePort.find()
        let process = Process()
        process.executableURL = URL(fileURLWithPath: BrowserTests.chromedriver)
        process.arguments = ["--port=\(port)"]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        let base = "http://127.0.0.1:\(port)"
        // chromedriver answers /status once it listens.
        var ready = false
        var failure = ""
        for _ in 0..<300 where !ready {
            do {
                _ = try await request("GET", "\(base)/status")
                ready = true
            } catch {
                failure = "\(error)"
                try await Task.sleep(for: .milliseconds(100))
            }
        }
        guard ready else {
            process.terminate()
            throw FixtureError("chromedriver did not answer on \(base): \(failure)")
        }
        let capabilities: [String: Any] = [
            "capabilities": [
                "alwaysMatch": [
                    "browserName": "chrome",
                    "goog:chromeOptions": [
                        "binary": BrowserTests.chromium,
                        "args": [
                            "--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                            "--window-size=1400,900",
                        ],
                    ],
                    "goog:loggingPrefs": ["browser": "ALL"],
                ]
            ]
        ]
        do {
            let reply = try await request("POST", "\(base)/session", capabilities)
            guard let value = reply["value"] as? [String: Any], let session = value["sessionId"] as? String else {
                throw FixtureError("chromedriver refused the session: \(reply)")
            }
            return WebDriver(process: process, base: base, session: session)
        } catch {
            process.terminate()
            throw error
        }
    }

    func stop() {
        let url = "\(base)/session/\(session)"
        let process = process
        Task {
            _ = try? await Self.request("DELETE", url)
            process.terminate()
        }
    }

    func open(_ url: String) async throws {
        _ = try await Self.request("POST", "\(base)/session/\(session)/url", ["url": url])
    }

    func run(_ script: String) async throws -> Any? {
        let reply = try await Self.request(
            "POST", "\(base)/session/\(session)/execute/sync", ["script": script, "args": [Any]()])
        return reply["value"]
    }

    /// Runs `script` until `done` accepts its value or 30 s pass; returns the last value.
    func poll(_ script: String, until done: (Any?) -> Bool) async throws -> Any? {
        let deadline = ContinuousClock.now.advanced(by: .seconds(30))
        var value: Any?
        repeat {
            value = try await run(script)
            if done(value) { return value }
            try await Task.sleep(for: .milliseconds(100))
        } while ContinuousClock.now < deadline
        return value
    }

    func click(_ selector: String) async throws {
        let found = try await Self.request(
            "POST", "\(base)/session/\(session)/element", ["using": "css selector", "value": selector])
        guard let element = (found["value"] as? [String: Any])?.values.first as? String else {
            throw FixtureError("no element \(selector): \(found)")
        }
        _ = try await Self.request("POST", "\(base)/session/\(session)/element/\(element)/click", [:])
    }

    func screenshot(_ name: String) async throws {
        let reply = try await Self.request("GET", "\(base)/session/\(session)/screenshot")
        guard let encoded = reply["value"] as? String, let png = Data(base64Encoded: encoded) else { return }
        let folder = DashboardFixture.root.appendingPathComponent(".build/test-artifacts")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let file = folder.appendingPathComponent("\(name).png")
        try png.write(to: file)
        print("screenshot: \(file.path)")
    }

    /// The browser's console messages at level SEVERE (errors, failed loads).
    func consoleErrors() async throws -> [String] {
        let reply = try await Self.request("POST", "\(base)/session/\(session)/se/log", ["type": "browser"])
        let entries = reply["value"] as? [[String: Any]] ?? []
        return entries.filter { $0["level"] as? String == "SEVERE" }.map { "\($0["message"] ?? "")" }
    }

    /// One WebDriver call. Over a plain socket: chromedriver writes headers without a space after the colon
    /// (`Content-Length:249`), which Foundation's URLSession on Linux refuses ("Failed writing header").
    static func request(_ method: String, _ url: String, _ body: [String: Any]? = nil) async throws -> [String: Any] {
        let components = URLComponents(string: url)!
        let payload = try body.map { try JSONSerialization.data(withJSONObject: $0) } ?? Data()
        let port = components.port ?? 80
        let path = components.path
        // On a thread of its own: the blocking read held one of the cooperative pool's two threads for as long as
        // chromedriver took, and on a busy machine every other suite's timers and streams timed out meanwhile.
        let (status, data) = try await withCheckedThrowingContinuation {
            (continuation: CheckedContinuation<(Int, Data), any Error>) in
            Thread {
                continuation.resume(
                    with: Result { try exchange(port: port, method: method, path: path, body: payload) })
            }.start()
        }
        let json = (try? JSONSerialization.jsonObject(with: data)) as? [String: Any] ?? [:]
        guard status == 200 else {
            throw FixtureError(
                "WebDriver \(method) \(url) failed (\(status)): \(String(decoding: data, as: UTF8.self))")
        }
        return json
    }

    /// Sends one HTTP/1.1 request to 127.0.0.1 on a new connection and reads its reply.
    static func exchange(port: Int, method: String, path: String, body: Data) throws -> (Int, Data) {
        let fd = try connectLoopback(port: port, receiveTimeout: timeval(tv_sec: 60, tv_usec: 0))
        defer { close(fd) }
        var request = Data(
            ("\(method) \(path) HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\n"
                + "Content-Type: application/json\r\nContent-Length: \(body.count)\r\n\r\n").utf8)
        request.append(body)
        let sent = request.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, 0) }
        guard sent == request.count else { throw FixtureError("cannot send to 127.0.0.1:\(port)") }
        // chromedriver keeps the connection open whatever the request says: read the head, then Content-Length bytes.
        var reply = Data()
        var chunk = [UInt8](repeating: 0, count: 65_536)
        while true {
            if let end = reply.range(of: Data("\r\n\r\n".utf8)) {
                let head = String(decoding: reply[..<end.lowerBound], as: UTF8.self)
                let length =
                    head.split(separator: "\r\n").first { $0.lowercased().hasPrefix("content-length:") }
                    .flatMap { Int($0.dropFirst("content-length:".count).trimmingCharacters(in: .whitespaces)) } ?? 0
                if reply.count - end.upperBound >= length {
                    let status = head.split(separator: " ").dropFirst().first.flatMap { Int($0) } ?? 0
                    return (status, reply[end.upperBound..<(end.upperBound + length)])
                }
            }
            let count = recv(fd, &chunk, chunk.count, 0)
            guard count > 0 else { throw FixtureError("no complete HTTP reply from 127.0.0.1:\(port)") }
            reply.append(contentsOf: chunk[..<count])
        }
    }

}
