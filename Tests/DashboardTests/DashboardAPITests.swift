import BeaconModel
import BeaconStore
import BrokerTestSupport
import Dashboard
import Foundation
import Prometheus
import Testing

/// The JSON API against a live server on a free port: the museum venue, a live board fed as the hub feeds it, and a
/// real history database holding a known itinerary (DashboardFixture.writeHistory).
@Suite(.awaitsTeardown) struct DashboardAPITests {
    let start = DashboardFixture.start

    @Test func venueHasTheMuseumsZonesShapesAndGatewayHealth() async throws {
        let fixture = try await DashboardFixture()
        defer { TestTeardown.add { await fixture.stop() } }
        fixture.board.setGateways([
            LiveBoard.GatewayHealth(
                gateway: "gw-entrance", online: true, monitored: true, lastContact: 1, boot: "b1"),
            LiveBoard.GatewayHealth(gateway: "gw-egypt", online: false, monitored: true, lastContact: 1, boot: "b1"),
        ])
        let reply = try await fixture.get("/api/venue")
        #expect(reply.status == 200)
        #expect(reply.contentType?.hasPrefix("application/json") == true)
        let zones = reply.json["zones"] as? [[String: Any]] ?? []
        #expect(zones.count == 9)
        let entrance = zones.first { $0["id"] as? String == "entrance" }
        #expect(entrance?["name"] as? String == "Entrance hall")
        #expect((entrance?["shape"] as? [[Double]])?.count == 4)
        let gateways = reply.json["gateways"] as? [[String: Any]] ?? []
        #expect(gateways.count == 9)
        let health = Dictionary(
            gateways.map { ($0["id"] as? String ?? "", $0["health"] as? String ?? "") }, uniquingKeysWith: { a, _ in a }
        )
        #expect(health["gw-entrance"] == "online")
        #expect(health["gw-egypt"] == "offline")
        #expect(health["gw-rome"] == "unheard")
        let bounds = reply.json["bounds"] as? [String: Double]
        #expect(bounds?["minX"] == 0 && bounds?["maxX"] == 30)
    }

