import BeaconMQTT
import BeaconModel
import BrokerTestSupport
import Foundation
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Two sites, one history, one central broker: each site's simulated museum, broker and hub (writing its site into one
/// PostgreSQL database), each site broker bridged to a central TLS broker with the shipped bridge and central files.
/// The central broker sees both sites' events under their prefixes; `--site all` reports are each site's rows; and
/// `beacon-hub serve` answers for every site with the dashboard's token rules.
extension HubServiceTests {
    /// `deploy/mosquitto/bridge.conf` for `site`, pointed at `central` (on loopback, its test CA).
    static func bridgeLines(site: String, password: String, central: MosquittoBroker) throws -> [String] {
        let shipped = try String(
            contentsOf: root.appendingPathComponent("deploy/mosquitto/bridge.conf"), encoding: .utf8)
        return shipped.split(separator: "\n").map(String.init).filter { !$0.hasPrefix("#") }.map { line in
            line.replacingOccurrences(of: "SITE-PASSWORD", with: password)
                .replacingOccurrences(of: "SITE", with: site)
                .replacingOccurrences(of: "central.example:8883", with: "127.0.0.1:\(central.port)")
                .replacingOccurrences(
                    of: "/etc/mosquitto/certs/central-ca.crt", with: central.certificates!.caFile.path)
        }
    }

    @Test func twoSitesShareOneHistoryAndOneCentralBroker() async throws {
        let sites = ["north", "south"]
        var passwords = Dictionary(uniqueKeysWithValues: sites.map { ($0, UUID().uuidString) })
        passwords["central-reader"] = UUID().uuidString
        var centralOptions = MosquittoBroker.Options()
        centralOptions.tls = true
        centralOptions.users = passwords
        centralOptions.aclLines = try String(
            contentsOf: Self.root.appendingPathComponent("deploy/mosquitto/central.acl"), encoding: .utf8
        ).split(separator: "\n").map(String.init)
        let central = try MosquittoBroker(options: centralOptions)
        try await central.start()
        var readerConfiguration = MQTTConfiguration(
            host: "127.0.0.1", port: central.port, clientID: "central-reader-\(UUID().uuidString.prefix(6))")
        readerConfiguration.username = "central-reader"
        readerConfiguration.password = passwords["central-reader"]
        readerConfiguration.tls = MQTTConfiguration.TLS(caFile: central.certificates!.caFile.path)
        let reader = try MQTTClient(configuration: readerConfiguration)
        try await reader.connect()
        let centralEvents = MessageCollector(try await reader.subscribe(to: "beacontracker/+/events/#"))
        let centralStates = MessageCollector(try await reader.subscribe(to: "beacontracker/+/tags/+/state"))

        let server = try await SharedPostgres.server()
        let database = try await server.createDatabase()
        var brokers: [MosquittoBroker] = []
        var hubs: [Programs.Running] = []
        var sims: [Programs.Running] = []
        var configs: [String: String] = [:]
        for site in sites {
            var options = MosquittoBroker.Options()
            options.extraConfig = try Self.bridgeLines(site: site, password: passwords[site]!, central: central)
            let broker = try MosquittoBroker(options: options)
            try await broker.start()
            brokers.append(broker)
            let venue = directory.appendingPathComponent("\(site).yaml")
            try String(contentsOf: Self.root.appendingPathComponent("config/venues/museum.yaml"), encoding: .utf8)
                .replacingOccurrences(of: "\nsite: museum\n", with: "\nsite: \(site)\n")
                .write(to: venue, atomically: true, encoding: .utf8)
            let siteDirectory = directory.appendingPathComponent(site)
            try FileManager.default.createDirectory(at: siteDirectory, withIntermediateDirectories: true)
            let config = try Self.writePostgresMuseumHubConfig(
                in: siteDirectory, broker, server, database: database, site: site, venue: venue.path)
            configs[site] = config
            let (_, statuses) = try await watch(broker, "beacontracker/\(site)/hub/status")
            let hub = try Programs.Running("beacon-hub", ["run", "--config", config])
            hubs.append(hub)
            // Ingesting before the site's agents start: what they publish before is only in their outboxes.
            #expect(
                await statuses.first(within: .seconds(60)) { $0.text.contains("\"online\"") } != nil,
                "\(site) hub: \(hub.text)")
            sims.append(
                try Programs.Running(
                    "beacon-sim",
                    [
                        "run", venue.path, "--mqtt", "127.0.0.1:\(broker.port)", "--duration", "600", "--outbox-dir",
                        siteDirectory.appendingPathComponent("outboxes").path,
                    ]))
        }
        // The museums run until each site has closed visits in the history (or three minutes: under load a hub's
        // first decisions take a while), then stop as a SIGTERM stops them (their agents flush their outboxes).
        let history = try Self.history(server, database)
        let enough = ContinuousClock.now.advanced(by: .seconds(180))
        var closed: [Int] = []
        repeat {
            try await Task.sleep(for: .seconds(1))
            closed = []
            for site in sites {
                closed.append(
                    try await history.integer(
                        "SELECT count(*) FROM visits WHERE site = '\(site)' AND exit IS NOT NULL") ?? 0)
            }
        } while closed.contains { $0 < 2 } && ContinuousClock.now < enough
        #expect(!closed.contains { $0 < 2 }, "closed visits per site: \(closed)")
        try history.close()
        for (sim, site) in zip(sims, sites) {
            sim.signal(SIGTERM)
            #expect(await sim.waitForExit(timeout: .seconds(60)) == 0, "\(site) sim: \(sim.text)")
        }
        try await Task.sleep(for: .seconds(2))
        for (hub, site) in zip(hubs, sites) {
            hub.signal(SIGTERM)
            #expect(await hub.waitForExit(timeout: .seconds(60)) == 0, "\(site) hub: \(hub.text)")
        }

