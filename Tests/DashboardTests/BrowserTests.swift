import BeaconModel
import BeaconStore
import BrokerTestSupport
import Dashboard
import Foundation
import Synchronization
import Testing
import ZoneInference

/// The web page in a real headless Chromium, driven through Debian's chromedriver (WebDriver over HTTP): the page
/// loads without console errors, draws the museum's zones, moves a tag's dot when the hub moves the tag, shows a tag's
/// path, and renders a zone's dwell chart; the Tags view lists each tag's battery and whereabouts, sorted and marked.
/// Screenshots go to .build/test-artifacts/ (not committed).
@Suite(.serialized, .awaitsTeardown) struct BrowserTests {
    static var available: Bool { WebDriver.available }

    @Test(
        .enabled(
            if: BrowserTests.available,
            "Chromium and its driver are not installed: apt-get install chromium chromium-driver (scripts/setup.sh does unless BEACONTRACKER_NO_BROWSER=1)"
        ))
    func thePageShowsTheVenueLiveAndItsHistory() async throws {
        // History within the page's last 24 hours: the itinerary began an hour ago.
        let relearning = RelearningDesk()
        let fixture = try await DashboardFixture(
            historyStart: Date().timeIntervalSince1970 - 7200, calibration: relearning)
        relearning.board.withLock { $0 = fixture.board }
        defer { TestTeardown.add { await fixture.stop() } }
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

        // Issue 22: the hub's links fit and a link alert in force. The gateway's square gets an amber rim, and a dashed
        // circle where its links place it now joined to it by a dashed line; clicking it shows its health, its gain
        // from the links, the alert's evidence and where the links place it.
        var status = HubStatus(hub: "hub-a", state: .online, t: Date().timeIntervalSince1970)
        status.links = HubStatus.Links(
            t: Date().timeIntervalSince1970 - 60, linksUsed: 60, residualDB: 3.1,
            gains: ["gw-egypt": .init(value: -2.4, sigma: 1.2)], pathLossExponent: .init(value: 2.6, sigma: 0.1),
            applied: true, gainsApplied: ["gw-egypt"], antennas: ["gw-egypt": .init(value: 11.5, sigma: 2)])
        try fixture.publish(status, to: fixture.topics.hubStatus)
        fixture.board.setGateways([
            LiveBoard.GatewayHealth(
                gateway: "gw-egypt", online: true, monitored: true, lastContact: Date().timeIntervalSince1970,
                boot: "b1",
                linkAlert: LiveBoard.LinkAlert(
                    code: "gateway-moved",
                    reason: "gw-egypt's 5 links to other gateways shifted each their own way (moved?)",
                    t: Date().timeIntervalSince1970 - 60,
                    estimatedPosition: EstimatedPosition(x: 16.5, y: 6.2, withinMetres: 2.4, movedMetres: 7.6)))
        ])
        let rim = try await driver.poll(
            "return document.querySelector('#gateways rect[data-gateway=\"gw-egypt\"]').getAttribute('class')"
        ) { ($0 as? String)?.contains("link-alert") == true }
        #expect((rim as? String)?.contains("link-alert") == true, "\(String(describing: rim))")
        let drawn =
            try await driver.run(
                """
                const circle = document.querySelector('g.gateway-estimates[data-gateway="gw-egypt"] circle');
                const line = document.querySelector('g.gateway-estimates[data-gateway="gw-egypt"] line');
                return circle && line ? [circle.getAttribute('cx'), circle.getAttribute('cy'), circle.getAttribute('r'),
                  line.getAttribute('x1'), line.getAttribute('y1')] : null;
                """) as? [String]
        #expect(drawn == ["16.5", "6.2", "2.4", "10.2", "2"], "\(String(describing: drawn))")
        try await driver.click("#gateways rect[data-gateway=\"gw-egypt\"]")
        let panel =
            try await driver.poll(
                """
                if (document.getElementById('gateway-details').hidden) return null;
                return [document.getElementById('details-title').textContent,
                  document.getElementById('gateway-alert-badge').textContent,
                  document.getElementById('gateway-alert').textContent,
                  document.getElementById('gateway-gain').textContent,
                  document.getElementById('gateway-state').textContent,
                  document.getElementById('gateway-estimate').textContent];
                """
            ) { ($0 as? [String])?[3].contains("dB") == true } as? [String]
        #expect(panel?[0] == "gw-egypt" && panel?[1] == "gateway-moved", "\(String(describing: panel))")
        #expect(panel?[2].contains("shifted each their own way") == true, "\(String(describing: panel))")
        #expect(
            panel?[5].hasPrefix("Its links place it at (16.5, 6.2), within 3 m: 8 m from where the hub has it")
                == true, "\(String(describing: panel))")
        #expect(
            panel?[3].hasPrefix("−2.4 ± 1.2 dB straight ahead, antenna 11.5 ± 2.0 dB front-to-back, applied") == true,
            "\(String(describing: panel))")
        #expect(panel?[4] == "online (boot b1)", "\(String(describing: panel))")
        try await driver.screenshot("dashboard-8-gateway-links")

        // The change was meant: the panel's button asks the hub to learn the gateway's links afresh
        // (`POST /api/gateways/gw-egypt/relearn`), says what it did, and the alert goes as the hub clears it.
        #expect(
            try await driver.run("return document.getElementById('gateway-relearn-row').hidden") as? Bool == false)
        try await driver.click("#gateway-relearn")
        let relearned =
            try await driver.poll(
                """
                return [document.getElementById('gateway-relearn-result').textContent,
                  String(document.getElementById('gateway-alert-badge').hidden),
                  document.querySelector('#gateways rect[data-gateway="gw-egypt"]').getAttribute('class'),
                  String(document.querySelector('g.gateway-estimates') === null),
                  String(document.getElementById('gateway-estimate').hidden)];
                """
            ) { ($0 as? [String]).map { $0[1] == "true" && $0[0].contains("forgotten") } ?? false } as? [String]
        #expect(relearned?[3] == "true" && relearned?[4] == "true", "\(String(describing: relearned))")
        #expect(
            relearned?[0]
                == "gateway-moved cleared; 10 links forgotten: their new levels settle over the next two fits.",
            "\(String(describing: relearned))")
        #expect(relearned?[1] == "true" && relearned?[2].contains("link-alert") == false)
        #expect(relearning.asked.withLock { $0 } == ["gw-egypt"])
        try await driver.screenshot("dashboard-9-gateway-relearned")

        // It stays where it went: the panel places it (`POST /api/gateways/gw-egypt/place`), its form filled with
        // where its links placed it when the panel opened, and the plan draws it at its new place.
        let filled =
            try await driver.run(
                """
                document.getElementById('gateway-place').open = true;
                return [document.getElementById('gateway-place-x').value,
                  document.getElementById('gateway-place-y').value];
                """) as? [String]
        #expect(filled == ["16.5", "6.2"], "\(String(describing: filled))")
        _ = try await driver.run(
            """
            document.getElementById('gateway-place-x').value = '14';
            document.getElementById('gateway-place-y').value = '3.5';
            document.getElementById('gateway-place-who').value = 'Ana';
            """)
        try await driver.click("#gateway-place-button")
        let placed =
            try await driver.poll(
                """
                const node = document.querySelector('#gateways rect[data-gateway="gw-egypt"]');
                return [document.getElementById('gateway-place-result').textContent,
                  node ? node.getAttribute('x') : '', node ? node.getAttribute('y') : '',
                  document.getElementById('gateway-place-from').textContent];
                """
            ) { ($0 as? [String])?[0].hasPrefix("placed") == true } as? [String]
        #expect(
            placed?[0]
                == "placed at (14.0, 3.5) in Ancient Egypt, 4.1 m from where it was: version 3; 10 links forgotten, "
                + "their new levels settle over the next two fits.", "\(String(describing: placed))")
        #expect(placed?[1] == "13.75" && placed?[2] == "3.25", "\(String(describing: placed))")
        #expect(
            placed?[3].hasPrefix(
                "The hub has it at (14.0, 3.5), placed there from this panel (the venue file says (10.2, 2.0))")
                == true,
            "\(String(describing: placed))")
        #expect(relearning.placed.withLock { $0 } == ["gw-egypt": .init(x: 14, y: 3.5, zone: "egypt")])
        try await driver.screenshot("dashboard-10-gateway-placed")

        let errors = try await driver.consoleErrors()
        #expect(errors.isEmpty, "console errors: \(errors)")
    }

    @Test(
        .enabled(
            if: BrowserTests.available,
            "Chromium and its driver are not installed: apt-get install chromium chromium-driver (scripts/setup.sh does unless BEACONTRACKER_NO_BROWSER=1)"
        ))
    func theTagsViewListsEachTagsBatteryAndWhereaboutsSortedAndMarked() async throws {
        // With a token, as a hub off loopback runs: the export link must carry it.
        let token = "s3cret-token-for-tests"
        let now = Date().timeIntervalSince1970
        let fixture = try await DashboardFixture(token: token, historyStart: now - 7200)
        defer { TestTeardown.add { await fixture.stop() } }
        // Served as `beacon-hub serve` serves it: the page offers no calibrating.
        fixture.board.updateHealth { $0.role = "serve" }
        try fixture.place(
            "guide-a", in: "egypt", gateway: "gw-egypt", at: now,
            beacon: "eddystone-uid:edd1ebeac04e5defa017:00000000000a",
            lastSeen: now - 3600, lastSeenZone: "egypt", lastSeenGateway: "gw-egypt",
            battery: TagState.Battery(milliVolts: 2950, level: .ok, t: now - 3600, trendPerWeek: -4.25),
            telemetry: TagState.TagTelemetry(
                t: now - 3600, temperatureCelsius: 21.5, advertisingCount: 5000, secondsSinceBoot: 7200),
            adverts: TagState.Adverts(seenPerMinute: 54.2, expectedPerMinute: 60, t: now - 3600))
        try fixture.place(
            "guide-b", in: "rome", gateway: "gw-rome", at: now,
            beacon: "eddystone-uid:edd1ebeac04e5defa017:00000000000b",
            lastSeen: now - 60, lastSeenZone: "rome", lastSeenGateway: "gw-rome",
            battery: TagState.Battery(milliVolts: 2450, level: .low, t: now - 60, trendPerWeek: -35.5))
        // An iBeacon: no telemetry at all.
        try fixture.place(
            "guide-c", in: nil, state: .outside, at: now, lastSeen: now - 100_000, lastSeenZone: "greece",
            lastSeenGateway: "gw-greece", missing: true)
        try fixture.place(
            "guide-d", in: nil, state: .outside, at: now, beacon: "eddystone-uid:edd1ebeac04e5defa017:00000000000d",
            lastSeen: now - 200_000, battery: TagState.Battery(milliVolts: 2500, level: .low, t: now - 200_000),
            missing: true)

        let driver = try await WebDriver.start(
            screenshots: DashboardFixture.root.appendingPathComponent(".build/test-artifacts"))
        defer { driver.stop() }
        try await driver.open("http://127.0.0.1:\(fixture.port)/#token=\(token)")
        // The plan first, as before; then the Tags view from the header.
        _ = try await driver.poll("return document.querySelectorAll('#zones g.zone').length") { ($0 as? Int) == 9 }
        // The analytics process neither calibrates nor places gateways: no Calibrate link, and a gateway's panel has
        // no place form nor relearn button.
        try await driver.click("#gateways rect[data-gateway=\"gw-egypt\"]")
        let controls =
            try await driver.poll(
                """
                if (document.getElementById('gateway-details').hidden) return null;
                return ['calibrate-link', 'gateway-place', 'gateway-relearn-row']
                  .map(id => document.getElementById(id))
                  .map(node => String(node.hidden && getComputedStyle(node).display === 'none'));
                """
            ) { $0 is [String] } as? [String]
        #expect(controls == ["true", "true", "true"], "\(String(describing: controls))")
        try await driver.click("#details-close")
        try await driver.click("#tags-link")

        let order = "return [...document.querySelectorAll('#tags-table tbody tr')].map(r => r.dataset.tag)"
        // Battery ascending by default: lowest first, the iBeacon (no battery) last.
        let byBattery = try await driver.poll(order) { ($0 as? [String])?.count == 4 } as? [String]
        #expect(byBattery == ["guide-b", "guide-d", "guide-a", "guide-c"], "\(String(describing: byBattery))")
        let view =
            try await driver.run(
                """
                return [String(document.getElementById('plan-section').hidden),
                  document.querySelector('#tags-table th[aria-sort]')?.dataset.sort ?? '',
                  document.querySelector('#tags-table th[aria-sort]')?.getAttribute('aria-sort') ?? '',
                  document.getElementById('tags-count').textContent]
                """) as? [String]
        #expect(
            view == ["true", "battery", "ascending", "4 tags · 2 low battery · 2 missing"],
            "\(String(describing: view))")

        // Low batteries and missing tags are marked, and look it: their rows' background differs from a plain row's.
        let marks =
            try await driver.run(
                """
                const rows = [...document.querySelectorAll('#tags-table tbody tr')];
                return rows.map(r => [r.dataset.tag, r.className, getComputedStyle(r.cells[0]).backgroundColor,
                  r.querySelector('td.level').textContent, r.querySelector('td.missing-flag').textContent,
                  r.querySelector('td.trend').textContent, r.querySelector('td.last-zone').textContent,
                  r.querySelector('td.adverts').textContent]);
                """) as? [[String]]
        let byTag = Dictionary((marks ?? []).map { ($0[0], $0) }, uniquingKeysWith: { a, _ in a })
        #expect(byTag["guide-b"]?[1] == "low" && byTag["guide-d"]?[1] == "low missing", "\(byTag)")
        #expect(byTag["guide-c"]?[1] == "missing" && byTag["guide-a"]?[1] == "", "\(byTag)")
        #expect(
            byTag["guide-b"]?[2] != byTag["guide-a"]?[2] && byTag["guide-c"]?[2] != byTag["guide-a"]?[2], "\(byTag)")
        #expect(byTag["guide-b"]?[3] == "low" && byTag["guide-c"]?[3] == "no TLM (iBeacon)", "\(byTag)")
        #expect(byTag["guide-c"]?[4] == "missing" && byTag["guide-a"]?[4] == "", "\(byTag)")
        #expect(byTag["guide-b"]?[5] == "-35.5" && byTag["guide-b"]?[6] == "Rome", "\(byTag)")
        // Every column fits beside the side bar at the test's window size (1400 px): no sideways scrolling.
        let fits = try await driver.run(
            "const box = document.querySelector('#tags-view .table-scroll'); return box.scrollWidth <= box.clientWidth")
        #expect(fits as? Bool == true, "the Tags table scrolls sideways")
        // Adverts heard a minute against sent, where a whole window was counted.
        #expect(byTag["guide-a"]?[7] == "54 / 60" && byTag["guide-b"]?[7] == "–", "\(byTag)")

        // Export CSV: a plain link to the API with the page's token as access_token, in the table's order.
        let link = try await driver.run("return document.getElementById('tags-csv').getAttribute('href')") as? String
        #expect(link == "/api/tags.csv?sort=battery&access_token=\(token)", "\(String(describing: link))")
        let csv = try await fixture.get(link ?? "/api/tags.csv", header: false)
        #expect(csv.status == 200 && csv.headers["content-disposition"] == "attachment; filename=\"tags-museum.csv\"")
        #expect(
            csv.text.components(separatedBy: "\r\n").dropFirst().first?.hasPrefix("guide-b,") == true, "\(csv.text)")
        try await driver.screenshot("dashboard-5-tags-by-battery")

        // A click on a column's title sorts by it; a second click reverses.
        try await driver.click("#tags-table th[data-sort=\"tag\"]")
        let byTag1 = try await driver.poll(order) { ($0 as? [String])?.first == "guide-a" } as? [String]
        #expect(byTag1 == ["guide-a", "guide-b", "guide-c", "guide-d"], "\(String(describing: byTag1))")
        try await driver.click("#tags-table th[data-sort=\"tag\"]")
        let reversed = try await driver.poll(order) { ($0 as? [String])?.first == "guide-d" } as? [String]
        #expect(reversed == ["guide-d", "guide-c", "guide-b", "guide-a"], "\(String(describing: reversed))")
        #expect(
            try await driver.run(
                "return document.querySelector('#tags-table th[data-sort=\"tag\"]').getAttribute('aria-sort')")
                as? String == "descending")
        // Last seen: the longest unheard first.
        try await driver.click("#tags-table th[data-sort=\"lastSeen\"]")
        let byLastSeen =
            try await driver.poll(order) { ($0 as? [String])?.first == "guide-d" && ($0 as? [String])?[1] == "guide-c" }
            as? [String]
        #expect(byLastSeen == ["guide-d", "guide-c", "guide-a", "guide-b"], "\(String(describing: byLastSeen))")
        let lastSeenLink =
            try await driver.run("return document.getElementById('tags-csv').getAttribute('href')") as? String
        #expect(lastSeenLink?.hasPrefix("/api/tags.csv?sort=lastSeen&") == true, "\(String(describing: lastSeenLink))")

        // Live: the hub republishes guide-a with a low battery; its row is marked without a reload.
        try fixture.place(
            "guide-a", in: "egypt", gateway: "gw-egypt", at: now,
            beacon: "eddystone-uid:edd1ebeac04e5defa017:00000000000a",
            lastSeen: now - 3600, lastSeenZone: "egypt", lastSeenGateway: "gw-egypt",
            battery: TagState.Battery(milliVolts: 2550, level: .low, t: now - 3600, trendPerWeek: -40),
            telemetry: TagState.TagTelemetry(
                t: now - 3600, temperatureCelsius: 21.5, advertisingCount: 5000, secondsSinceBoot: 7200))
        let relabelled =
            try await driver.poll(
                "return [document.querySelector('#tags-table tr[data-tag=\"guide-a\"]').className, document.getElementById('tags-count').textContent]"
            ) { ($0 as? [String])?.first == "low" } as? [String]
        #expect(relabelled == ["low", "4 tags · 3 low battery · 2 missing"], "\(String(describing: relabelled))")
        try await driver.screenshot("dashboard-6-tags-by-last-seen")

        // A row opens the tag's panel beside the table: its battery, where it was last heard, no missing badge.
        try await driver.click("#tags-table tr[data-tag=\"guide-b\"]")
        let panel = """
            return [document.getElementById('details-title').textContent, document.getElementById('tag-battery').textContent,
              document.getElementById('tag-last-seen').textContent, String(document.getElementById('tag-missing').hidden),
              String(document.getElementById('tag-telemetry-row').hidden)];
            """
        let guideB = try await driver.poll(panel) { ($0 as? [String])?.first == "guide-b" } as? [String]
        #expect(guideB?[1].hasPrefix("2450 mV · low · -35.5 mV/week") == true, "\(String(describing: guideB))")
        #expect(
            guideB?[2].contains("ago") == true && guideB?[2].hasSuffix("in Rome by gw-rome") == true,
            "\(String(describing: guideB))")
        #expect(guideB?[3] == "true" && guideB?[4] == "true", "\(String(describing: guideB))")
        try await driver.click("#tags-table tr[data-tag=\"guide-a\"]")
        let guideA = try await driver.poll(panel) { ($0 as? [String])?.first == "guide-a" } as? [String]
        #expect(guideA?[1].hasPrefix("2550 mV · low · -40.0 mV/week") == true, "\(String(describing: guideA))")
        #expect(guideA?[4] == "false", "the TLM frame's other fields are shown: \(String(describing: guideA))")
        let telemetry = try await driver.run("return document.getElementById('tag-telemetry').textContent") as? String
        #expect(telemetry?.hasPrefix("21.5 °C, up 2.0 h, 5000 adverts") == true, "\(String(describing: telemetry))")
        // The iBeacon: no telemetry, said as such, and missing.
        try await driver.click("#tags-table tr[data-tag=\"guide-c\"]")
        let guideC = try await driver.poll(panel) { ($0 as? [String])?.first == "guide-c" } as? [String]
        #expect(guideC?[1] == "no telemetry (iBeacon sends none)", "\(String(describing: guideC))")
        #expect(guideC?[2].hasSuffix("in Ancient Greece by gw-greece") == true, "\(String(describing: guideC))")
        #expect(guideC?[3] == "false", "the missing badge is shown: \(String(describing: guideC))")
        try await driver.screenshot("dashboard-7-tags-panel")

        // Back to the plan: the floor plan shows again, the table hides.
        try await driver.click("#plan-link")
        let plan = try await driver.poll(
            "return [String(document.getElementById('plan-section').hidden), String(document.getElementById('tags-view').hidden)]"
        ) { ($0 as? [String]) == ["false", "true"] }
        #expect(plan as? [String] == ["false", "true"], "\(String(describing: plan))")

        let errors = try await driver.consoleErrors()
        #expect(errors.isEmpty, "console errors: \(errors)")

        // The calibration page opened directly on the analytics process says it cannot calibrate here, and where.
        try await driver.open("http://127.0.0.1:\(fixture.port)/calibrate#token=\(token)")
        let said =
            try await driver.poll("return document.getElementById('error').textContent") {
                ($0 as? String)?.isEmpty == false
            } as? String
        #expect(
            said?.hasPrefix("cannot read the calibration: this server does not calibrate") == true
                && said?.contains("beacon-hub run") == true, "\(String(describing: said))")
    }
}

