import BeaconModel
import BeaconStore
import Foundation
import ZoneInference

/// `beacon-hub replay`: the zone engine run offline on recorded sightings, with the clock taken from their scan
/// times — deterministic and as fast as the CPU allows. Writes the contract's event lines.
public enum ReplayTool {
    /// What a replay did.
    public struct Summary: Sendable {
        public var input: SightingInput.Summary
        public var counters: ZoneEngine.Counters
        public var events: Int
        public var wallSeconds: Double
        /// Rows written to the database (`--db`), and its commits.
        public var storedRows = 0
        public var commits = 0
        /// Scan time covered.
        public var from: Double?
        public var to: Double?
        /// Sightings of the gateways' own beacons (the venue file's `beacon:`): links, not tags; and the last fit of
        /// them, when one was made.
        public var gatewayBeacons = 0
        public var linkFit: LinkCalibration.Result?
        public var linkFits = 0
        /// Each gateway beacon's advertising interval as the replay estimated it from the receptions (the links' fit
        /// counts the advertisements sent from it), seconds.
        public var advertisingIntervals: [GatewayID: Double] = [:]
        /// Tag health alerts raised (`tag-battery-low`, …), by code.
        public var tagAlerts: [String: Int] = [:]
        /// The gateways' link alerts raised (`gateway-moved`, `gateway-degraded`), by code.
        public var linkAlerts: [String: Int] = [:]
        /// The `position` method's path-loss exponent at the end: the map the probe tags' readings chose (nil for the
        /// other methods).
        public var positionExponent: Double?
        /// The `position` method's observation model at the end: the one the readings chose (`learnsNoise`).
        public var positionNoise: ObservationModel?
        /// The `position` method's sensitivity per gateway at the end, dBm (`learnsSensitivity`).
        public var positionSensitivities: [GatewayID: Double] = [:]
        /// The settings' `sensitivity`, dBm: where every gateway's starts.
        public var configuredSensitivity = -95.0
    }

    /// Replays `inputPath` through the configuration's engine, writing one event line per event to `eventsPath`.
    public static func run(
        configuration: HubConfiguration, inputPath: String, eventsPath: String,
        progress: ((Double?, Double) -> Void)? = nil
    ) throws -> Summary {
        try run(
            engine: configuration.makeEngine(), inputPath: inputPath, eventsPath: eventsPath,
            tagHealth: configuration.tagHealth.settings, progress: progress)
    }

    /// Where a replay writes history: the database, how ids are stored, and whether raw sightings are kept.
    public struct History: Sendable {
        public var store: HubStore
        public var pseudonyms: TagPseudonyms
        public var rawSightings: Bool
        /// Rows gathered before a commit.
        public var commitRows: Int

        public init(store: HubStore, pseudonyms: TagPseudonyms, rawSightings: Bool, commitRows: Int = 20_000) {
            self.store = store
            self.pseudonyms = pseudonyms
            self.rawSightings = rawSightings
            self.commitRows = commitRows
        }
    }

