import BeaconStore
import Foundation
import Logging
import PostgresNIO

extension PostgresHistory.Writer {
    /// Writes `journal` in one transaction (the SQLite store's `write`, in PostgreSQL's terms: rows in bulk through
    /// `unnest`, a tag's move as a few statements), returning the acknowledgements that moved.
    func commit(_ journal: HubJournal, at now: Double) async throws -> HubStore.CommitResult {
        var times = journal.moves.map(\.t) + journal.events.map(\.t) + journal.statuses.map(\.t)
        times += journal.sightings.map(\.t)
        try await ensurePartitions(covering: times)
        let site = self.site
        let tripGap = tripGapSeconds
        let logger = self.logger
        return try await transaction { connection in
            var result = HubStore.CommitResult(rows: journal.rowCount)
            var touchedBoots: Set<[String]> = []
            if !journal.batches.isEmpty {
                let batches = journal.batches
                var inserted = 0
                for try await _ in try await connection.query(
                    """
                    INSERT INTO batches (site, gateway, boot, seq, received, committed, sightings)
                    SELECT \(site), g, b, s, r, \(now), n
                    FROM unnest(\(batches.map(\.gateway)), \(batches.map(\.boot)), \(batches.map(\.seq)),
                                \(batches.map(\.received)), \(batches.map { Int64($0.sightings) })) AS u(g, b, s, r, n)
                    ON CONFLICT DO NOTHING RETURNING 1
                    """, logger: logger
                ) { inserted += 1 }
                result.duplicateBatches = batches.count - inserted
                var firstSeen: [[String]: Double] = [:]
                for batch in batches where firstSeen[[batch.gateway, batch.boot]] == nil {
                    firstSeen[[batch.gateway, batch.boot]] = batch.received
                }
                let boots = firstSeen.sorted { $0.key.lexicographicallyPrecedes($1.key) }
                try await connection.query(
                    """
                    INSERT INTO boots (site, gateway, boot, first_seen)
                    SELECT \(site), g, b, t FROM unnest(\(boots.map { $0.key[0] }), \(boots.map { $0.key[1] }),
                                                        \(boots.map(\.value))) AS u(g, b, t)
                    ON CONFLICT DO NOTHING
                    """, logger: logger)
                touchedBoots.formUnion(firstSeen.keys)
            }
            for lost in journal.lost {
                try await connection.query(
                    """
                    INSERT INTO lost_batches (site, gateway, boot, first, last, t)
                    VALUES (\(site), \(lost.gateway), \(lost.boot), \(lost.first), \(lost.last), \(lost.t))
                    """, logger: logger)
                try await Self.insertBoot(site, lost.gateway, lost.boot, lost.t, connection, logger)
                touchedBoots.insert([lost.gateway, lost.boot])
            }
            for adopted in journal.adopted {
                try await Self.insertBoot(site, adopted.gateway, adopted.boot, adopted.t, connection, logger)
                try await connection.query(
                    """
                    UPDATE boots SET acked = greatest(acked, \(adopted.seq))
                    WHERE site = \(site) AND gateway = \(adopted.gateway) AND boot = \(adopted.boot)
                    """, logger: logger)
                touchedBoots.insert([adopted.gateway, adopted.boot])
            }
            for status in journal.statuses {
                try await connection.query(
                    """
                    INSERT INTO gateway_status (site, gateway, t, state, boot, reason, source)
                    VALUES (\(site), \(status.gateway), \(status.t), \(status.state), \(status.boot), \(status.reason),
                    \(status.source))
                    """, logger: logger)
                try await connection.query(
                    """
                    UPDATE gateways SET online = \(status.state == "online"), boot = coalesce(\(status.boot), boot),
                    last_change = \(status.t) WHERE site = \(site) AND id = \(status.gateway)
                    """, logger: logger)
            }
            var dirty: Set<DwellKey> = []
            for move in journal.moves {
                try await Self.apply(move, site: site, tripGap: tripGap, dirty: &dirty, connection, logger)
            }
            if !journal.events.isEmpty {
                try await Self.insert(journal.events, site: site, connection, logger)
            }
            if !journal.sightings.isEmpty {
                let sightings = journal.sightings
                try await connection.query(
                    """
                    INSERT INTO sightings (site, t, gateway, beacon, rssi, tx_power)
                    SELECT \(site), t, g, b, r, nullif(p, -32768)
                    FROM unnest(\(sightings.map(\.t)), \(sightings.map(\.gateway)), \(sightings.map(\.beaconKey)),
                                \(sightings.map { Int64($0.rssi) }), \(sightings.map { Int64($0.txPower ?? -32768) }))
                         AS u(t, g, b, r, p)
                    """, logger: logger)
            }
            // One row per key, or the upserts below refuse the statement (the same tag saved twice between commits).
            var health = journal
            health.keepLatestHealth()
            for row in health.tagHealth {
                try await connection.query(
                    """
                    INSERT INTO tag_health (site, tag, region, last_seen, last_zone, last_gateway, battery_low, missing,
                    tlm_t, milli_volts, temperature, advertising_count, uptime)
                    VALUES (\(site), \(row.liveTag), \(row.region), \(row.lastSeen), \(row.lastZone), \(row.lastGateway),
                    \(row.batteryLow), \(row.missing), \(row.tlmT), \(row.milliVolts.map { Int32(clamping: $0) }),
                    \(row.temperature), \(row.advertisingCount), \(row.uptime))
                    ON CONFLICT (site, tag) DO UPDATE SET region = excluded.region, last_seen = excluded.last_seen,
                    last_zone = excluded.last_zone, last_gateway = excluded.last_gateway,
                    battery_low = excluded.battery_low, missing = excluded.missing, tlm_t = excluded.tlm_t,
                    milli_volts = excluded.milli_volts, temperature = excluded.temperature,
                    advertising_count = excluded.advertising_count, uptime = excluded.uptime
                    """, logger: logger)
            }
            if !health.batteryReadings.isEmpty {
                let readings = health.batteryReadings
                try await connection.query(
                    """
                    INSERT INTO battery_hourly (site, tag, hour, milli_volts)
                    SELECT \(site), k, h, m FROM unnest(\(readings.map(\.key)), \(readings.map(\.hour)),
                                                        \(readings.map { Int32(clamping: $0.milliVolts) })) AS u(k, h, m)
                    ON CONFLICT (site, tag, hour) DO UPDATE SET milli_volts = excluded.milli_volts
                    """, logger: logger)
            }
            for key in dirty.sorted(by: { ($0.zone, $0.hour) < ($1.zone, $1.hour) }) {
                try await Self.recomputeDwell(key, connection, logger)
            }
            result.acks = try await Self.advanceAcks(
                site: site, boots: touchedBoots.sorted(by: { $0.lexicographicallyPrecedes($1) }), connection, logger)
            return result
        }
    }

