import BeaconModel

/// Which of several hubs ingests: a pure state machine over what `hub/active` says (a hub's retained claim, or
/// nothing once the holder's last-will cleared it). The last claim the broker relayed wins, so hubs that claim at
/// once agree; a hub that sees another's claim after its own steps down.
public struct HubLock: Sendable, Hashable {
    public enum Role: Sendable, Hashable {
        /// Waiting to learn whether anyone holds the site.
        case undecided
        /// Another hub holds it.
        case standby(active: HubID)
        /// Our claim is published; not yet seen back.
        case claiming
        case active
    }

    /// What the hub must do after an observation.
    public enum Action: Sendable, Hashable {
        case none
        /// Publish our claim (retained) on `hub/active`.
        case claim
        /// Our claim stands: start ingesting.
        case activate
        /// Another hub claimed: stop ingesting.
        case stepDown
    }

    public let hub: HubID
    public private(set) var role = Role.undecided

    public init(hub: HubID) { self.hub = hub }

    /// `holder` is the hub named on `hub/active`, or nil when it is empty (cleared, or never claimed).
    public mutating func observe(holder: HubID?) -> Action {
        switch (holder, role) {
        case (nil, .active):
            // Cleared under us (a crashed standby's will, or our own lock connection dropped and came back):
            // claim again, still active.
            return .claim
        case (nil, _):
            role = .claiming
            return .claim
        case (hub, .active):
            return .none
        case (hub, _):
            role = .active
            return .activate
        case (let other?, .active):
            role = .standby(active: other)
            return .stepDown
        case (let other?, _):
            role = .standby(active: other)
            return .none
        }
    }
}
