import Foundation
import GRDB

extension HubStore {
    /// Writes `journal` in one transaction on the writer's queue (never on the cooperative pool) and returns the
    /// acknowledgements that moved. Throws `StoreError` (`disk-full`, `io`) with nothing written: the caller keeps the
    /// journal and tries again.
    public func commit(_ journal: HubJournal, at now: Double) async throws -> CommitResult {
        let gap = tripGapSeconds
        return try await database.write { db in try Self.write(journal, at: now, tripGap: gap, db) }
    }

    /// `commit(_:at:)` blocking the calling thread, for offline tools (`beacon-hub replay --db`) that run outside
    /// Swift concurrency.
    public func commitNow(_ journal: HubJournal, at now: Double) throws -> CommitResult {
        try database.writeNow { db in try Self.write(journal, at: now, tripGap: tripGapSeconds, db) }
    }

    /// Deletes hourly battery readings of hours before `cutoff` (`store.batteryRetentionDays`). Returns how many went.
    public func pruneBatteryReadings(before cutoff: Double) async throws -> Int {
        try await database.write { db in
            try db.execute(
                sql: "DELETE FROM battery_hourly WHERE hour < ?", arguments: [Int64((cutoff / 3600).rounded(.down))])
            return db.changesCount
        }
    }

    /// Deletes raw sightings scanned before `cutoff` (retention). Returns how many went.
    public func pruneSightings(before cutoff: Double) async throws -> Int {
        try await database.write { db in
            try db.execute(sql: "DELETE FROM sightings WHERE t < ?", arguments: [cutoff])
            return db.changesCount
        }
    }