    /// A site's zone and hour (unix seconds of its start) of `dwell_hourly`.
    struct DwellKey: Hashable, Sendable {
        var site: String
        var zone: String
        var hour: Int64
    }

    static func hour(of t: Double) -> Int64 { Int64((t / 3600).rounded(.down)) * 3600 }

    static func insertBoot(
        _ site: String, _ gateway: String, _ boot: String, _ t: Double, _ connection: PostgresConnection,
        _ logger: Logger
    ) async throws {
        try await connection.query(
            """
            INSERT INTO boots (site, gateway, boot, first_seen) VALUES (\(site), \(gateway), \(boot), \(t))
            ON CONFLICT DO NOTHING
            """, logger: logger)
    }

    /// Closes the tag's open visit, records the transition from its previous zone, opens the next visit, and keeps
    /// `tags` and `live_tags` (the SQLite store's `apply`).
    static func apply(
        _ move: HubJournal.Move, site: String, tripGap: Double, dirty: inout Set<DwellKey>,
        _ connection: PostgresConnection, _ logger: Logger
    ) async throws {
        for try await (id, zone, enter) in try await connection.query(
            "DELETE FROM open_visits WHERE site = \(site) AND tag = \(move.key) RETURNING id, zone, enter",
            logger: logger
        ).decode((Int64, String, Double).self) {
            let exit = max(move.t, enter)
            try await connection.query(
                """
                UPDATE visits SET exit = \(exit), duration = \(exit - enter), confidence = least(confidence,
                \(move.confidence)) WHERE id = \(id) AND enter = \(enter)
                """, logger: logger)
            dirty.insert(DwellKey(site: site, zone: zone, hour: hour(of: enter)))
        }
        try await connection.query(
            """
            INSERT INTO tags AS old (site, tag, beacon, region, first_seen, last_change)
            VALUES (\(site), \(move.key), \(move.beaconKey), \(move.region), \(move.t), \(move.t))
            ON CONFLICT (site, tag) DO UPDATE SET last_change = greatest(old.last_change, excluded.last_change),
            region = coalesce(excluded.region, old.region)
            """, logger: logger)
        guard let zone = move.to else {
            try await connection.query(
                "DELETE FROM live_tags WHERE site = \(site) AND tag = \(move.liveTag)", logger: logger)
            return
        }
        // A visit never starts before the tag's previous one ended (a restarted hub re-decides from resent batches).
        var enter = move.t
        for try await (previousZone, left) in try await connection.query(
            """
            SELECT zone, exit FROM visits WHERE site = \(site) AND tag = \(move.key) AND exit IS NOT NULL
            ORDER BY enter DESC LIMIT 1
            """, logger: logger
        ).decode((String, Double).self) {
            enter = max(enter, left)
            if enter - left <= tripGap {
                try await connection.query(
                    """
                    INSERT INTO transitions (site, tag, from_zone, to_zone, "left", entered, transit)
                    VALUES (\(site), \(move.key), \(previousZone), \(zone), \(left), \(enter), \(enter - left))
                    """, logger: logger)
            }
        }
        try await connection.query(
            """
            WITH opened AS (
                INSERT INTO visits (site, tag, zone, enter, confidence)
                VALUES (\(site), \(move.key), \(zone), \(enter), \(move.confidence)) RETURNING id, enter
            )
            INSERT INTO open_visits (site, tag, id, zone, enter) SELECT \(site), \(move.key), id, \(zone), enter
            FROM opened
            """, logger: logger)
        try await connection.query(
            """
            INSERT INTO live_tags (site, tag, beacon, state, zone, since, confidence, updated)
            VALUES (\(site), \(move.liveTag), \(move.beacon), 'inside', \(zone), \(enter), \(move.confidence),
            \(enter))
            ON CONFLICT (site, tag) DO UPDATE SET beacon = excluded.beacon, state = excluded.state,
            zone = excluded.zone, since = excluded.since, confidence = excluded.confidence, updated = excluded.updated
            """, logger: logger)
    }