    /// Issue 22 on the plan: each gateway's gain from the hub's latest links fit (applied when the hub handed it to the
    /// engine), and the link alert in force, which also goes down the live stream when it is raised or cleared.
    /// Without a calibration desk (`beacon-hub serve`) the plan takes where the history's `gateways` table has each
    /// gateway: one placed from the hub's panel stands there, with the venue file's place beside it.
    @Test func withoutTheHubsDeskTheVenueTakesTheGatewaysPlacesFromTheHistory() async throws {
        let fixture = try await DashboardFixture()
        defer { TestTeardown.add { await fixture.stop() } }
        let store = try HubStore(path: fixture.directory.appendingPathComponent("hub.db").path)
        // gw-egypt placed 4.1 m away; gw-rome where the file has it but in another zone (a venue file edited since).
        try await store.describeVenue(
            zones: [], gateways: [("gw-egypt", "egypt", 14, 3.5), ("gw-rome", "greece", 15, 12)])
        try store.close()
        let gateways = try await fixture.get("/api/venue").json["gateways"] as? [[String: Any]] ?? []
        let byID = Dictionary(gateways.map { ($0["id"] as? String ?? "", $0) }, uniquingKeysWith: { a, _ in a })
        func point(_ value: Any?) -> [Double]? { (value as? [Any])?.compactMap { ($0 as? NSNumber)?.doubleValue } }
        #expect(point(byID["gw-egypt"]?["position"]) == [14, 3.5], "\(String(describing: byID["gw-egypt"]))")
        #expect(point(byID["gw-egypt"]?["venueFilePosition"]) == [10.2, 2], "\(String(describing: byID["gw-egypt"]))")
        #expect(point(byID["gw-rome"]?["position"]) == [15, 12] && byID["gw-rome"]?["venueFilePosition"] == nil)
        #expect(
            byID["gw-rome"]?["zone"] as? String == "rome",
            "the venue file's zone: \(String(describing: byID["gw-rome"]))")
        #expect(point(byID["gw-entrance"]?["position"]) != nil && byID["gw-entrance"]?["venueFilePosition"] == nil)
    }

    @Test func venueGatewaysCarryTheirLinksGainAndTheLinkAlertInForce() async throws {
        let fixture = try await DashboardFixture()
        defer { TestTeardown.add { await fixture.stop() } }
        var status = HubStatus(hub: "hub-a", state: .online, t: 2_000)
        status.links = HubStatus.Links(
            t: 1_990, linksUsed: 60, residualDB: 3.1,
            gains: ["gw-entrance": .init(value: 2.4, sigma: 1.2), "gw-egypt": .init(value: -1.1, sigma: 4.5)],
            pathLossExponent: .init(value: 2.6, sigma: 0.1), applied: true, gainsApplied: ["gw-entrance"],
            antennas: ["gw-entrance": .init(value: 11.5, sigma: 2)])
        try fixture.publish(status, to: fixture.topics.hubStatus)
        let reader = try EventStreamReader(port: fixture.port, path: "/api/stream")
        _ = await reader.next("snapshot")
        for _ in 0..<100 where fixture.board.streamCount == 0 { try await Task.sleep(for: .milliseconds(20)) }
        /// The gw-egypt entry of the stream's next `gateways` event.
        func streamedEgypt() async throws -> [String: Any]? {
            let data = try #require(await reader.next("gateways")).data(using: .utf8)!
            let gateways = try JSONSerialization.jsonObject(with: data) as? [[String: Any]]
            return gateways?.first { $0["gateway"] as? String == "gw-egypt" }
        }
        let moved = LiveBoard.LinkAlert(
            code: "gateway-moved", reason: "gw-egypt's 6 links to other gateways shifted each their own way", t: 1_990,
            estimatedPosition: EstimatedPosition(x: 16.5, y: 6.2, withinMetres: 2.4, movedMetres: 7.6))
        fixture.board.setGateways([
            LiveBoard.GatewayHealth(gateway: "gw-entrance", online: true, monitored: true, lastContact: 1, boot: "b1"),
            LiveBoard.GatewayHealth(
                gateway: "gw-egypt", online: true, monitored: true, lastContact: 1, boot: "b1", linkAlert: moved),
        ])
        let streamed = try await streamedEgypt()?["linkAlert"] as? [String: Any]
        #expect(streamed?["code"] as? String == "gateway-moved")
        #expect((streamed?["estimatedPosition"] as? [String: Any])?["movedMetres"] as? Double == 7.6)

        let gateways = try await fixture.get("/api/venue").json["gateways"] as? [[String: Any]] ?? []
        let byID = Dictionary(gateways.map { ($0["id"] as? String ?? "", $0) }, uniquingKeysWith: { a, _ in a })
        let entrance = byID["gw-entrance"]?["gain"] as? [String: Any]
        #expect(entrance?["value"] as? Double == 2.4 && entrance?["sigma"] as? Double == 1.2)
        #expect(entrance?["applied"] as? Bool == true && entrance?["t"] as? Double == 1_990)
        // Its antenna faces one way: the gain is straight ahead, with the fitted front-to-back ratio.
        let ratio = entrance?["frontToBack"] as? [String: Any]
        #expect(ratio?["value"] as? Double == 11.5 && ratio?["sigma"] as? Double == 2)
        #expect((byID["gw-egypt"]?["gain"] as? [String: Any])?["applied"] as? Bool == false)
        #expect((byID["gw-egypt"]?["gain"] as? [String: Any])?["frontToBack"] == nil)
        #expect(byID["gw-rome"]?["gain"] == nil, "a gateway the fit did not reach has no gain")
        #expect(byID["gw-entrance"]?["linkAlert"] == nil)
        let alert = byID["gw-egypt"]?["linkAlert"] as? [String: Any]
        #expect(alert?["code"] as? String == "gateway-moved" && alert?["t"] as? Double == 1_990)
        #expect((alert?["reason"] as? String)?.hasPrefix("gw-egypt's 6 links") == true)
        // Where its links place it now, as the contract's `estimatedPosition`.
        let estimate = alert?["estimatedPosition"] as? [String: Any]
        #expect(
            estimate?["x"] as? Double == 16.5 && estimate?["y"] as? Double == 6.2
                && estimate?["withinMetres"] as? Double == 2.4 && estimate?["movedMetres"] as? Double == 7.6,
            "\(String(describing: estimate))")

        // Its links came back: the alert is cleared, on the stream too.
        fixture.board.setGateways([
            LiveBoard.GatewayHealth(gateway: "gw-entrance", online: true, monitored: true, lastContact: 1, boot: "b1"),
            LiveBoard.GatewayHealth(gateway: "gw-egypt", online: true, monitored: true, lastContact: 1, boot: "b1"),
        ])
        let cleared = try await streamedEgypt()
        #expect(cleared != nil && cleared?["linkAlert"] == nil)
    }

    /// `POST /api/gateways/{gateway}/relearn` asks the hub's desk; a server without one (`beacon-hub serve`) says so,
    /// a gateway the venue lacks is refused by name, and a token is needed when one is set.
    @Test func relearningAGatewaysLinksNeedsTheTokenAVenueGatewayAndTheLiveHub() async throws {
        let fixture = try await DashboardFixture(token: "relearn-token-0123456789", history: false)
        defer { TestTeardown.add { await fixture.stop() } }
        #expect(try await fixture.get("/api/gateways/gw-egypt/relearn", header: false, method: "POST").status == 401)
        let missing = try await fixture.get("/api/gateways/gw-nowhere/relearn", method: "POST")
        let missingError = missing.json["error"] as? [String: Any]
        #expect(missing.status == 404 && missingError?["code"] as? String == "unknown-gateway", "\(missing.text)")
        #expect((missingError?["message"] as? String)?.contains("gw-nowhere") == true)
        let served = try await fixture.get("/api/gateways/gw-egypt/relearn", method: "POST")
        #expect(served.status == 404, "\(served.text)")
        #expect((served.json["error"] as? [String: Any])?["code"] as? String == "no-calibration")
    }

    @Test func liveTagsOccupancyAndRegionStateFollowWhatTheHubPublishes() async throws {
        let fixture = try await DashboardFixture()
        defer { TestTeardown.add { await fixture.stop() } }
        try fixture.place("visitor-1", in: "egypt", minor: 1)
        try fixture.place("visitor-2", in: "egypt", state: .unknown, minor: 2)
        try fixture.place("guide-1", in: nil, state: .outside, minor: 1, major: 2)
        try fixture.occupy("egypt", with: ["visitor-1"], unknown: ["visitor-2"])

        let tags = try await fixture.get("/api/tags").json["tags"] as? [[String: Any]] ?? []
        #expect(tags.map { $0["tag"] as? String } == ["guide-1", "visitor-1", "visitor-2"])
        #expect(tags[1]["zone"] as? String == "egypt" && tags[1]["proximity"] as? String == "near")
        let inEgypt = try await fixture.get("/api/tags?zone=egypt&state=inside").json["tags"] as? [[String: Any]]
        #expect(inEgypt?.map { $0["tag"] as? String } == ["visitor-1"])
        #expect(try await fixture.get("/api/tags/visitor-1").json["state"] as? String == "inside")

        let occupancy = try await fixture.get("/api/occupancy").json
        #expect(occupancy["source"] as? String == "live")
        let zones = occupancy["zones"] as? [[String: Any]] ?? []
        #expect(zones.count == 9)
        let egypt = zones.first { $0["zone"] as? String == "egypt" }
        #expect(egypt?["count"] as? Int == 1 && egypt?["unknown"] as? [String] == ["visitor-2"])

        // CoreLocation's region state: visitors has a tag inside; in greece, none; staff's only tag is outside.
        #expect(try await fixture.get("/api/regions/visitors/state").json["state"] as? String == "inside")
        let greece = try await fixture.get("/api/regions/visitors/state?zone=greece").json
        #expect(greece["state"] as? String == "outside")
        #expect(try await fixture.get("/api/regions/staff/state").json["state"] as? String == "outside")
        try fixture.place("visitor-1", in: "egypt", state: .unknown, minor: 1)
        #expect(try await fixture.get("/api/regions/visitors/state").json["state"] as? String == "unknown")
        #expect(try await fixture.get("/api/regions/nobody/state").status == 404)
    }

    @Test func tagsCarryTheirBatteryTelemetryAndWhereaboutsAsTheHubPublishesThem() async throws {
        let fixture = try await DashboardFixture()
        defer { TestTeardown.add { await fixture.stop() } }
        try fixture.place(
            "guide-1", in: "egypt", gateway: "gw-egypt", at: start,
            beacon: "eddystone-uid:edd1ebeac04e5defa017:000000000001", lastSeenZone: "egypt",
            lastSeenGateway: "gw-egypt",
            battery: TagState.Battery(milliVolts: 2450, level: .low, t: start - 5, trendPerWeek: -35.5),
            telemetry: TagState.TagTelemetry(
                t: start - 5, temperatureCelsius: 21.5, advertisingCount: 123_456, secondsSinceBoot: 86_400),
            adverts: TagState.Adverts(seenPerMinute: 51.2, expectedPerMinute: 60, t: start - 60))
        // An iBeacon sends no telemetry: no battery, no telemetry; last heard a day ago in rome, and missing since.
        try fixture.place(
            "visitor-1", in: nil, state: .outside, at: start, lastSeen: start - 90_000, lastSeenZone: "rome",
            lastSeenGateway: "gw-rome", missing: true)

        let guide = try await fixture.get("/api/tags/guide-1").json
        let battery = guide["battery"] as? [String: Any]
        #expect(battery?["milliVolts"] as? Int == 2450 && battery?["level"] as? String == "low")
        #expect(battery?["t"] as? Double == start - 5 && battery?["trendPerWeek"] as? Double == -35.5)
        let telemetry = guide["telemetry"] as? [String: Any]
        #expect(telemetry?["t"] as? Double == start - 5 && telemetry?["temperatureCelsius"] as? Double == 21.5)
        #expect(
            telemetry?["advertisingCount"] as? Int == 123_456 && telemetry?["secondsSinceBoot"] as? Double == 86_400)
        #expect(guide["lastSeenZone"] as? String == "egypt" && guide["lastSeenGateway"] as? String == "gw-egypt")
        #expect(guide["missing"] == nil, "absent while not missing, as in the tag state")
        let adverts = guide["adverts"] as? [String: Any]
        #expect(adverts?["seenPerMinute"] as? Double == 51.2 && adverts?["expectedPerMinute"] as? Double == 60)
        #expect(adverts?["t"] as? Double == start - 60)
        // Every field it had before stays.
        for field in ["tag", "beacon", "state", "zone", "since", "confidence", "lastSeen", "proximity", "gateways"] {
            #expect(guide[field] != nil, "\(field) is gone")
        }

        let tags = try await fixture.get("/api/tags").json["tags"] as? [[String: Any]] ?? []
        let visitor = tags.first { $0["tag"] as? String == "visitor-1" }
        #expect(visitor?["missing"] as? Bool == true)
        #expect(visitor?["battery"] == nil && visitor?["telemetry"] == nil && visitor?["adverts"] == nil)
        #expect(visitor?["lastSeen"] as? Double == start - 90_000 && visitor?["lastSeenZone"] as? String == "rome")
        #expect(visitor?["lastSeenGateway"] as? String == "gw-rome")

        // The page's first picture of the tags (the stream's snapshot) has them too.
        let reader = try EventStreamReader(port: fixture.port, path: "/api/stream")
        let snapshot = await reader.next("snapshot") ?? ""
        #expect(snapshot.contains("\"milliVolts\":2450") && snapshot.contains("\"missing\":true"), "\(snapshot)")
    }

    /// Five guides: two low batteries, one ok, two without telemetry; three missing, one of them never heard.
    func placeFleet(in fixture: DashboardFixture, now: Double) throws {
        try fixture.place(
            "guide-a", in: "egypt", at: now, lastSeen: now - 60,
            battery: TagState.Battery(milliVolts: 2950, level: .ok, t: now - 60))
        try fixture.place(
            "guide-b", in: "rome", at: now, lastSeen: now - 600,
            battery: TagState.Battery(milliVolts: 2450, level: .low, t: now - 600, trendPerWeek: -12))
        try fixture.place("guide-c", in: nil, state: .outside, at: now, lastSeen: now - 100_000, missing: true)
        try fixture.place(
            "guide-d", in: nil, state: .outside, at: now, lastSeen: now - 200_000,
            battery: TagState.Battery(milliVolts: 2500, level: .low, t: now - 200_000), missing: true)
        try fixture.place("guide-e", in: nil, state: .outside, at: now, neverHeard: true, missing: true)
    }

    @Test func tagsFilterByBatteryLevelAndMissingAndSortByBatteryOrLastSeen() async throws {
        let fixture = try await DashboardFixture()
        defer { TestTeardown.add { await fixture.stop() } }
        try placeFleet(in: fixture, now: start)
        func tags(_ query: String) async throws -> [String] {
            let reply = try await fixture.get("/api/tags\(query)")
            #expect(reply.status == 200, "\(query): \(reply.text)")
            return (reply.json["tags"] as? [[String: Any]] ?? []).compactMap { $0["tag"] as? String }
        }
        #expect(try await tags("") == ["guide-a", "guide-b", "guide-c", "guide-d", "guide-e"])
        #expect(try await tags("?sort=tag") == ["guide-a", "guide-b", "guide-c", "guide-d", "guide-e"])
        #expect(try await tags("?battery=low") == ["guide-b", "guide-d"])
        #expect(try await tags("?battery=ok") == ["guide-a"])
        #expect(try await tags("?missing=true") == ["guide-c", "guide-d", "guide-e"])
        #expect(try await tags("?missing=false") == ["guide-a", "guide-b"])
        #expect(try await tags("?battery=low&missing=true") == ["guide-d"])
        #expect(try await tags("?battery=low&state=inside") == ["guide-b"])
        // Lowest battery first; tags without a reading last, by tag.
        #expect(try await tags("?sort=battery") == ["guide-b", "guide-d", "guide-a", "guide-c", "guide-e"])
        // Longest unheard first: never heard, then the oldest last sighting.
        #expect(try await tags("?sort=lastSeen") == ["guide-e", "guide-d", "guide-c", "guide-b", "guide-a"])
        #expect(try await tags("?missing=true&sort=battery") == ["guide-d", "guide-c", "guide-e"])
        // An empty value counts as absent, as for every parameter.
        #expect(try await tags("?battery=&sort=") == ["guide-a", "guide-b", "guide-c", "guide-d", "guide-e"])
    }

    @Test func theCSVExportListsTheSameTagsWithAHeaderAndQuotedFields() async throws {
        let fixture = try await DashboardFixture()
        defer { TestTeardown.add { await fixture.stop() } }
        try placeFleet(in: fixture, now: start)
        // Tag, zone and gateway ids cannot hold a comma or a quote (A-Z a-z 0-9 . _ : -); a beacon id can: an
        // Eddystone-URL's expanded address.
        try fixture.place(
            "guide-f", in: "egypt", gateway: "gw-egypt", at: start,
            beacon: "eddystone-url:https://example.com/say?\"hi\",all", lastSeenZone: "egypt",
            lastSeenGateway: "gw-egypt",
            battery: TagState.Battery(milliVolts: 2700, level: .ok, t: start, trendPerWeek: -3.25),
            adverts: TagState.Adverts(seenPerMinute: 55.5, expectedPerMinute: 60, t: start))

        let reply = try await fixture.get("/api/tags.csv?sort=battery")
        #expect(reply.status == 200, "\(reply.text)")
        #expect(reply.contentType == "text/csv; charset=utf-8")
        #expect(reply.headers["content-disposition"] == "attachment; filename=\"tags-museum.csv\"")
        let lines = reply.text.components(separatedBy: "\r\n")
        #expect(
            lines.first
                == "tag,beacon,state,zone,lastSeen,lastSeenZone,lastSeenGateway,batteryMilliVolts,batteryLevel,"
                + "batteryTrendPerWeek,missing,advertsSeenPerMinute,advertsExpectedPerMinute")
        #expect(lines.last == "", "every line ends with CRLF")
        #expect(
            lines.dropFirst().dropLast().map { $0.prefix { $0 != "," } }
                == ["guide-b", "guide-d", "guide-f", "guide-a", "guide-c", "guide-e"])
        // start is 2027-01-15T08:00:00Z.
        #expect(
            lines[1]
                == "guide-b,ibeacon:e2c56db5-dffb-48d2-b060-d0f5a71096e0:1:1,inside,rome,2027-01-15T07:50:00Z,,,"
                + "2450,low,-12,false,,")
        #expect(
            lines[3]
                == "guide-f,\"eddystone-url:https://example.com/say?\"\"hi\"\",all\",inside,egypt,2027-01-15T08:00:00Z,"
                + "egypt,gw-egypt,2700,ok,-3.25,false,55.5,60")
        #expect(
            lines[5]
                == "guide-c,ibeacon:e2c56db5-dffb-48d2-b060-d0f5a71096e0:1:1,outside,,2027-01-14T04:13:20Z,,,,,,true,,")
        #expect(lines[6] == "guide-e,ibeacon:e2c56db5-dffb-48d2-b060-d0f5a71096e0:1:1,outside,,,,,,,,true,,")

        // The JSON's filters and order.
        let missing = try await fixture.get("/api/tags.csv?missing=true&sort=lastSeen").text
        #expect(
            missing.components(separatedBy: "\r\n").dropFirst().map { $0.prefix { $0 != "," } }
                == ["guide-e", "guide-d", "guide-c", ""])
        let none = try await fixture.get("/api/tags.csv?zone=greece").text
        #expect(none.components(separatedBy: "\r\n").count == 2, "the header alone: \(none)")
        let head = try await fixture.get("/api/tags.csv", method: "HEAD")
        #expect(head.status == 200 && head.body.isEmpty && head.contentType == "text/csv; charset=utf-8")
    }

    @Test func badTagListParametersAreRefusedNamingTheValuesToSend() async throws {
        let fixture = try await DashboardFixture()
        defer { TestTeardown.add { await fixture.stop() } }
        for (query, message) in [
            ("battery=empty", "battery must be one of low, ok, not \"empty\""),
            ("missing=yes", "missing must be one of true, false, not \"yes\""),
            ("sort=zone", "sort must be one of tag, battery, lastSeen, not \"zone\""),
            ("state=lost", "state must be one of inside, outside, unknown, not \"lost\""),
        ] {
            for path in ["/api/tags", "/api/tags.csv"] {
                let reply = try await fixture.get("\(path)?\(query)")
                #expect(reply.status == 400, "\(path)?\(query)")
                #expect(reply.contentType?.hasPrefix("application/json") == true, "\(path)?\(query)")
                let error = reply.json["error"] as? [String: String]
                #expect(
                    error?["code"] == "bad-request" && error?["message"] == message, "\(path)?\(query): \(reply.text)")
            }
        }
    }

    @Test func aTagsPathPagesThroughItsVisitsInOrder() async throws {
        let fixture = try await DashboardFixture()
        defer { TestTeardown.add { await fixture.stop() } }
        let window = "since=\(Int(start) - 10)&until=\(Int(start) + 1000)"
        let first = try await fixture.get("/api/tags/visitor-1/path?\(window)&limit=2").json
        let visits = first["visits"] as? [[String: Any]] ?? []
        #expect(visits.map { $0["zone"] as? String } == ["entrance", "egypt"])
        #expect(visits.map { $0["duration"] as? Double } == [120, 300])
        #expect(first["nextOffset"] as? Int == 2)
        let second = try await fixture.get("/api/tags/visitor-1/path?\(window)&limit=2&offset=2").json
        let rest = second["visits"] as? [[String: Any]] ?? []
        #expect(rest.map { $0["zone"] as? String } == ["greece", "rome"])
        #expect(rest.last?["exit"] == nil, "rome is still open")
        #expect(second["nextOffset"] == nil)
        // ISO-8601 works as well as unix seconds.
        let iso = try await fixture.get(
            "/api/tags/visitor-2/path?since=2027-01-15T07:59:00Z&until=2027-01-15T09:00:00Z")
        #expect((iso.json["visits"] as? [Any])?.count == 2)
    }

    @Test func occupancyAtATimeAndOverTimeComeFromTheVisits() async throws {
        let fixture = try await DashboardFixture()
        defer { TestTeardown.add { await fixture.stop() } }
        let at = try await fixture.get("/api/occupancy?at=\(Int(start) + 200)").json
        #expect(at["source"] as? String == "history")
        let zones = at["zones"] as? [[String: Any]] ?? []
        #expect(zones.first { $0["zone"] as? String == "egypt" }?["tags"] as? [String] == ["visitor-1", "visitor-2"])
        #expect(zones.first { $0["zone"] as? String == "entrance" }?["count"] as? Int == 0)

        let series = try await fixture.get(
            "/api/occupancy/series?zone=egypt&since=\(Int(start))&until=\(Int(start) + 600)&step=60"
        ).json
        let egypt = (series["zones"] as? [[String: Any]])?.first
        #expect(egypt?["zone"] as? String == "egypt")
        #expect(egypt?["count"] as? [Int] == [0, 0, 0, 2, 1, 1, 1, 1, 0, 0])
    }

    @Test func dwellRoutesAndEventsHaveTheItinerarysKnownAnswers() async throws {
        let fixture = try await DashboardFixture()
        defer { TestTeardown.add { await fixture.stop() } }
        let byZone = try await fixture.get("/api/dwell?by=zone").json["rows"] as? [[String: Any]] ?? []
        let entrance = byZone.first { $0["zone"] as? String == "entrance" }
        #expect(entrance?["visits"] as? Int == 2 && entrance?["total"] as? Double == 180)
        #expect(entrance?["median"] as? Double == 90)
        #expect(byZone.first { $0["zone"] as? String == "egypt" }?["total"] as? Double == 360)

        let hours = try await fixture.get("/api/dwell?by=hour-of-day&zone=egypt").json["rows"] as? [[String: Any]]
        let hour = Calendar.current.component(.hour, from: Date(timeIntervalSince1970: start + 180))
        #expect(hours?.count == 1 && hours?.first?["hourOfDay"] as? Int == hour)
        #expect(hours?.first?["visits"] as? Int == 2)

        let routes = try await fixture.get("/api/routes?length=3").json
        let sequences = (routes["routes"] as? [[String: Any]] ?? []).map { $0["zones"] as? [String] ?? [] }
        #expect(Set(sequences) == [["entrance", "egypt", "greece"], ["egypt", "greece", "rome"]])
        let transitions = routes["transitions"] as? [[String: Any]] ?? []
        let entranceToEgypt = transitions.first {
            $0["from"] as? String == "entrance" && $0["to"] as? String == "egypt"
        }
        #expect(entranceToEgypt?["count"] as? Int == 2 && entranceToEgypt?["medianTransit"] as? Double == 60)

        let events = try await fixture.get("/api/events?limit=5").json
        let newest = events["events"] as? [[String: Any]] ?? []
        #expect(newest.count == 5 && events["nextOffset"] as? Int == 5)
        #expect(newest.first?["zone"] as? String == "rome" && newest.first?["t"] as? Double == start + 660)
        let enters = try await fixture.get("/api/events?type=enter&limit=100").json["events"] as? [Any]
        #expect(enters?.count == 6)
        let visitor2 = try await fixture.get("/api/events?tag=visitor-2&type=enter,exit").json["events"] as? [Any]
        #expect(visitor2?.count == 4)
    }

    @Test func errorsAreJSONNamingWhatToSendInstead() async throws {
        let fixture = try await DashboardFixture()
        defer { TestTeardown.add { await fixture.stop() } }
        let badTime = try await fixture.get("/api/events?since=yesterday")
        #expect(badTime.status == 400)
        let error = badTime.json["error"] as? [String: String]
        #expect(error?["code"] == "bad-request")
        #expect(error?["message"]?.contains("since") == true && error?["message"]?.contains("ISO-8601") == true)
        let badBy = try await fixture.get("/api/dwell?by=week").json["error"] as? [String: String]
        #expect(badBy?["message"]?.contains("hour-of-day") == true)
        #expect(try await fixture.get("/api/events?limit=0").status == 400)
        let future = Int(Date().timeIntervalSince1970) + 3600
        #expect(try await fixture.get("/api/occupancy/series?since=\(future)").status == 400)
        #expect(try await fixture.get("/api/events?since=\(future)").status == 400)
        #expect(try await fixture.get("/api/events?type=teleport").status == 400)
        let missing = try await fixture.get("/api/nothing-here")
        #expect(missing.status == 404 && (missing.json["error"] as? [String: String])?["code"] == "not-found")
        #expect(try await fixture.get("/api/tags/nobody").status == 404)

        let noHistory = try await DashboardFixture(history: false)
        defer { TestTeardown.add { await noHistory.stop() } }
        let reply = try await noHistory.get("/api/dwell?by=zone")
        #expect(reply.status == 404 && (reply.json["error"] as? [String: String])?["code"] == "no-history")
        // Without a database, events are the recent ones kept in memory.
        try noHistory.publish(
            ZoneEvent(type: .enter, tag: "visitor-1", zone: "egypt", t: 5, confidence: 0.9, reason: "test"),
            to: noHistory.topics.events(.enter))
        let recent = try await noHistory.get("/api/events").json
        #expect(recent["source"] as? String == "recent" && (recent["events"] as? [Any])?.count == 1)
    }

    @Test func aTokenGuardsTheAPIAndMetricsButNotThePageOrHealth() async throws {
        let fixture = try await DashboardFixture(token: "s3cret-token-for-tests")
        defer { TestTeardown.add { await fixture.stop() } }
        let without = try await fixture.get("/api/venue", header: false)
        #expect(without.status == 401 && (without.json["error"] as? [String: String])?["code"] == "unauthorized")
        #expect(try await fixture.get("/api/venue", token: "wrong-token-of-same-size").status == 401)
        #expect(try await fixture.get("/api/venue").status == 200)
        #expect(try await fixture.get("/api/venue?access_token=s3cret-token-for-tests", header: false).status == 200)
        // The CSV export too: refused without the token, served with it in the header or (a plain link) the query.
        let csvWithout = try await fixture.get("/api/tags.csv", header: false)
        #expect(csvWithout.status == 401 && (csvWithout.json["error"] as? [String: String])?["code"] == "unauthorized")
        #expect(try await fixture.get("/api/tags.csv").status == 200)
        let csvLink = try await fixture.get(
            "/api/tags.csv?access_token=s3cret-token-for-tests&sort=battery", header: false)
        #expect(csvLink.status == 200 && csvLink.text.hasPrefix("tag,beacon,"))
        #expect(try await fixture.get("/metrics", header: false).status == 401)
        #expect(try await fixture.get("/health", header: false).status == 200)
        #expect(try await fixture.get("/", header: false).status == 200)
    }

    @Test func configuredOriginsMayCallTheAPIFromABrowserWithTheirToken() async throws {
        let fixture = try await DashboardFixture(
            token: "s3cret-token-for-tests", corsOrigins: ["https://intranet.example:8443"])
        defer { TestTeardown.add { await fixture.stop() } }
        let origin = ["Origin": "https://intranet.example:8443"]
        // The preflight needs no token (browsers send none with it).
        let preflight = try await fixture.get(
            "/api/tags", header: false, method: "OPTIONS",
            headers: origin.merging(
                ["Access-Control-Request-Method": "GET", "Access-Control-Request-Headers": "authorization"]
            ) { a, _ in a })
        #expect(preflight.status == 204)
        #expect(preflight.headers["access-control-allow-origin"] == "https://intranet.example:8443")
        #expect(preflight.headers["access-control-allow-headers"]?.contains("Authorization") == true)
        let allowed = try await fixture.get("/api/tags", headers: origin)
        #expect(allowed.status == 200 && allowed.headers["access-control-allow-origin"] == origin["Origin"])
        // A refusal carries the header too, so that the page can read why.
        let refused = try await fixture.get("/api/tags", header: false, headers: origin)
        #expect(refused.status == 401 && refused.headers["access-control-allow-origin"] == origin["Origin"])
        // Another origin gets no CORS header: its page cannot read the answer.
        let other = try await fixture.get("/api/tags", headers: ["Origin": "https://evil.example"])
        #expect(other.headers["access-control-allow-origin"] == nil)
        // HEAD answers like GET, without the body.
        let head = try await fixture.get("/api/venue", method: "HEAD")
        #expect(head.status == 200, "HEAD: \(head.status) \(head.text)")
        #expect(head.body.isEmpty && head.contentType?.hasPrefix("application/json") == true, "\(head.headers)")
    }

    @Test func withoutConfiguredOriginsNoCORSHeaderIsSent() async throws {
        let fixture = try await DashboardFixture()
        defer { TestTeardown.add { await fixture.stop() } }
        let reply = try await fixture.get("/api/tags", headers: ["Origin": "https://intranet.example"])
        #expect(reply.status == 200 && reply.headers["access-control-allow-origin"] == nil)
    }

    @Test func theStreamSendsASnapshotThenEachChange() async throws {
        let fixture = try await DashboardFixture()
        defer { TestTeardown.add { await fixture.stop() } }
        try fixture.place("visitor-1", in: "entrance")
        let reader = try EventStreamReader(port: fixture.port, path: "/api/stream")
        let snapshot = await reader.next("snapshot")
        #expect(snapshot?.contains("\"visitor-1\"") == true)
        // Wait until the stream is registered, then move the tag.
        for _ in 0..<100 where fixture.board.streamCount == 0 { try await Task.sleep(for: .milliseconds(20)) }
        try fixture.place("visitor-1", in: "egypt")
        let moved = await reader.next("tag")
        #expect(moved?.contains("\"zone\":\"egypt\"") == true, "\(moved ?? "nothing")")
        try fixture.publish(
            ZoneEvent(type: .enter, tag: "visitor-1", zone: "egypt", t: 5, confidence: 0.9, reason: "test"),
            to: fixture.topics.events(.enter))
        #expect(await reader.next("event")?.contains("\"type\":\"enter\"") == true)
    }

    @Test func healthSaysWhyTheHubIsNotReadyAndMetricsServeTheRegistry() async throws {
        let fixture = try await DashboardFixture()
        defer { TestTeardown.add { await fixture.stop() } }
        fixture.board.updateHealth {
            $0 = LiveBoard.Health(role: "active", mqttConnected: true, storeWritable: true, uncommittedBatches: 0)
        }
        #expect(try await fixture.get("/health/ready").status == 200)
        fixture.board.updateHealth { $0.storeWritable = false }
        let notReady = try await fixture.get("/health/ready")
        #expect(notReady.status == 503)
        #expect((notReady.json["problems"] as? [String])?.first?.contains("database") == true)
        #expect(try await fixture.get("/health/live").status == 200)

        let descriptor = MetricNameDescriptor(
            namespace: "beacontracker", metricName: "test", unitName: "total", helpText: "a counter of the test")
        fixture.registry.makeCounter(descriptor: descriptor, labels: [("gateway", "gw-a")]).increment(by: Int64(7))
        let metrics = try await fixture.get("/metrics")
        #expect(metrics.contentType?.hasPrefix("text/plain") == true)
        #expect(metrics.text.contains("beacontracker_test_total{gateway=\"gw-a\"} 7"))
    }
}