    static func write(_ journal: HubJournal, at now: Double, tripGap: Double, _ db: Database) throws -> CommitResult {
        var result = CommitResult()
        result.rows = journal.rowCount
        var touchedBoots: Set<[String]> = []
        if !journal.batches.isEmpty {
            let ledger = try db.cachedStatement(
                sql: """
                    INSERT OR IGNORE INTO batches (gateway, boot, seq, received, committed, sightings)
                    VALUES (?, ?, ?, ?, ?, ?)
                    """)
            let boot = try db.cachedStatement(
                sql: "INSERT OR IGNORE INTO boots (gateway, boot, first_seen) VALUES (?, ?, ?)")
            for batch in journal.batches {
                try ledger.execute(
                    arguments: [batch.gateway, batch.boot, batch.seq, batch.received, now, batch.sightings])
                if db.changesCount == 0 { result.duplicateBatches += 1 }
                if touchedBoots.insert([batch.gateway, batch.boot]).inserted {
                    try boot.execute(arguments: [batch.gateway, batch.boot, batch.received])
                }
            }
        }
        for lost in journal.lost {
            try db.execute(
                sql: "INSERT INTO lost_batches (gateway, boot, first, last, t) VALUES (?, ?, ?, ?, ?)",
                arguments: [lost.gateway, lost.boot, lost.first, lost.last, lost.t])
            try db.execute(
                sql: "INSERT OR IGNORE INTO boots (gateway, boot, first_seen) VALUES (?, ?, ?)",
                arguments: [lost.gateway, lost.boot, lost.t])
            touchedBoots.insert([lost.gateway, lost.boot])
        }
        for adopted in journal.adopted {
            try db.execute(
                sql: "INSERT OR IGNORE INTO boots (gateway, boot, first_seen) VALUES (?, ?, ?)",
                arguments: [adopted.gateway, adopted.boot, adopted.t])
            try db.execute(
                sql: "UPDATE boots SET acked = max(acked, ?) WHERE gateway = ? AND boot = ?",
                arguments: [adopted.seq, adopted.gateway, adopted.boot])
            touchedBoots.insert([adopted.gateway, adopted.boot])
        }
        for status in journal.statuses {
            try db.execute(
                sql: """
                    INSERT INTO gateway_status (gateway, t, state, boot, reason, source) VALUES (?, ?, ?, ?, ?, ?)
                    """, arguments: [status.gateway, status.t, status.state, status.boot, status.reason, status.source])
            try db.execute(
                sql: """
                    UPDATE gateways SET online = ?, boot = coalesce(?, boot), last_change = ? WHERE id = ?
                    """, arguments: [status.state == "online", status.boot, status.t, status.gateway])
        }
        var dirtyDwell: Set<DwellKey> = []
        for move in journal.moves { try apply(move, tripGap: tripGap, dirty: &dirtyDwell, db) }
        if !journal.events.isEmpty {
            let insert = try db.cachedStatement(
                sql: """
                    INSERT INTO events (t, type, tag, zone, previous_zone, confidence, dwell, region, code, gateway,
                    reason) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                    """)
            for event in journal.events {
                try insert.execute(arguments: [
                    event.t, event.type, event.key, event.zone, event.previousZone, event.confidence, event.dwell,
                    event.region, event.code, event.gateway, event.reason,
                ])
                switch event.type {
                case "unknown":
                    // Still in its zone as far as anyone knows: the visit stays open; a restart restores "unknown".
                    if let tag = event.liveTag {
                        try db.execute(
                            sql: "UPDATE live_tags SET state = 'unknown', updated = ? WHERE tag = ? AND since <= ?",
                            arguments: [event.t, tag, event.t])
                    }
                case "suspect":
                    if let key = event.key {
                        try db.execute(
                            sql: """
                                UPDATE visits SET suspect = 1
                                WHERE tag = ? AND enter <= ? AND (exit IS NULL OR exit >= ?)
                                """, arguments: [key, event.t, event.t])
                    }
                default: break
                }
            }
        }
        if !journal.sightings.isEmpty {
            let insert = try db.cachedStatement(
                sql: "INSERT INTO sightings (t, gateway, beacon, rssi, tx_power) VALUES (?, ?, ?, ?, ?)")
            for sighting in journal.sightings {
                try insert.execute(arguments: [
                    sighting.t, sighting.gateway, sighting.beaconKey, sighting.rssi, sighting.txPower,
                ])
            }
        }
        if !journal.tagHealth.isEmpty {
            let upsert = try db.cachedStatement(
                sql: """
                    INSERT OR REPLACE INTO tag_health (tag, region, last_seen, last_zone, last_gateway, battery_low,
                    missing, tlm_t, milli_volts, temperature, advertising_count, uptime)
                    VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                    """)
            for row in journal.tagHealth {
                try upsert.execute(arguments: [
                    row.liveTag, row.region, row.lastSeen, row.lastZone, row.lastGateway, row.batteryLow, row.missing,
                    row.tlmT, row.milliVolts, row.temperature, row.advertisingCount, row.uptime,
                ])
            }
        }
        if !journal.batteryReadings.isEmpty {
            let upsert = try db.cachedStatement(
                sql: "INSERT OR REPLACE INTO battery_hourly (tag, hour, milli_volts) VALUES (?, ?, ?)")
            for reading in journal.batteryReadings {
                try upsert.execute(arguments: [reading.key, reading.hour, reading.milliVolts])
            }
        }
        for key in dirtyDwell { try recomputeDwell(key, db) }
        for boot in touchedBoots.sorted(by: { $0.lexicographicallyPrecedes($1) }) {
            if let ack = try advanceAck(gateway: boot[0], boot: boot[1], db) { result.acks.append(ack) }
        }
        return result
    }

    /// A zone and hour (unix seconds of its start) of `dwell_hourly`.
    struct DwellKey: Hashable {
        var zone: String
        var hour: Int64
    }

    static func hour(of t: Double) -> Int64 { Int64((t / 3600).rounded(.down)) * 3600 }