    /// Inserts events in bulk, then what an `unknown` or `suspect` event changes.
    static func insert(
        _ events: [HubJournal.Event], site: String, _ connection: PostgresConnection, _ logger: Logger
    ) async throws {
        // unnest takes no optional elements: each nullable column travels with a "present" flag.
        func text(_ values: [String?]) -> ([String], [Bool]) { (values.map { $0 ?? "" }, values.map { $0 != nil }) }
        func number(_ values: [Double?]) -> ([Double], [Bool]) { (values.map { $0 ?? 0 }, values.map { $0 != nil }) }
        let (tags, hasTag) = text(events.map(\.key))
        let (zones, hasZone) = text(events.map(\.zone))
        let (previous, hasPrevious) = text(events.map(\.previousZone))
        let (dwells, hasDwell) = number(events.map(\.dwell))
        let (regions, hasRegion) = text(events.map(\.region))
        let (codes, hasCode) = text(events.map(\.code))
        let (gateways, hasGateway) = text(events.map(\.gateway))
        try await connection.query(
            """
            INSERT INTO events (site, t, type, tag, zone, previous_zone, confidence, dwell, region, code, gateway,
                                reason)
            SELECT \(site), t, ty,
                   CASE WHEN ht THEN tg END, CASE WHEN hz THEN z END, CASE WHEN hp THEN p END, c,
                   CASE WHEN hd THEN d END, CASE WHEN hr THEN r END, CASE WHEN hc THEN co END,
                   CASE WHEN hg THEN g END, re
            FROM unnest(\(events.map(\.t)), \(events.map(\.type)), \(tags), \(hasTag), \(zones), \(hasZone),
                        \(previous), \(hasPrevious), \(events.map(\.confidence)), \(dwells), \(hasDwell), \(regions),
                        \(hasRegion), \(codes), \(hasCode), \(gateways), \(hasGateway), \(events.map(\.reason)))
                 AS u(t, ty, tg, ht, z, hz, p, hp, c, d, hd, r, hr, co, hc, g, hg, re)
            """, logger: logger)
        for event in events {
            switch event.type {
            case "unknown":
                // Still in its zone as far as anyone knows: the visit stays open; a restart restores "unknown".
                if let tag = event.liveTag {
                    try await connection.query(
                        """
                        UPDATE live_tags SET state = 'unknown', updated = \(event.t)
                        WHERE site = \(site) AND tag = \(tag) AND since <= \(event.t)
                        """, logger: logger)
                }
            case "suspect":
                if let key = event.key {
                    try await connection.query(
                        """
                        UPDATE visits SET suspect = true WHERE site = \(site) AND tag = \(key) AND enter <= \(event.t)
                        AND (exit IS NULL OR exit >= \(event.t))
                        """, logger: logger)
                }
            default: break
            }
        }
    }