    /// Replays `inputPath` through `engine`, writing one event line per event to `eventsPath` and, with `history`,
    /// the zone visits, transitions, events and dwell statistics (and raw sightings if asked) to the database, as the
    /// live hub does — without a batch ledger (recordings carry no acknowledgements).
    ///
    /// With `tagHealth`, tags' TLM frames and whereabouts raise the live hub's tag alerts on the recording's clock
    /// (`tag-battery-low`, `tag-tlm-reset`, `tag-missing`, `tag-found`).
    public static func run(
        engine: ZoneEngine, inputPath: String, eventsPath: String?, history: History? = nil,
        tagHealth: TagHealth.Settings? = nil, progress: ((Double?, Double) -> Void)? = nil
    ) throws -> Summary {
        var engine = engine
        var health = tagHealth.map { TagHealth(settings: $0) }
        var tagAlerts: [String: Int] = [:]
        // A tag's whereabouts are noted at most every 10 s of scan time (missing is a matter of minutes at least).
        var noted: [TagID: Double] = [:]
        var missingCheckedAt = -Double.infinity
        let named = engine.directory.named.values.map { (tag: $0, region: engine.region(of: $0)) }
        func alert(_ alert: TagHealth.Alert, into events: inout [ZoneEvent]) {
            tagAlerts[alert.code, default: 0] += 1
            events.append(
                ZoneEvent(
                    type: .alert, tag: alert.tag, zone: nil, t: alert.t, confidence: 1, reason: alert.reason,
                    code: alert.code))
        }
        engine.recordsMoves = history != nil
        let writer = try eventsPath.map { try LineFileWriter(path: $0) }
        let began = ContinuousClock.now
        var events: [ZoneEvent] = []
        var written = 0
        var first: Double?
        var last: Double?
        var journal = HubJournal()
        var links = GatewayLinks()
        for (gateway, beacon) in engine.model.gatewayBeacons { links.announce(beacon, by: gateway) }
        // Without gateway beacons in the venue file the per-sighting path stays as it was.
        let learning = !links.beacons.isEmpty
        var gatewayBeacons = 0
        var linkFits = 0
        var intervals = AdvertisingIntervals()
        var linkAlerts: [String: Int] = [:]
        var keys: [String: String] = [:]
        var storedRows = 0
        var commits = 0
        // Raw sightings' beacons, memoised: an HMAC per sighting would cost.
        func key(_ id: String) -> String {
            if let known = keys[id] { return known }
            let value = history?.pseudonyms.key(for: id) ?? id
            keys[id] = value
            return value
        }
        func commit() throws {
            guard let history, !journal.isEmpty else { return }
            _ = try history.store.commitNow(journal, at: Date().timeIntervalSince1970)
            storedRows += journal.rowCount
            commits += 1
            journal = HubJournal()
        }
        func flush() throws {
            if let history {
                for move in engine.takeMoves() { journal.record(move, pseudonyms: history.pseudonyms) }
                for event in events { journal.record(event, pseudonyms: history.pseudonyms) }
                if journal.rowCount >= history.commitRows { try commit() }
            }
            if let writer {
                for event in events { writer.write(try ContractCoding.encodeLine(event)) }
            }
            written += events.count
            events.removeAll(keepingCapacity: true)
        }
        let input = try SightingInput.read(
            inputPath, hold: min(engine.settings.reorderWindowSeconds, 5), progress: progress
        ) { sighting in
            if first == nil { first = sighting.t }
            last = max(last ?? sighting.t, sighting.t)
            // As the live hub: the gateways' links are fitted as time goes on, and what they teach goes to the engine.
            // Only a fit raises link alerts, so they are taken there, not at every sighting.
            if learning && links.isFitDue(at: sighting.t) {
                if let learned = links.fitIfDue(
                    at: sighting.t, venue: engine.venue, settings: engine.settings, intervals: intervals.estimates)
                {
                    engine.apply(learned)
                    linkFits += 1
                }
                for raised in links.takeAlerts() {
                    linkAlerts[raised.code, default: 0] += 1
                    events.append(raised.event)
                }
            }
            if learning, let tx = links.gateway(advertising: sighting.beacon) {
                if tx != sighting.gateway {
                    intervals.note(tx: tx, rx: sighting.gateway, at: sighting.t)
                    links.note(
                        tx: tx, rx: sighting.gateway, rssi: sighting.rssi, t: sighting.t,
                        measuredPower: sighting.txPower)
                }
                gatewayBeacons += 1
                return
            }
            engine.ingest(sighting, events: &events)
            if health != nil, let tag = engine.tag(ofBeacon: sighting.beacon) {
                health!.heard(tag, by: sighting.gateway, at: sighting.t)
                if let tlm = sighting.extras?.tlm, tlm.version == 0 {
                    let reading = TagHealth.Reading(
                        t: sighting.t, milliVolts: tlm.batteryMilliVolts, temperature: tlm.temperatureCelsius,
                        advertisingCount: tlm.advertisingCount, uptime: tlm.secondsSinceBoot)
                    for raised in health!.observe(reading, of: tag) { alert(raised, into: &events) }
                }
                if sighting.t - (noted[tag] ?? -.infinity) >= 10 {
                    noted[tag] = sighting.t
                    let found = health!.seen(
                        tag, region: engine.region(of: tag), zone: engine.reportedState(tag)?.zone,
                        gateway: sighting.gateway, at: sighting.t)
                    for raised in found { alert(raised, into: &events) }
                }
            }
            if health != nil, sighting.t - missingCheckedAt >= min(60, health!.settings.shortestMissingAfter / 4) {
                missingCheckedAt = sighting.t
                for raised in health!.check(at: sighting.t, named: named) { alert(raised, into: &events) }
            }
            if let history, history.rawSightings {
                journal.sightings.append(
                    HubJournal.Sighting(
                        t: sighting.t, gateway: sighting.gateway.rawValue, beaconKey: key(sighting.beacon),
                        rssi: sighting.rssi, txPower: sighting.txPower))
            }
            if events.count > 1000 || journal.sightings.count >= (history?.commitRows ?? .max) { try flush() }
        }
        // Decisions due by the last scan time; the recording's end is not the tags' departure.
        if let last { engine.advance(to: last, events: &events) }
        try flush()
        try commit()
        try writer?.close()
        let elapsed = (ContinuousClock.now - began).components
        return Summary(
            input: input, counters: engine.counters, events: written,
            wallSeconds: Double(elapsed.seconds) + Double(elapsed.attoseconds) / 1e18, storedRows: storedRows,
            commits: commits, from: first, to: last, gatewayBeacons: gatewayBeacons, linkFit: links.fit,
            linkFits: linkFits, advertisingIntervals: intervals.estimates, tagAlerts: tagAlerts, linkAlerts: linkAlerts,
            positionExponent: engine.positionExponent, positionNoise: engine.positionNoise,
            positionSensitivities: engine.positionSensitivities, configuredSensitivity: engine.settings.sensitivity)
    }
}