/// The hub's side of `POST /api/gateways/{id}/relearn` for the page's test: records the call, and clears the
/// gateway's alert on the board as the hub's next tick would (the hub's own is tested end to end, in
/// GatewayBeaconsTests and LinkAlertTests). Nothing else of the calibration is asked here.
final class RelearningDesk: CalibrationDesk {
    let asked = Mutex<[String]>([])
    let board = Mutex<LiveBoard?>(nil)
    let placed = Mutex<[String: Calibration.Placement]>([:])

    var placements: [String: Calibration.Placement] { placed.withLock { $0 } }

    /// As the hub answers for the museum's gw-egypt, at (10.2, 2) in the venue file: the third version.
    func place(_ gateway: String, _ request: GatewayPlace) async throws -> GatewayPlaced {
        let zone = request.zone ?? "egypt"
        placed.withLock { $0[gateway] = .init(x: request.x, y: request.y, zone: ZoneID(unchecked: zone)) }
        let version = CalibrationVersion(
            version: 3, created: Date().timeIntervalSince1970, who: request.who, kind: .placement, zones: 0,
            gateways: 0, body: nil)
        let moved = ((request.x - 10.2) * (request.x - 10.2) + (request.y - 2) * (request.y - 2)).squareRoot()
        return GatewayPlaced(
            gateway: gateway, x: request.x, y: request.y, zone: zone, movedMetres: moved, version: version,
            linksForgotten: 10, alertCleared: nil)
    }

