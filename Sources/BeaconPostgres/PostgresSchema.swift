import Foundation

/// The PostgreSQL history's schema (docs/storage.md, "PostgreSQL"): the SQLite store's tables with a `site` column in
/// every key, times as unix seconds (`float8`, as in SQLite, so that both stores answer the same queries alike), and
/// the big tables partitioned by time, so that retention drops partitions.
///
/// Migrations are appended, never edited, and recorded in `schema_migrations`; a starting hub applies the missing ones
/// under a transaction-scoped advisory lock, so two hubs starting at once do not race.
public enum PostgresSchema {
    public static let migrations: [(identifier: String, sql: String)] = [
        (
            "pg-1",
            """
            CREATE TABLE meta (site text NOT NULL, key text NOT NULL, value text NOT NULL, PRIMARY KEY (site, key));
            CREATE TABLE zones (site text NOT NULL, id text NOT NULL, name text, PRIMARY KEY (site, id));
            CREATE TABLE gateways (
                site text NOT NULL, id text NOT NULL, zone text, x float8, y float8,
                online boolean, boot text, last_change float8,
                PRIMARY KEY (site, id)
            );
            CREATE TABLE tags (
                site text NOT NULL, tag text NOT NULL, beacon text NOT NULL, region text,
                first_seen float8 NOT NULL, last_change float8 NOT NULL,
                PRIMARY KEY (site, tag)
            );
            CREATE INDEX tags_tag ON tags (tag);
            CREATE TABLE live_tags (
                site text NOT NULL, tag text NOT NULL, beacon text NOT NULL, state text NOT NULL, zone text NOT NULL,
                since float8 NOT NULL, confidence float8 NOT NULL, updated float8 NOT NULL,
                PRIMARY KEY (site, tag)
            );

            -- The batch ledger: one row per batch taken in, never pruned (deduplication and exactly-once checks).
            CREATE TABLE batches (
                site text NOT NULL, gateway text NOT NULL, boot text NOT NULL, seq bigint NOT NULL,
                received float8 NOT NULL, committed float8 NOT NULL, sightings integer NOT NULL,
                PRIMARY KEY (site, gateway, boot, seq)
            );
            CREATE TABLE boots (
                site text NOT NULL, gateway text NOT NULL, boot text NOT NULL, first_seen float8 NOT NULL,
                acked bigint NOT NULL DEFAULT 0, id bigserial NOT NULL,
                PRIMARY KEY (site, gateway, boot)
            );
            CREATE TABLE lost_batches (
                site text NOT NULL, gateway text NOT NULL, boot text NOT NULL, first bigint NOT NULL,
                last bigint NOT NULL, t float8 NOT NULL
            );
            CREATE INDEX lost_batches_boot ON lost_batches (site, gateway, boot, first);

            -- Visits, partitioned by month of `enter`. A partitioned table cannot hold the SQLite store's "one open
            -- visit per tag" index (a unique index must include the partition key), so `open_visits` holds it: a
            -- second open visit of a tag fails on its primary key, whichever hub writes.
            CREATE SEQUENCE visits_id;
            CREATE TABLE visits (
                id bigint NOT NULL DEFAULT nextval('visits_id'), site text NOT NULL, tag text NOT NULL,
                zone text NOT NULL, enter float8 NOT NULL, exit float8, duration float8,
                confidence float8 NOT NULL, suspect boolean NOT NULL DEFAULT false,
                PRIMARY KEY (id, enter)
            ) PARTITION BY RANGE (enter);
            CREATE INDEX visits_tag ON visits (site, tag, enter);
            CREATE INDEX visits_zone ON visits (site, zone, enter);
            CREATE INDEX visits_enter ON visits (site, enter);
            CREATE INDEX visits_any_tag ON visits (tag);
            CREATE TABLE open_visits (
                site text NOT NULL, tag text NOT NULL, id bigint NOT NULL, zone text NOT NULL, enter float8 NOT NULL,
                PRIMARY KEY (site, tag)
            );

            CREATE SEQUENCE transitions_id;
            CREATE TABLE transitions (
                id bigint NOT NULL DEFAULT nextval('transitions_id'), site text NOT NULL, tag text NOT NULL,
                from_zone text NOT NULL, to_zone text NOT NULL, "left" float8 NOT NULL, entered float8 NOT NULL,
                transit float8 NOT NULL
            ) PARTITION BY RANGE (entered);
            CREATE INDEX transitions_tag ON transitions (tag);
            CREATE INDEX transitions_entered ON transitions (site, entered);

            CREATE SEQUENCE events_id;
            CREATE TABLE events (
                id bigint NOT NULL DEFAULT nextval('events_id'), site text NOT NULL, t float8 NOT NULL,
                type text NOT NULL, tag text, zone text, previous_zone text, confidence float8 NOT NULL, dwell float8,
                region text, code text, gateway text, reason text NOT NULL
            ) PARTITION BY RANGE (t);
            CREATE INDEX events_t ON events (site, t);
            CREATE INDEX events_tag ON events (tag);

            CREATE SEQUENCE gateway_status_id;
            CREATE TABLE gateway_status (
                id bigint NOT NULL DEFAULT nextval('gateway_status_id'), site text NOT NULL, gateway text NOT NULL,
                t float8 NOT NULL, state text NOT NULL, boot text, reason text, source text NOT NULL
            ) PARTITION BY RANGE (t);
            CREATE INDEX gateway_status_gateway ON gateway_status (site, gateway, t);

            -- Raw sightings, only with store.rawSightings; partitioned by day, as their retention is in hours.
            CREATE TABLE sightings (
                site text NOT NULL, t float8 NOT NULL, gateway text NOT NULL, beacon text NOT NULL,
                rssi integer NOT NULL, tx_power integer
            ) PARTITION BY RANGE (t);
            CREATE INDEX sightings_t ON sightings (site, t);
            CREATE INDEX sightings_beacon ON sightings (beacon);

            -- Closed visits per zone and hour of their enter time, recomputed as visits close.
            CREATE TABLE dwell_hourly (
                site text NOT NULL, zone text NOT NULL, hour bigint NOT NULL, visits integer NOT NULL,
                tags integer NOT NULL, total float8 NOT NULL, mean float8 NOT NULL, median float8 NOT NULL,
                p90 float8 NOT NULL,
                PRIMARY KEY (site, zone, hour)
            );
            """
        ),
        (
            "pg-2",
            """
            -- Dwell reports read a site's closed visits in zone and duration order from this index alone (an
            -- index-only scan: no table pages, no sort before grouping).
            CREATE INDEX visits_dwell ON visits (site, zone, duration) INCLUDE (tag, enter) WHERE exit IS NOT NULL;
            """
        ),
        (
            "pg-3",
            """
            -- The calibration's versions per site (docs/storage.md): the newest is in force.
            CREATE TABLE calibrations (
                site text NOT NULL, version integer NOT NULL, created float8 NOT NULL, who text NOT NULL, note text,
                kind text NOT NULL, restores integer, zones integer NOT NULL, gateways integer NOT NULL,
                accuracy_before float8, accuracy_after float8, body text,
                PRIMARY KEY (site, version)
            );
            """
        ),
        (
            "pg-4",
            """
            -- Tags' health per site (docs/storage.md): each tag's last TLM frame, where it was last heard and its
            -- alerts' state, under its real id (as live_tags); and its battery, one reading an hour, under the
            -- history's id.
            CREATE TABLE tag_health (
                site text NOT NULL, tag text NOT NULL, region text, last_seen float8, last_zone text,
                last_gateway text, battery_low boolean NOT NULL, missing boolean NOT NULL, tlm_t float8,
                milli_volts integer, temperature float8, advertising_count bigint, uptime float8,
                PRIMARY KEY (site, tag)
            );
            CREATE TABLE battery_hourly (
                site text NOT NULL, tag text NOT NULL, hour bigint NOT NULL, milli_volts integer NOT NULL,
                PRIMARY KEY (site, tag, hour)
            );
            CREATE INDEX battery_hourly_hour ON battery_hourly (site, hour);
            """
        ),
    ]