extension ReplayTool {
    /// The summary as a machine reads it (`beacon-hub replay --report FILE`, docs/hub.md "Replay"): what was read, the
    /// events by type, the position map's exponent and, when the gateways' beacons were heard, the last fit of their
    /// links — each gateway's receive gain and transmit offset, the exponent, each crossed wall's loss (by its index in
    /// the venue's `walls:`) and each facing gateway's front-to-back ratio, every estimate with its standard deviation.
    public struct Report: Sendable, Encodable {
        public struct Estimate: Sendable, Encodable {
            public var value: Double
            public var sigma: Double

            init(_ estimate: LinkCalibration.Estimate) {
                value = estimate.value
                sigma = estimate.sigma
            }
        }

        public struct Links: Sendable, Encodable {
            public var fitsApplied: Int
            public var linksUsed: Int
            public var residualSigma: Double
            public var pathLossExponent: Estimate
            public var receiveGains: [String: Estimate]
            public var transmitOffsets: [String: Estimate]
            public var wallLosses: [String: Estimate]
            public var antennaFrontToBack: [String: Estimate]
            /// Each transmitter's advertising interval as estimated from the receptions, seconds.
            public var advertisingIntervals: [String: Double]
        }

        public var sightings: Int
        public var lines: Int
        public var skippedLines: Int
        public var applied: Int
        public var late: Int
        public var untrackedBeacons: Int
        public var unknownGateways: Int
        public var events: [String: Int]
        public var from: Double?
        public var to: Double?
        public var wallSeconds: Double
        public var positionExponent: Double?
        public var positionNoise: ObservationModel?
        public var positionSensitivities: [String: Double]
        public var gatewayBeaconSightings: Int
        /// Absent when no fit of the links was made.
        public var links: Links?
        public var linkAlerts: [String: Int]
        public var tagAlerts: [String: Int]

        public init(_ summary: Summary) {
            let counters = summary.counters
            sightings = summary.input.sightings
            lines = summary.input.lines
            skippedLines = summary.input.skipped.count
            applied = counters.applied
            late = counters.late
            untrackedBeacons = counters.untracked
            unknownGateways = counters.unknownGateway
            events = counters.events
            from = summary.from
            to = summary.to
            wallSeconds = summary.wallSeconds
            positionExponent = summary.positionExponent
            positionNoise = summary.positionNoise
            positionSensitivities = Dictionary(
                uniqueKeysWithValues: summary.positionSensitivities.map { ($0.key.rawValue, $0.value) })
            gatewayBeaconSightings = summary.gatewayBeacons
            linkAlerts = summary.linkAlerts
            tagAlerts = summary.tagAlerts
            links = summary.linkFit.map { fit in
                func named(_ values: [GatewayID: LinkCalibration.Estimate]) -> [String: Estimate] {
                    Dictionary(uniqueKeysWithValues: values.map { ($0.key.rawValue, Estimate($0.value)) })
                }
                return Links(
                    fitsApplied: summary.linkFits, linksUsed: fit.linksUsed, residualSigma: fit.residualSigma,
                    pathLossExponent: Estimate(fit.pathLossExponent), receiveGains: named(fit.receiveGains),
                    transmitOffsets: named(fit.transmitOffsets),
                    wallLosses: Dictionary(
                        uniqueKeysWithValues: fit.wallLosses.map { (String($0.key), Estimate($0.value)) }),
                    antennaFrontToBack: named(fit.antennaFrontToBack),
                    advertisingIntervals: Dictionary(
                        uniqueKeysWithValues: summary.advertisingIntervals.map { ($0.key.rawValue, $0.value) }))
            }
        }

        /// Pretty-printed JSON with sorted keys.
        public func json() throws -> Data {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
            return try encoder.encode(self)
        }
    }
}

