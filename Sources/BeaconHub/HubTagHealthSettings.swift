import BeaconConfig

/// hub.yaml's `tagHealth:` (docs/configuration.md): when a tag's battery is low and when a tag is missing.
public struct HubTagHealthSettings: Decodable, Sendable, Hashable {
    public var settings = TagHealth.Settings()

    enum CodingKeys: String, CodingKey, CaseIterable {
        case batteryLowMilliVolts, batteryRecoveredMilliVolts, missingAfterSeconds, missingAfterSecondsByRegion
        case advertIntervalSeconds, advertIntervalSecondsByRegion, advertWindowSeconds
    }

    public init() {}

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        func invalid(_ key: CodingKeys, _ message: String) -> DecodingError {
            DecodingError.dataCorruptedError(forKey: key, in: container, debugDescription: message)
        }
        if let low = try container.decodeIfPresent(Int.self, forKey: .batteryLowMilliVolts) {
            guard (1000...5000).contains(low) else {
                throw invalid(.batteryLowMilliVolts, "expected millivolts between 1000 and 5000, found \(low)")
            }
            settings.batteryLowMilliVolts = low
        }
        settings.batteryRecoveredMilliVolts =
            try container.decodeIfPresent(Int.self, forKey: .batteryRecoveredMilliVolts)
            ?? max(settings.batteryRecoveredMilliVolts, settings.batteryLowMilliVolts + 200)
        guard settings.batteryRecoveredMilliVolts > settings.batteryLowMilliVolts else {
            throw invalid(
                .batteryRecoveredMilliVolts,
                "must be above batteryLowMilliVolts (\(settings.batteryLowMilliVolts)): a battery is low below the "
                    + "one and recovered at the other")
        }
        if let after = try container.decodeIfPresent(Double.self, forKey: .missingAfterSeconds) {
            guard after >= 60 else {
                throw invalid(.missingAfterSeconds, "expected at least 60 seconds, found \(after)")
            }
            settings.missingAfterSeconds = after
        }
        let byRegion = try container.decodeIfPresent([String: Double].self, forKey: .missingAfterSecondsByRegion) ?? [:]
        if let (region, value) = byRegion.first(where: { $0.value < 60 }) {
            throw invalid(
                .missingAfterSecondsByRegion, "region \(region): expected at least 60 seconds, found \(value)")
        }
        settings.missingAfterByRegion = byRegion
        if let interval = try container.decodeIfPresent(Double.self, forKey: .advertIntervalSeconds) {
            guard (0.02...3600).contains(interval) else {
                throw invalid(.advertIntervalSeconds, "expected seconds between 0.02 and 3600, found \(interval)")
            }
            settings.advertIntervalSeconds = interval
        }
        let intervals =
            try container.decodeIfPresent([String: Double].self, forKey: .advertIntervalSecondsByRegion) ?? [:]
        if let (region, value) = intervals.first(where: { !(0.02...3600).contains($0.value) }) {
            throw invalid(
                .advertIntervalSecondsByRegion,
                "region \(region): expected seconds between 0.02 and 3600, found \(value)")
        }
        settings.advertIntervalByRegion = intervals
        if let window = try container.decodeIfPresent(Double.self, forKey: .advertWindowSeconds) {
            guard (10...86_400).contains(window) else {
                throw invalid(.advertWindowSeconds, "expected seconds between 10 and 86400, found \(window)")
            }
            settings.advertWindowSeconds = window
        }
    }
}
