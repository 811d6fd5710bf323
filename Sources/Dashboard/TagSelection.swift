import BeaconModel

/// Which live tags `/api/tags` and `/api/tags.csv` list, and in what order: their query parameters (docs/openapi.yaml),
/// read once so that both endpoints refuse the same values with the same messages.
struct TagSelection {
    /// `sort=`: the order of the list.
    enum Order: String, CaseIterable {
        /// By tag id (the default).
        case tag
        /// Lowest battery first; tags without a battery reading (no Eddystone-TLM) last.
        case battery
        /// Longest unheard first: tags never heard, then the oldest `lastSeen`.
        case lastSeen
    }

    /// `missing=`: a yes or no, spelt as JSON spells it.
    enum Flag: String, CaseIterable {
        case `true`, `false`
    }

    var zone: String?
    var state: TagState.State?
    var battery: TagState.Battery.Level?
    var missing: Bool?
    var order: Order

    init(_ query: Query) throws {
        zone = query.text("zone")
        state = try query.choice("state", TagState.State.self)
        battery = try query.choice("battery", TagState.Battery.Level.self)
        missing = try query.choice("missing", Flag.self).map { $0 == .true }
        order = try query.choice("sort", Order.self) ?? .tag
    }

    /// The tags that pass every filter, in the asked order (ties by tag id, so that the order is stable).
    func apply(to tags: some Sequence<TagState>) -> [TagState] {
        let chosen = tags.filter { tag in
            (zone == nil || tag.zone?.rawValue == zone) && (state == nil || tag.state == state)
                && (battery == nil || tag.battery?.level == battery)
                && (missing == nil || (tag.missing == true) == missing)
        }
        return chosen.sorted { a, b in
            switch order {
            case .tag:
                break
            case .battery:
                // No reading sorts after every reading: an unknown battery is not an empty one.
                let first = a.battery?.milliVolts ?? Int.max
                let second = b.battery?.milliVolts ?? Int.max
                if first != second { return first < second }
            case .lastSeen:
                // Never heard is the longest unheard.
                let first = a.lastSeen ?? -.infinity
                let second = b.lastSeen ?? -.infinity
                if first != second { return first < second }
            }
            return a.tag.rawValue < b.tag.rawValue
        }
    }
}