extension ReplayTool {
    /// One carriage-return-led progress line for a terminal: a bar when the share is known, and the scan time reached.
    public static func progressLine(share: Double?, t: Double) -> String {
        let bar = share.map { share in
            let filled = Int(min(max(share, 0), 1) * 30)
            return "[" + String(repeating: "#", count: filled) + String(repeating: ".", count: 30 - filled) + "] "
                + "\(Int(min(max(share, 0), 1) * 100)) % "
        }
        return "\r\(bar ?? "")scan time \(Date(timeIntervalSince1970: t).formatted(.iso8601))   "
    }

    /// The gateway beacons' advertising intervals the replay estimated, as one clause: their median and range.
    static func intervalText(_ intervals: [GatewayID: Double]) -> String {
        let sorted = intervals.values.sorted()
        guard let low = sorted.first, let high = sorted.last else { return "" }
        let median = sorted[sorted.count / 2]
        return "advertising every \(String(format: "%.2f", median)) s (estimated; \(String(format: "%.2f", low))–"
            + "\(String(format: "%.2f", high)) s), "
    }

    /// The summary a person reads after a replay.
    public static func report(_ summary: Summary) -> String {
        let counters = summary.counters
        let rate = Double(summary.input.sightings) / max(summary.wallSeconds, 1e-9)
        var lines = [
            "beacon-hub replay: \(summary.input.sightings) sightings (\(summary.input.batches) batches, "
                + "\(summary.input.lines) lines) in \(String(format: "%.1f", summary.wallSeconds)) s "
                + "(\(Int(rate)) sightings/s)",
            "  applied \(counters.applied), late \(counters.late) (kept, not applied), untracked beacons "
                + "\(counters.untracked), unknown gateways \(counters.unknownGateway)",
            "  \(summary.events) events: "
                + counters.events.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", "),
        ]
        if let exponent = summary.positionExponent {
            // As the setting reads (2.2, or 2.25 when given so): scripts take it back as an exponent.
            lines.append("  position map at the end: path-loss exponent \(exponent)")
        }
        if let noise = summary.positionNoise {
            lines.append(
                "  observation model at the end: spread \(noise.sigma) dB, tails of \(noise.degrees) degrees of "
                    + "freedom, \(String(format: "%.0f", noise.loss * 100)) % lost")
        }
        let raised = summary.positionSensitivities.filter { $0.value > summary.configuredSensitivity + 0.25 }
        if !raised.isEmpty {
            let named = raised.sorted { $0.key.rawValue < $1.key.rawValue }.map {
                "\($0.key) \(String(format: "%.1f", $0.value))"
            }
            lines.append(
                "  sensitivities taken from the gateways' quietest readings (dBm): \(named.joined(separator: ", "))")
        }
        if summary.gatewayBeacons > 0 {
            var line = "  gateways' own beacons: \(summary.gatewayBeacons) sightings (links, not tags)"
            if let fit = summary.linkFit {
                let gains = fit.receiveGains.sorted { $0.key.rawValue < $1.key.rawValue }.map {
                    "\($0.key) \(String(format: "%+.1f", $0.value.value))±\(String(format: "%.1f", $0.value.sigma))"
                }
                // Before the gains: scripts read the gains as everything after "gains (dB)".
                let antennas = fit.antennaFrontToBack.sorted { $0.key.rawValue < $1.key.rawValue }.map {
                    "\($0.key) \(String(format: "%.1f", $0.value.value))±\(String(format: "%.1f", $0.value.sigma))"
                }
                line +=
                    "; \(summary.linkFits) fits applied; last: \(fit.linksUsed) links, residual "
                    + "\(String(format: "%.1f", fit.residualSigma)) dB, exponent "
                    + "\(String(format: "%.2f", fit.pathLossExponent.value)), "
                    + (antennas.isEmpty ? "" : "antennas front-to-back (dB) \(antennas.joined(separator: ", ")), ")
                    + intervalText(summary.advertisingIntervals) + "gains (dB) \(gains.joined(separator: ", "))"
            }
            lines.append(line)
        }
        for (label, counts) in [("link alerts", summary.linkAlerts), ("tag alerts", summary.tagAlerts)]
        where !counts.isEmpty {
            lines.append(
                "  \(label): "
                    + counts.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", "))
        }
        if summary.commits > 0 {
            lines.append("  history: \(summary.storedRows) rows in \(summary.commits) commits")
        }
        if !summary.input.skipped.isEmpty {
            lines.append(
                "  skipped \(summary.input.skipped.count) unreadable lines; first: \(summary.input.skipped[0])")
        }
        return lines.joined(separator: "\n")
    }
}
