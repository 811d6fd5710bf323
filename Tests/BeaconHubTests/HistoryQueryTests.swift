import BeaconConfig
import BeaconHub
import BeaconModel
import BeaconStore
import BrokerTestSupport
import Foundation
import Simulator
import Testing
import ZoneInference

/// Replays written into the history database, read back with known answers.
@Suite struct HistoryQueryTests {
    static let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()
    /// Deleted with the suite's instance, which Swift Testing drops once the test has ended, pass or fail.
    let temporaryDirectory: TemporaryDirectory
    var directory: URL { temporaryDirectory.url }

    init() throws {
        temporaryDirectory = try TemporaryDirectory(prefix: "history")
    }

    func file(_ name: String) -> String { directory.appendingPathComponent(name).path }

    func replay(_ configuration: HubConfiguration, lines: [SightingLine]) throws -> HubStore {
        let input = file("sightings.jsonl")
        try lines.map { try ContractCoding.encodeLine($0) }.joined(separator: "\n")
            .write(toFile: input, atomically: true, encoding: .utf8)
        let store = try HubStore(path: file("hub.db"), tripGapSeconds: configuration.store?.tripGapSeconds ?? 600)
        try store.adoptNow(site: configuration.site.rawValue, keyID: nil)
        _ = try ReplayTool.run(
            engine: try configuration.makeEngine(), inputPath: input, eventsPath: nil,
            history: ReplayTool.History(store: store, pseudonyms: .none, rawSightings: false, commitRows: 500))
        return store
    }

