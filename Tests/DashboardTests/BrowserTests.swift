import BeaconModel
import BrokerTestSupport
import Foundation
import Testing

/// The web page in a real headless Chromium, driven through Debian's chromedriver (WebDriver over HTTP): the page
/// loads without console errors, draws the museum's zones, moves a tag's dot when the hub moves the tag, shows a tag's
/// path, and renders a zone's dwell chart. Screenshots go to .build/test-artifacts/ (not committed).
@Suite(.serialized) struct BrowserTests {
    static var available: Bool { WebDriver.available }

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

        let driver = try await WebDriver.start(
            screenshots: DashboardFixture.root.appendingPathComponent(".build/test-artifacts"))
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
        // The occupancy comes in a message of its own, maybe after the tag's state.
        let count = try await driver.poll(
            "return document.querySelector('#zones g[data-zone=\"egypt\"] text.count').textContent"
        ) { $0 as? String == "1" }
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