    /// Recomputes one `dwell_hourly` row from the closed visits that entered in that hour (statistics computed as the
    /// SQLite store computes them: `DwellStatistics`).
    static func recomputeDwell(_ key: DwellKey, _ connection: PostgresConnection, _ logger: Logger) async throws {
        var visits: [(tag: String, duration: Double)] = []
        for try await (tag, duration) in try await connection.query(
            """
            SELECT tag, duration FROM visits WHERE site = \(key.site) AND zone = \(key.zone)
            AND enter >= \(Double(key.hour)) AND enter < \(Double(key.hour + 3600)) AND exit IS NOT NULL
            """, logger: logger
        ).decode((String, Double).self) { visits.append((tag, duration)) }
        guard let statistics = DwellStatistics(visits) else {
            try await connection.query(
                """
                DELETE FROM dwell_hourly WHERE site = \(key.site) AND zone = \(key.zone) AND hour = \(key.hour)
                """, logger: logger)
            return
        }
        try await connection.query(
            """
            INSERT INTO dwell_hourly (site, zone, hour, visits, tags, total, mean, median, p90)
            VALUES (\(key.site), \(key.zone), \(key.hour), \(statistics.visits), \(statistics.tags),
            \(statistics.total), \(statistics.mean), \(statistics.median), \(statistics.p90))
            ON CONFLICT (site, zone, hour) DO UPDATE SET visits = excluded.visits, tags = excluded.tags,
            total = excluded.total, mean = excluded.mean, median = excluded.median, p90 = excluded.p90
            """, logger: logger)
    }

    /// Moves each boot's acknowledgement over every batch committed (or recorded lost) right after it, in three
    /// round trips whatever the number of boots: their acknowledgements with the ledger's sequence numbers beyond
    /// them, their lost ranges beyond them, then one update of those that moved.
    static func advanceAcks(
        site: String, boots: [[String]], _ connection: PostgresConnection, _ logger: Logger
    ) async throws -> [HubStore.Ack] {
        guard !boots.isEmpty else { return [] }
        let gateways = boots.map { $0[0] }
        let bootIDs = boots.map { $0[1] }
        var acked: [[String]: Int64] = [:]
        var present: [[String]: Set<Int64>] = [:]
        var lost: [[String]: [(first: Int64, last: Int64)]] = [:]
        for try await (gateway, boot, seq, beyond) in try await connection.query(
            """
            SELECT b.gateway, b.boot, b.acked, ARRAY(SELECT x.seq FROM batches x WHERE x.site = b.site
                   AND x.gateway = b.gateway AND x.boot = b.boot AND x.seq > b.acked)
            FROM boots b JOIN unnest(\(gateways), \(bootIDs)) AS u(g, bo) ON b.gateway = u.g AND b.boot = u.bo
            WHERE b.site = \(site)
            """, logger: logger
        ).decode((String, String, Int64, [Int64]).self) {
            acked[[gateway, boot]] = seq
            present[[gateway, boot]] = Set(beyond)
        }
        for try await (gateway, boot, first, last) in try await connection.query(
            """
            SELECT l.gateway, l.boot, l.first, l.last FROM lost_batches l
            JOIN boots b ON b.site = l.site AND b.gateway = l.gateway AND b.boot = l.boot
            JOIN unnest(\(gateways), \(bootIDs)) AS u(g, bo) ON l.gateway = u.g AND l.boot = u.bo
            WHERE l.site = \(site) AND l.last > b.acked
            """, logger: logger
        ).decode((String, String, Int64, Int64).self) {
            lost[[gateway, boot], default: []].append((first, last))
        }
        var moved: [HubStore.Ack] = []
        for boot in boots {
            guard let from = acked[boot] else { continue }
            let here = present[boot] ?? []
            let ranges = lost[boot] ?? []
            var seq = from
            while true {
                if here.contains(seq + 1) {
                    seq += 1
                } else if let last = ranges.filter({ $0.first <= seq + 1 && $0.last >= seq + 1 }).map(\.last).max() {
                    seq = last
                } else {
                    break
                }
            }
            if seq != from { moved.append(HubStore.Ack(gateway: boot[0], boot: boot[1], seq: seq)) }
        }
        guard !moved.isEmpty else { return [] }
        try await connection.query(
            """
            UPDATE boots SET acked = u.s FROM unnest(\(moved.map(\.gateway)), \(moved.map(\.boot)),
                                                  \(moved.map(\.seq))) AS u(g, bo, s)
            WHERE boots.site = \(site) AND boots.gateway = u.g AND boots.boot = u.bo
            """, logger: logger)
        return moved
    }
}