    @Test func replayedSimulatorHistoryAddsUp() async throws {
        let configuration = try HubConfiguration.load(
            from: Self.repository.appendingPathComponent("config/hub.yaml").path)
        var simulation = VenueSimulation(venue: try #require(configuration.loadedVenue), seed: 5, start: 1_800_000_000)
        var lines: [SightingLine] = []
        simulation.run(until: 1_800_000_000 + 1800, sighting: { lines.append($0) }, truth: { _ in })
        let store = try replay(configuration, lines: lines)

        let visits = try await store.visits(HubStore.VisitFilter())
        #expect(visits.count > 100)
        // Per tag: visits in order, never overlapping, at most one still open (the last).
        for (_, list) in Dictionary(grouping: visits, by: \.tag) {
            for (earlier, later) in zip(list, list.dropFirst()) {
                #expect(earlier.exit != nil && earlier.exit! <= later.enter)
            }
        }
        // Every enter event (all regions notify here) opened exactly one visit.
        #expect(
            try await store.database.fetchInteger("SELECT count(*) FROM events WHERE type = 'enter'") == visits.count)

        // Dwell totals equal the sums of the visits' durations, whichever way they are grouped.
        let closed = visits.filter { $0.duration != nil }
        var byZone: [String: (count: Int, total: Double)] = [:]
        for visit in closed {
            byZone[visit.zone, default: (0, 0)].count += 1
            byZone[visit.zone, default: (0, 0)].total += visit.duration!
        }
        for grouping in HubStore.DwellGrouping.allCases {
            var summed: [String: (count: Int, total: Double)] = [:]
            for row in try await store.dwell(by: grouping) where grouping != .tag {
                summed[row.zone!, default: (0, 0)].count += row.statistics.visits
                summed[row.zone!, default: (0, 0)].total += row.statistics.total
            }
            if grouping == .tag {
                let total = try await store.dwell(by: .tag).reduce(0) { $0 + $1.statistics.total }
                #expect(abs(total - closed.reduce(0) { $0 + $1.duration! }) < 1e-6)
                continue
            }
            #expect(Set(summed.keys) == Set(byZone.keys), "\(grouping)")
            for (zone, expected) in byZone {
                #expect(summed[zone]?.count == expected.count, "\(grouping) \(zone)")
                #expect(abs((summed[zone]?.total ?? -1) - expected.total) < 1e-6, "\(grouping) \(zone)")
            }
        }
        // Occupancy at the end of the recording is exactly the tags the restart state holds in zones.
        let end = try #require(lines.last).t
        let occupancy = try await store.occupancy(at: end)
        let live = try await store.recover().liveTags
        #expect(
            occupancy.flatMap { zone in zone.tags.map { "\($0)@\(zone.zone)" } }.sorted()
                == live.map { "\($0.tag)@\($0.zone)" }.sorted())
    }

    @Test func theRouteOfAScriptedItineraryComesOutInOrder() async throws {
        try HubPersistenceTests.rowVenue.write(toFile: file("venue.yaml"), atomically: true, encoding: .utf8)
        let beacon = HubPersistenceTests.beacon
        try """
        site: row
        venue: venue.yaml
        tags: [{ id: walker, beacon: "\(beacon)" }]
        store: { path: hub.db }
        """.write(toFile: file("hub.yaml"), atomically: true, encoding: .utf8)
        let configuration = try HubConfiguration.load(from: file("hub.yaml"))
        // Sixty seconds in each room a, b, c, d, heard by its gateway; then the walker leaves.
        var lines: [SightingLine] = []
        for (index, gateway) in ["gw-a", "gw-b", "gw-c", "gw-d"].enumerated() {
            for second in 0..<60 {
                lines.append(
                    SightingLine(
                        t: 1_800_000_000 + Double(index * 60 + second), gateway: GatewayID(unchecked: gateway),
                        beacon: beacon, rssi: -60, txPower: -59))
            }
        }
        lines.append(SightingLine(t: 1_800_000_600, gateway: "gw-a", beacon: "ibeacon:other:1:1", rssi: -90))
        let store = try replay(configuration, lines: lines)

        let visits = try await store.visits(HubStore.VisitFilter(tag: "walker"))
        #expect(visits.map(\.zone) == ["a", "b", "c", "d"])
        for visit in visits.dropFirst().dropLast() { #expect(abs(visit.duration! - 60) <= 5) }
        #expect(try await store.routes(top: 3, length: 4).map(\.zones) == [["a", "b", "c", "d"]])
        #expect(try await store.routes(top: 5, length: 2).map(\.zones) == [["a", "b"], ["b", "c"], ["c", "d"]])
        let matrix = try await store.transitionMatrix()
        #expect(matrix.map { "\($0.from)>\($0.to)" }.sorted() == ["a>b", "b>c", "c>d"])
        #expect(matrix.allSatisfy { $0.count == 1 && $0.medianTransit == 0 })
        try store.close()

        let source = try HistoryTool.Source.resolve(db: nil, configPath: file("hub.yaml"))
        let table = try await HistoryTool.routes(source, top: 1, length: 4, since: nil, until: nil, format: .table)
        #expect(table.contains("a → b → c → d  1"))
        let json = try await HistoryTool.routes(source, top: 1, length: 4, since: nil, until: nil, format: .json)
        let object = try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any]
        let routes = object?["routes"] as? [[String: Any]]
        #expect((routes?.first?["route"] as? [String]) == ["a", "b", "c", "d"])
        let csv = try await HistoryTool.visits(
            source, tag: "walker", zone: "b", since: nil, until: nil, limit: nil, format: .csv, timeZone: .gmt)
        #expect(csv.split(separator: "\n").first == "tag,zone,enter,exit,duration,confidence,suspect")
        #expect(csv.split(separator: "\n").count == 2 && csv.contains("walker,b,2027-01-15T08:0"))
    }

    @Test func timesAreReadAsUnixSecondsOrISO8601() throws {
        let utc = TimeZone.gmt
        for text in [
            "1800000000", "2027-01-15T08:00:00Z", "2027-01-15T09:00:00+01:00", "2027-01-15T08:00:00.000Z",
            "2027-01-15T08:00", "2027-01-15 08:00:00",
        ] {
            #expect(try HistoryTool.parseTime(text, timeZone: utc) == 1_800_000_000, "\(text)")
        }
        #expect(try HistoryTool.parseTime("2027-01-15", timeZone: utc) == 1_800_000_000 - 8 * 3600)
        #expect(HistoryTool.formatTime(1_800_000_000, timeZone: utc) == "2027-01-15T08:00:00Z")
        #expect {
            _ = try HistoryTool.parseTime("yesterday")
        } throws: { error in
            "\(error)".contains("unix seconds") && "\(error)".contains("ISO-8601")
        }
    }
}
