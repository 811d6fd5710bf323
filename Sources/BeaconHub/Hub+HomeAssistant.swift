extension Hub.Session {
    /// Publishes every Home Assistant discovery config (nothing when `homeAssistant:` is off), in order with the
    /// rest: called once the hub has said `online`, and after each reconnect.
    func announceDiscovery() {
        core.withLock { _ in
            send(discovery.withLock { $0.announceAll() })
        }
    }
}
