extension HubStore {
    /// The hub's migrations in order (docs/storage.md, "Schema"). Shipped migrations are never edited: a change is a
    /// new entry at the end. Tests open a database at every prefix of this list and upgrade it.
    public static let migrations: [(identifier: String, sql: String)] = [
        (
            "hub-1",
            """
            CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
            CREATE TABLE zones (id TEXT PRIMARY KEY, name TEXT);
            CREATE TABLE gateways (
                id TEXT PRIMARY KEY, zone TEXT, x REAL, y REAL,
                online INTEGER, boot TEXT, last_change REAL
            );
            CREATE TABLE tags (
                tag TEXT PRIMARY KEY, beacon TEXT NOT NULL, region TEXT,
                first_seen REAL NOT NULL, last_change REAL NOT NULL
            );
            CREATE TABLE live_tags (
                tag TEXT PRIMARY KEY, beacon TEXT NOT NULL, state TEXT NOT NULL, zone TEXT NOT NULL,
                since REAL NOT NULL, confidence REAL NOT NULL, updated REAL NOT NULL
            );

            -- The batch ledger: one row per batch taken in, never pruned (deduplication and exactly-once checks).
            CREATE TABLE batches (
                gateway TEXT NOT NULL, boot TEXT NOT NULL, seq INTEGER NOT NULL,
                received REAL NOT NULL, committed REAL NOT NULL, sightings INTEGER NOT NULL,
                PRIMARY KEY (gateway, boot, seq)
            ) WITHOUT ROWID;
            CREATE TABLE boots (
                gateway TEXT NOT NULL, boot TEXT NOT NULL, first_seen REAL NOT NULL,
                acked INTEGER NOT NULL DEFAULT 0,
                PRIMARY KEY (gateway, boot)
            );
            CREATE TABLE lost_batches (
                gateway TEXT NOT NULL, boot TEXT NOT NULL, first INTEGER NOT NULL, last INTEGER NOT NULL,
                t REAL NOT NULL
            );
            CREATE INDEX lost_batches_boot ON lost_batches (gateway, boot, first);

            CREATE TABLE visits (
                id INTEGER PRIMARY KEY, tag TEXT NOT NULL, zone TEXT NOT NULL,
                enter REAL NOT NULL, exit REAL, duration REAL,
                confidence REAL NOT NULL, suspect INTEGER NOT NULL DEFAULT 0
            );
            -- At most one open visit per tag: a restart can never open a second one.
            CREATE UNIQUE INDEX visits_open ON visits (tag) WHERE exit IS NULL;
            CREATE INDEX visits_tag ON visits (tag, enter);
            CREATE INDEX visits_zone ON visits (zone, enter);
            CREATE INDEX visits_enter ON visits (enter);

            CREATE TABLE transitions (
                id INTEGER PRIMARY KEY, tag TEXT NOT NULL, from_zone TEXT NOT NULL, to_zone TEXT NOT NULL,
                left REAL NOT NULL, entered REAL NOT NULL, transit REAL NOT NULL
            );
            CREATE INDEX transitions_tag ON transitions (tag);
            CREATE INDEX transitions_entered ON transitions (entered);

            CREATE TABLE events (
                id INTEGER PRIMARY KEY, t REAL NOT NULL, type TEXT NOT NULL, tag TEXT, zone TEXT,
                previous_zone TEXT, confidence REAL NOT NULL, dwell REAL, region TEXT, code TEXT, gateway TEXT,
                reason TEXT NOT NULL
            );
            CREATE INDEX events_t ON events (t);
            CREATE INDEX events_tag ON events (tag);

            CREATE TABLE gateway_status (
                id INTEGER PRIMARY KEY, gateway TEXT NOT NULL, t REAL NOT NULL, state TEXT NOT NULL, boot TEXT,
                reason TEXT, source TEXT NOT NULL
            );
            CREATE INDEX gateway_status_gateway ON gateway_status (gateway, t);

            -- Raw sightings, only with store.rawSightings; pruned after store.rawRetentionHours.
            CREATE TABLE sightings (
                t REAL NOT NULL, gateway TEXT NOT NULL, beacon TEXT NOT NULL, rssi INTEGER NOT NULL, tx_power INTEGER
            );
            CREATE INDEX sightings_t ON sightings (t);
            CREATE INDEX sightings_beacon ON sightings (beacon);

            -- Closed visits per zone and hour of their enter time, recomputed as visits close.
            CREATE TABLE dwell_hourly (
                zone TEXT NOT NULL, hour INTEGER NOT NULL, visits INTEGER NOT NULL, tags INTEGER NOT NULL,
                total REAL NOT NULL, mean REAL NOT NULL, median REAL NOT NULL, p90 REAL NOT NULL,
                PRIMARY KEY (zone, hour)
            ) WITHOUT ROWID;
            """
        ),
        (
            "hub-2",
            """
            -- The calibration's versions (docs/storage.md): the newest is in force.
            CREATE TABLE calibrations (
                version INTEGER PRIMARY KEY, created REAL NOT NULL, who TEXT NOT NULL, note TEXT, kind TEXT NOT NULL,
                restores INTEGER, zones INTEGER NOT NULL, gateways INTEGER NOT NULL,
                accuracy_before REAL, accuracy_after REAL, body TEXT
            );
            """
        ),
        (
            "hub-3",
            """
            -- Tags' health (docs/storage.md): each tag's last TLM frame, where it was last heard and its alerts' state,
            -- under its real id (as live_tags); and its battery, one reading an hour, under the history's id.
            CREATE TABLE tag_health (
                tag TEXT PRIMARY KEY, region TEXT, last_seen REAL, last_zone TEXT, last_gateway TEXT,
                battery_low INTEGER NOT NULL, missing INTEGER NOT NULL, tlm_t REAL, milli_volts INTEGER,
                temperature REAL, advertising_count INTEGER, uptime REAL
            );
            CREATE TABLE battery_hourly (
                tag TEXT NOT NULL, hour INTEGER NOT NULL, milli_volts INTEGER NOT NULL, PRIMARY KEY (tag, hour)
            ) WITHOUT ROWID;
            CREATE INDEX battery_hourly_hour ON battery_hourly (hour);
            """
        ),
    ]
}