    func relearnLinks(of gateway: String) async throws -> LinksRelearned {
        asked.withLock { $0.append(gateway) }
        let alert = LiveBoard.LinkAlert(code: "gateway-moved", reason: "", t: Date().timeIntervalSince1970 - 60)
        board.withLock { board in
            board?.setGateways([
                LiveBoard.GatewayHealth(
                    gateway: GatewayID(unchecked: gateway), online: true, monitored: true,
                    lastContact: Date().timeIntervalSince1970, boot: "b1")
            ])
        }
        return LinksRelearned(
            gateway: gateway, t: Date().timeIntervalSince1970, linksForgotten: 10, alertCleared: alert)
    }

    static func unused() -> APIError { APIError(status: 404, "no-calibration", "not part of this test") }
    func overview() async throws -> CalibrationOverview { throw Self.unused() }
    func start(_ request: CalibrationStart) async throws -> CalibrationSessionView { throw Self.unused() }
    func session() async throws -> CalibrationSessionView { throw Self.unused() }
    func mark(_ request: CalibrationMark) async throws -> CalibrationSessionView { throw Self.unused() }
    func plan(_ request: CalibrationPlan) async throws -> CalibrationSessionView { throw Self.unused() }
    func finish(_ request: CalibrationFinish) async throws -> CalibrationFinished { throw Self.unused() }
    func cancel() async throws { throw Self.unused() }
    func rollback(_ request: CalibrationRollback) async throws -> CalibrationRolledBack { throw Self.unused() }
}