        // The central broker saw both sites' events and states, each under its own site's prefix only.
        for site in sites {
            #expect(
                await centralEvents.first(within: .seconds(20)) { $0.topic.hasPrefix("beacontracker/\(site)/events/") }
                    != nil, "no \(site) events reached the central broker")
            #expect(centralStates.messages.contains { $0.topic.hasPrefix("beacontracker/\(site)/tags/") })
        }
        #expect(
            centralEvents.messages.allSatisfy { message in
                sites.contains { message.topic.hasPrefix("beacontracker/\($0)/") }
            })

        // `--site all` is each site's rows, as `--site NAME` gives them, under a site column.
        let config = try #require(configs["north"])
        // A command's CSV lines (its log lines, on standard error, arrive in the same file here).
        func csv(_ arguments: [String]) async throws -> [String] {
            let (status, output) = try await Programs.run("beacon-hub", arguments + ["--format", "csv"])
            #expect(status == 0, "\(arguments): \(output)")
            let lines = output.split(separator: "\n").map(String.init)
            let logged = lines.filter { $0.contains(#/^\d{4}-\d\d-\d\dT[0-9:]+[+-]\d{4} [a-z]+ /#) }
            #expect(logged.isEmpty, "\(arguments) logged: \(logged)")
            return lines.filter { !logged.contains($0) }
        }
        func dwell(_ site: String) async throws -> [String] {
            try await csv(["dwell", "--by", "zone", "--config", config, "--site", site])
        }
        let all = try await dwell("all")
        #expect(all.first == "site,zone,visits,tags,total,mean,median,p90")
        var perSite: [String] = []
        for site in sites { perSite += try await dwell(site).dropFirst().map { "\(site),\($0)" } }
        #expect(all.dropFirst().sorted() == perSite.sorted())
        // Both sites' visits are in the one history (open ones too: under load a short run may close none of a site's).
        let visitLines = try await csv(["visits", "--config", config, "--site", "all"])
        let visitSites = Set(visitLines.dropFirst().map { String($0.prefix(while: { $0 != "," })) })
        #expect(visitSites == ["north", "south"], "\(visitLines.prefix(3)) … \(visitLines.suffix(3))")
        func visits(_ rows: [String]) -> Int { rows.compactMap { Int($0.split(separator: ",")[2]) }.reduce(0, +) }
        print(
            "two sites: \(visits(Array(all.dropFirst()))) closed visits across both sites in one PostgreSQL history; "
                + "the central broker saw \(centralEvents.messages.count) events")

        // The analytics process: every site's history over HTTP, with the dashboard's token, as the read-only role
        // docs/operations.md prescribes (it may read every table and write none).
        let readerPassword = UUID().uuidString
        let readerRole = "beacon_read_\(database)"
        try await server.psql(
            "CREATE ROLE \(readerRole) LOGIN PASSWORD '\(readerPassword)'; GRANT pg_read_all_data TO \(readerRole);")
        let readerPasswordFile = directory.appendingPathComponent("reader-password")
        try readerPassword.write(to: readerPasswordFile, atomically: true, encoding: .utf8)
        func asReader(_ config: String) throws -> String {
            try String(contentsOfFile: config, encoding: .utf8)
                .replacingOccurrences(of: "//\(server.user)@", with: "//\(readerRole)@")
                .replacingOccurrences(of: server.passwordFile.path, with: readerPasswordFile.path)
        }
        // Its reports on standard output are the data alone: JSON a consumer can parse (errors go to standard
        // error, dropped here).
        func standardOutput(_ arguments: [String]) async throws -> (status: Int32, output: String) {
            let running = try Programs.Running(
                "beacon-hub", arguments, prefix: ["/bin/sh", "-c", "exec \"$0\" \"$@\" 2>/dev/null"])
            let status = await running.waitForExit(timeout: .seconds(30))
            return (status ?? -1, running.text)
        }
        let readerConfig = directory.appendingPathComponent("reader.yaml")
        try asReader(config).write(to: readerConfig, atomically: true, encoding: .utf8)
        let readerDwell = try await standardOutput(
            ["dwell", "--by", "zone", "--config", readerConfig.path, "--site", "all", "--format", "json"])
        #expect(readerDwell.status == 0, "dwell as \(readerRole): \(readerDwell.output)")
        let readerRows = try JSONSerialization.jsonObject(with: Data(readerDwell.output.utf8)) as? [[String: Any]]
        #expect(readerRows?.count == perSite.count, "\(readerDwell.output)")
        // A database without the schema: the reader says so (on standard error), creates nothing, prints no data.
        let empty = try await server.createDatabase()
        let emptyConfig = directory.appendingPathComponent("empty.yaml")
        try asReader(config).replacingOccurrences(of: "/\(database)\n", with: "/\(empty)\n").write(
            to: emptyConfig, atomically: true, encoding: .utf8)
        let noHistory = try await standardOutput(
            ["dwell", "--by", "zone", "--config", emptyConfig.path, "--format", "json"])
        #expect(noHistory.status == 66 && noHistory.output.isEmpty, "\(noHistory)")
        let (_, noHistoryError) = try await Programs.run(
            "beacon-hub", ["dwell", "--by", "zone", "--config", emptyConfig.path, "--format", "json"])
        #expect(noHistoryError.contains("holds no BeaconTracker history"), "\(noHistoryError)")
        let tables = try await server.psql(
            "SELECT count(*) FROM pg_tables WHERE schemaname = 'public'", database: empty)
        #expect(tables == "0", "the reader created tables")

        let token = "serve-token-\(UUID().uuidString)"
        let tokenFile = directory.appendingPathComponent("token")
        try token.write(to: tokenFile, atomically: true, encoding: .utf8)
        chmod(tokenFile.path, 0o600)
        let serveConfig = directory.appendingPathComponent("serve.yaml")
        try
            (try asReader(config)
            + "\nhttp: { host: 127.0.0.1, port: 0, tokenFile: \(tokenFile.path) }\n").write(
                to: serveConfig, atomically: true, encoding: .utf8)
        let serve = try Programs.Running("beacon-hub", ["serve", "--config", serveConfig.path])
        var base: String?
        let deadline = ContinuousClock.now.advanced(by: .seconds(60))
        while base == nil, ContinuousClock.now < deadline {
            base = serve.text.firstMatch(of: /url=(http:\/\/127\.0\.0\.1:[0-9]+)\//).map { String($0.1) }
            try await Task.sleep(for: .milliseconds(100))
        }
        let url = try #require(base, "serve never listened: \(serve.text)")
        func get(_ path: String, token: String?) async throws -> (Int, Any?) {
            var request = URLRequest(url: URL(string: url + path)!)
            if let token { request.setValue("Bearer \(token)", forHTTPHeaderField: "Authorization") }
            let (data, response) = try await URLSession.shared.data(for: request)
            return ((response as? HTTPURLResponse)?.statusCode ?? 0, try? JSONSerialization.jsonObject(with: data))
        }
        #expect(try await get("/api/sites", token: nil).0 == 401)
        let (status, body) = try await get("/api/sites", token: token)
        #expect(status == 200 && (body as? [String: Any])?["sites"] as? [String] == sites)
        let (_, dwellBody) = try await get("/api/dwell?by=zone&site=all", token: token)
        let rows = (dwellBody as? [String: Any])?["rows"] as? [[String: Any]] ?? []
        #expect(rows.count == perSite.count)
        #expect(Set(rows.compactMap { $0["site"] as? String }) == Set(perSite.map { String($0.prefix { $0 != "," }) }))
        let (southStatus, southBody) = try await get("/api/dwell?by=zone&site=south", token: token)
        let southRows = (southBody as? [String: Any])?["rows"] as? [[String: Any]] ?? []
        #expect(southStatus == 200 && southRows.count == perSite.filter { $0.hasPrefix("south,") }.count)
        #expect(try await get("/api/dwell?site=east", token: token).0 == 404)
        let (eventsStatus, _) = try await get("/api/events?site=north", token: token)
        #expect(eventsStatus == 200, "serve as \(readerRole): \(serve.text.suffix(2000))")
        #expect(!serve.text.contains("permission denied"), "\(serve.text.suffix(2000))")
        serve.signal(SIGTERM)
        #expect(await serve.waitForExit(timeout: .seconds(30)) == 0, "serve: \(serve.text)")
        await reader.shutdown()
        for broker in brokers { await broker.stop() }
        await central.stop()
    }
}
