import BeaconModel
import BeaconStore
import ZoneInference

extension HubCore {
    /// What to store since the last call (batches' ledger rows and their effects); empty without persistence.
    public mutating func takeJournal() -> HubJournal {
        defer { journal = HubJournal() }
        return journal
    }

    /// A commit holding `batches` ledger rows succeeded: what it covers may now be acknowledged. The
    /// acknowledgements go out with the next `queueAcknowledgements` (every tick, or at once through
    /// `publishAcknowledgements`).
    public mutating func committed(_ result: HubStore.CommitResult, batches: Int, at now: Double) {
        guard counters.store != nil else { return }
        counters.store!.backlogBatches = max(0, counters.store!.backlogBatches - batches)
        counters.store!.commits += 1
        counters.store!.lastCommit = now
        for ack in result.acks {
            let gateway = GatewayID(unchecked: ack.gateway)
            guard gateways[gateway] != nil else { continue }
            gateways[gateway]!.committed.seed(boot: ack.boot, seq: UInt64(ack.seq))
            gateways[gateway]!.ackDirty = true
        }
        if storeFailingSince != nil {
            storeFailingSince = nil
            if storeAlertOpen {
                storeAlertOpen = false
                alert(
                    "store-recovered", gateway: nil, at: now,
                    reason: "the database takes writes again: acknowledging the \(batches) batches kept meanwhile",
                    repeating: true)
            }
        }
    }

    /// A commit failed (nothing of it was written; the caller retries it): raise `disk-full` or `store-error` and
    /// acknowledge nothing until a commit succeeds (then `store-recovered`). Every failure that lasts is announced,
    /// the second of a pair within a minute after it has lasted 10 s: a nearly full disk that fails and recovers at
    /// every commit raises one pair of alerts a minute, not one per commit.
    public mutating func commitFailed(_ error: StoreError, at now: Double) {
        guard counters.store != nil else { return }
        counters.store!.failures += 1
        let since = storeFailingSince ?? now
        storeFailingSince = since
        guard !storeAlertOpen else { return }
        if let last = storeAlertedAt, now - last < 60, now - since < 10 { return }
        storeAlertOpen = true
        storeAlertedAt = now
        let code = error.code == .diskFull ? "disk-full" : "store-error"
        alert(
            code, gateway: nil, at: now,
            reason: "cannot write the history database: \(error.message). Ingest goes on; batches are not "
                + "acknowledged (the gateways keep them) until it can write again",
            repeating: true)
    }

    /// Queues the acknowledgements that moved, now (after a commit) rather than at the next tick.
    public mutating func publishAcknowledgements(at now: Double) {
        guard publishing else { return }
        queueAcknowledgements(at: now)
    }

    /// Carries on from the database: its acknowledgements, the batches it committed beyond them (resends of those are
    /// duplicates), and the tags it had in zones (restored without a new enter, their open visits continuing).
    public mutating func recover(_ recovered: HubStore.Recovered, at now: Double) {
        for ack in recovered.acks {
            let gateway = GatewayID(unchecked: ack.gateway)
            guard gateways[gateway] != nil else { continue }
            gateways[gateway]!.tracker.seed(boot: ack.boot, seq: UInt64(ack.seq))
            gateways[gateway]!.committed.seed(boot: ack.boot, seq: UInt64(ack.seq))
        }
        for batch in recovered.committedBeyondAck {
            let gateway = GatewayID(unchecked: batch.gateway)
            guard gateways[gateway] != nil else { continue }
            _ = gateways[gateway]!.tracker.record(boot: batch.boot, seq: UInt64(batch.seq))
            _ = gateways[gateway]!.committed.record(boot: batch.boot, seq: UInt64(batch.seq))
        }
        // A tag's row in live_tags is written when it moves; its health row also when the hub stops: the later of
        // the two is when it was last heard.
        let healthSeen = Dictionary(
            recovered.tagHealth.compactMap { row in row.lastSeen.map { (row.liveTag, $0) } }, uniquingKeysWith: max)
        for live in recovered.liveTags {
            let state = TagState(
                tag: TagID(unchecked: live.tag), beacon: live.beacon,
                state: live.state == "unknown" ? .unknown : .inside,
                zone: ZoneID(unchecked: live.zone), since: live.since, confidence: live.confidence,
                lastSeen: max(live.updated, healthSeen[live.tag] ?? live.updated), gateways: [])
            engine.restore(state, at: now)
        }
        // Tags' health: their battery's hourly readings are kept under the history's id.
        var tagOfKey: [String: TagID] = [:]
        for row in recovered.tagHealth { tagOfKey[key(row.liveTag)] = TagID(unchecked: row.liveTag) }
        var hourly: [TagID: [(hour: Int, milliVolts: Int)]] = [:]
        for reading in recovered.batteryReadings {
            guard let tag = tagOfKey[reading.key] else { continue }
            hourly[tag, default: []].append((Int(reading.hour), reading.milliVolts))
        }
        health.restore(
            recovered.tagHealth.map { row in
                TagHealth.Saved(
                    tag: TagID(unchecked: row.liveTag), region: row.region, lastSeen: row.lastSeen,
                    lastZone: row.lastZone.map { ZoneID(unchecked: $0) },
                    lastGateway: row.lastGateway.map { GatewayID(unchecked: $0) }, batteryLow: row.batteryLow,
                    missing: row.missing,
                    last: row.tlmT.map { t in
                        TagHealth.Reading(
                            t: t, milliVolts: row.milliVolts, temperature: row.temperature,
                            advertisingCount: row.advertisingCount.map { UInt32(clamping: $0) }, uptime: row.uptime)
                    })
            }, hourly: hourly, at: now)
    }

    /// Journals every tag's health that changed since it was last saved, whatever `TagHealth.saveSeconds` says: the
    /// last commit of a hub that stops holds its tags' health as it was.
    public mutating func journalAllHealth(at now: Double) {
        guard persistence != nil else { return }
        journalHealth(at: now, all: true)
    }

    /// Journals the tags whose health changed (`TagHealth.takeChanges`): their row, and their battery's hour and the
    /// one before (whose last reading may have come after it was saved; the upsert makes writing it again harmless).
    mutating func journalHealth(at now: Double, all: Bool = false) {
        for saved in health.takeChanges(at: now, all: all) {
            journal.tagHealth.append(
                HubJournal.TagHealthRow(
                    liveTag: saved.tag.rawValue, region: saved.region, lastSeen: saved.lastSeen,
                    lastZone: saved.lastZone?.rawValue, lastGateway: saved.lastGateway?.rawValue,
                    batteryLow: saved.batteryLow, missing: saved.missing, tlmT: saved.last?.t,
                    milliVolts: saved.last?.milliVolts, temperature: saved.last?.temperature,
                    advertisingCount: saved.last?.advertisingCount.map(Int64.init), uptime: saved.last?.uptime))
            for hourly in [saved.previousHour, saved.hourly].compactMap({ $0 }) {
                journal.batteryReadings.append(
                    HubJournal.BatteryReading(
                        key: key(saved.tag.rawValue), hour: Int64(hourly.hour), milliVolts: hourly.milliVolts))
            }
        }
    }
}
