import Foundation
import Testing

@testable import BeaconHub

/// `beacon-hub tags`: which of the hub's tags it lists and in what order, and the durations it reads.
@Suite struct TagsToolTests {
    static let now = 1_800_000_000.0

    /// Four guides: one low, one ok, one without telemetry unheard for two days, one never heard.
    static let listing = TagsTool.Listing(
        t: now,
        tags: [
            .init(
                tag: "guide-ok", state: "inside", zone: "egypt", lastSeen: now - 10, lastSeenZone: "egypt",
                lastSeenGateway: "gw-egypt", battery: .init(milliVolts: 2950, level: .ok, t: now - 10), missing: nil,
                adverts: .init(seenPerMinute: 54, expectedPerMinute: 60, t: now - 60)),
            .init(
                tag: "guide-low", state: "inside", zone: "rome", lastSeen: now - 3600, lastSeenZone: "rome",
                lastSeenGateway: "gw-rome", battery: .init(milliVolts: 2480, level: .low, t: now - 3600), missing: nil,
                adverts: nil),
            .init(
                tag: "keys", state: "outside", zone: nil, lastSeen: now - 2 * 86_400, lastSeenZone: "cafe",
                lastSeenGateway: "gw-cafe", battery: nil, missing: true, adverts: nil),
            .init(
                tag: "spare", state: "outside", zone: nil, lastSeen: nil, lastSeenZone: nil, lastSeenGateway: nil,
                battery: nil, missing: true, adverts: nil),
        ])

    static func listed(_ selection: TagsTool.Selection) throws -> [String] {
        let json = TagsTool.render(listing, selection: selection, format: .json, timeZone: .gmt)
        let rows = try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [[String: Any]] ?? []
        return rows.compactMap { $0["tag"] as? String }
    }

    @Test func listsTagsMatchingEitherConditionLowestBatteryFirstThenLongestUnheard() throws {
        #expect(try Self.listed(.init()) == ["guide-low", "guide-ok", "spare", "keys"])
        #expect(try Self.listed(.init(batteryBelow: 2600)) == ["guide-low"])
        #expect(try Self.listed(.init(missingFor: 86_400)) == ["spare", "keys"])
        #expect(try Self.listed(.init(batteryBelow: 2600, missingFor: 1800)) == ["guide-low", "spare", "keys"])
        #expect(try Self.listed(.init(batteryBelow: 2000, missingFor: 3 * 86_400)) == ["spare"])
    }

    @Test func eachRowSaysBatteryLastSeenAndAdvertsHeard() throws {
        let json = TagsTool.render(Self.listing, selection: .init(), format: .json, timeZone: .gmt)
        let rows = try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [[String: Any]] ?? []
        let ok = try #require(rows.first { $0["tag"] as? String == "guide-ok" })
        #expect(ok["battery_mv"] as? Int == 2950 && ok["battery"] as? String == "ok")
        #expect(ok["heard_per_min"] as? Double == 54 && ok["sent_per_min"] as? Double == 60)
        #expect(ok["state"] as? String == "inside egypt" && ok["gateway"] as? String == "gw-egypt")
        let keys = try #require(rows.first { $0["tag"] as? String == "keys" })
        #expect(keys["missing"] as? Bool == true && keys["unheard_hours"] as? Double == 48)
        let table = TagsTool.render(Self.listing, selection: .init(batteryBelow: 2600), format: .table, timeZone: .gmt)
        #expect(table.split(separator: "\n").count == 2 && table.contains("guide-low") && table.contains("2480"))
    }

    @Test func readsTheMissingForDurationAsTheOtherCommandsDo() {
        #expect(TagsTool.parseDuration("1d12h") == 129_600 && TagsTool.parseDuration("45s") == 45)
        #expect(TagsTool.parseDuration("soon") == nil)
    }

    /// hub.yaml's http: gives the address to ask, the loopback for a hub listening everywhere; none for port 0 (a free
    /// port chosen at start: the command then asks for --live).
    @Test func asksTheDashboardAtHubYamlsAddressUnlessItsPortIsChosenAtStart() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("tagstool-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        func url(_ http: String) throws -> String? {
            let path = directory.appendingPathComponent("hub.yaml").path
            try "hub: hub-a\nsite: museum\nhttp: \(http)\n".write(toFile: path, atomically: true, encoding: .utf8)
            return TagsTool.url(of: try HubConfiguration.load(from: path))
        }
        #expect(try url("{ host: 0.0.0.0, port: 8080, tokenFile: token }") == "http://127.0.0.1:8080")
        #expect(try url("{ host: \"::1\", port: 8080 }") == "http://[::1]:8080")
        #expect(try url("{ host: 127.0.0.1, port: 0 }") == nil)
    }
}