    /// Closes the tag's open visit, records the transition from its previous zone, opens the next visit, and keeps
    /// `tags` and `live_tags`.
    static func apply(_ move: HubJournal.Move, tripGap: Double, dirty: inout Set<DwellKey>, _ db: Database) throws {
        let open = try Row.fetchOne(
            db.cachedStatement(sql: "SELECT id, zone, enter FROM visits WHERE tag = ? AND exit IS NULL"),
            arguments: [move.key])
        if let open {
            let enter: Double = open["enter"]
            let exit = max(move.t, enter)
            try db.cachedStatement(
                sql: "UPDATE visits SET exit = ?, duration = ?, confidence = min(confidence, ?) WHERE id = ?"
            ).execute(arguments: [exit, exit - enter, move.confidence, open["id"] as Int64])
            dirty.insert(DwellKey(zone: open["zone"], hour: hour(of: enter)))
        }
        try db.cachedStatement(
            sql: """
                INSERT INTO tags (tag, beacon, region, first_seen, last_change) VALUES (?, ?, ?, ?, ?)
                ON CONFLICT(tag) DO UPDATE SET last_change = max(last_change, excluded.last_change),
                region = coalesce(excluded.region, region)
                """
        ).execute(arguments: [move.key, move.beaconKey, move.region, move.t, move.t])
        guard let zone = move.to else {
            try db.cachedStatement(sql: "DELETE FROM live_tags WHERE tag = ?").execute(arguments: [move.liveTag])
            return
        }
        // A hub restarted after a crash re-decides from resent batches whose scan times may precede the last exit it
        // committed: a visit never starts before the tag's previous one ended.
        var enter = move.t
        if let previous = try Row.fetchOne(
            db.cachedStatement(
                // By enter, which `visits_tag` serves directly (by exit SQLite sorts every visit of the tag); the same
                // row, as a tag's visits never overlap.
                sql: "SELECT zone, exit FROM visits WHERE tag = ? AND exit IS NOT NULL ORDER BY enter DESC LIMIT 1"),
            arguments: [move.key])
        {
            let left: Double = previous["exit"]
            enter = max(enter, left)
            if enter - left <= tripGap {
                try db.cachedStatement(
                    sql: """
                        INSERT INTO transitions (tag, from_zone, to_zone, left, entered, transit)
                        VALUES (?, ?, ?, ?, ?, ?)
                        """
                ).execute(arguments: [move.key, previous["zone"] as String, zone, left, enter, enter - left])
            }
        }
        try db.cachedStatement(sql: "INSERT INTO visits (tag, zone, enter, confidence) VALUES (?, ?, ?, ?)")
            .execute(arguments: [move.key, zone, enter, move.confidence])
        try db.cachedStatement(
            sql: """
                INSERT OR REPLACE INTO live_tags (tag, beacon, state, zone, since, confidence, updated)
                VALUES (?, ?, 'inside', ?, ?, ?, ?)
                """
        ).execute(arguments: [move.liveTag, move.beacon, zone, enter, move.confidence, enter])
    }

    /// Recomputes one `dwell_hourly` row from the closed visits that entered in that hour.
    static func recomputeDwell(_ key: DwellKey, _ db: Database) throws {
        let rows = try Row.fetchAll(
            db.cachedStatement(
                sql: """
                    SELECT tag, duration FROM visits
                    WHERE zone = ? AND enter >= ? AND enter < ? AND exit IS NOT NULL
                    """), arguments: [key.zone, Double(key.hour), Double(key.hour + 3600)])
        guard
            let statistics = DwellStatistics(
                rows.map { (tag: $0["tag"] as String, duration: $0["duration"] as Double) })
        else {
            try db.execute(
                sql: "DELETE FROM dwell_hourly WHERE zone = ? AND hour = ?", arguments: [key.zone, key.hour])
            return
        }
        try db.cachedStatement(
            sql: """
                INSERT OR REPLACE INTO dwell_hourly (zone, hour, visits, tags, total, mean, median, p90)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?)
                """
        ).execute(arguments: [
            key.zone, key.hour, statistics.visits, statistics.tags, statistics.total, statistics.mean,
            statistics.median, statistics.p90,
        ])
    }

    /// Moves a boot's acknowledgement over every batch committed (or recorded lost) right after it.
    static func advanceAck(gateway: String, boot: String, _ db: Database) throws -> Ack? {
        guard
            let acked = try Int64.fetchOne(
                db.cachedStatement(sql: "SELECT acked FROM boots WHERE gateway = ? AND boot = ?"),
                arguments: [gateway, boot])
        else { return nil }
        let present = try db.cachedStatement(sql: "SELECT 1 FROM batches WHERE gateway = ? AND boot = ? AND seq = ?")
        let lost = try db.cachedStatement(
            sql: """
                SELECT max(last) FROM lost_batches WHERE gateway = ? AND boot = ? AND first <= ? AND last >= ?
                """)
        var seq = acked
        while true {
            if try Int.fetchOne(present, arguments: [gateway, boot, seq + 1]) != nil {
                seq += 1
            } else if let last = try Int64.fetchOne(lost, arguments: [gateway, boot, seq + 1, seq + 1]) {
                seq = last
            } else {
                break
            }
        }
        guard seq != acked else { return nil }
        try db.cachedStatement(sql: "UPDATE boots SET acked = ? WHERE gateway = ? AND boot = ?")
            .execute(arguments: [seq, gateway, boot])
        return Ack(gateway: gateway, boot: boot, seq: seq)
    }
}