    /// A migration's statements: split at each `;` that ends a line, comment lines dropped.
    static func statements(of sql: String) -> [String] {
        var statements: [String] = []
        var current: [Substring] = []
        for line in sql.split(separator: "\n") where !line.trimmingCharacters(in: .whitespaces).hasPrefix("--") {
            current.append(line)
            if line.hasSuffix(";") {
                statements.append(current.joined(separator: "\n"))
                current = []
            }
        }
        let rest = current.joined(separator: "\n").trimmingCharacters(in: .whitespacesAndNewlines)
        return rest.isEmpty ? statements : statements + [rest]
    }

    /// A partitioned table and the span of its partitions.
    public struct Partitioned: Sendable, Hashable {
        public var table: String
        public var daily: Bool
    }

    /// The tables partitioned by time.
    public static let partitioned: [Partitioned] = [
        Partitioned(table: "visits", daily: false), Partitioned(table: "transitions", daily: false),
        Partitioned(table: "events", daily: false), Partitioned(table: "gateway_status", daily: false),
        Partitioned(table: "sightings", daily: true),
    ]

    /// The partition of `table` holding time `t`: its name and bounds (unix seconds, UTC months or days).
    public static func partition(of table: Partitioned, at t: Double) -> (name: String, from: Double, to: Double) {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        let date = Date(timeIntervalSince1970: t)
        let parts = calendar.dateComponents([.year, .month, .day], from: date)
        let year = parts.year!
        let month = parts.month!
        if table.daily {
            let start = calendar.date(from: DateComponents(year: year, month: month, day: parts.day!))!
            let end = calendar.date(byAdding: .day, value: 1, to: start)!
            let name = "\(table.table)_p\(year)\(twoDigits(month))\(twoDigits(parts.day!))"
            return (name, start.timeIntervalSince1970, end.timeIntervalSince1970)
        }
        let start = calendar.date(from: DateComponents(year: year, month: month, day: 1))!
        let end = calendar.date(byAdding: .month, value: 1, to: start)!
        let name = "\(table.table)_p\(year)\(twoDigits(month))"
        return (name, start.timeIntervalSince1970, end.timeIntervalSince1970)
    }

    static func twoDigits(_ value: Int) -> String { value < 10 ? "0\(value)" : "\(value)" }
}
