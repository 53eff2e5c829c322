import WhereaboutsWire

/// Whether what the dashboard shows is current, and if not, which source of it was lost and since when.
///
/// Everything the dashboard shows has a source whose liveness it can see: `web`'s own connection to the broker,
/// the locator's retained status (its last will says `offline`), and, per zone, the agents covering it (the
/// locator's `unknown`). A value is only as current as the first of those that is lost, checked in that order: with
/// the broker lost nothing said since can have arrived, so the locator's last status is no longer news either. A
/// simulation that was told to end at a time (the demo's) is over after it, which explains silent agents and a
/// stopped locator better than either. The page adds the one source only it can see: its own stream from `web`.
public enum DashboardSource: Sendable, Equatable {
    /// The broker connection is up and the locator is online: values are current (zones by their own state).
    case live
    /// `web` has not reached the broker yet, since its start.
    case brokerConnecting(since: Double)
    /// `web` lost the broker at `since`: every value is as of then or older.
    case brokerLost(since: Double)
    /// The simulation feeding the dashboard ended at `at`.
    case simulationEnded(at: Double)
    /// The locator said `offline` (or its last will did) at `since`.
    case locatorGone(since: Double)
    /// The locator has not said whether it runs.
    case locatorUnknown

    /// The word the page and its tests read (`data-source` on the page's body).
    public var name: String {
        switch self {
        case .live: "live"
        case .brokerConnecting: "broker-connecting"
        case .brokerLost: "broker-lost"
        case .simulationEnded: "simulation-ended"
        case .locatorGone: "locator-gone"
        case .locatorUnknown: "locator-unknown"
        }
    }

    /// When the source was lost (Unix seconds, the dashboard's clock), if known.
    public var since: Double? {
        switch self {
        case .live, .locatorUnknown: nil
        case .brokerConnecting(let since), .brokerLost(let since), .locatorGone(let since): since
        case .simulationEnded(let at): at
        }
    }

    /// Whether values from the locator are current.
    public var isLive: Bool { self == .live }

    /// What the page's banner and the terminal's header say.
    public var sentence: String {
        switch self {
        case .live: "live"
        case .brokerConnecting: "connecting to the broker"
        case .brokerLost: "broker lost: nothing shown is current"
        case .simulationEnded: "the simulation ended: nothing moves any more"
        case .locatorGone: "the locator is offline: nothing shown is current"
        case .locatorUnknown: "the locator has not said that it runs"
        }
    }

    /// The source for what `web` knows: its broker link, a simulation's end, and the locator's last status.
    ///
    /// - Parameters:
    ///   - broker: the broker link (nil: not tracked, as when the state is fed by hand).
    ///   - simulationEnd: when the simulation feeding the broker ends, if one does.
    ///   - locator: the locator's last status and when it took it.
    ///   - now: the dashboard's clock.
    static func of(
        broker: BrokerLink?, simulationEnd: Double?, locator: (status: Availability, since: Double)?, now: Double
    ) -> DashboardSource {
        switch broker {
        case .connecting(let since): return .brokerConnecting(since: since)
        case .lost(let since): return .brokerLost(since: since)
        case .connected, nil: break
        }
        if let simulationEnd, now >= simulationEnd { return .simulationEnded(at: simulationEnd) }
        guard let locator else { return .locatorUnknown }
        return locator.status.isAvailable ? .live : .locatorGone(since: locator.since)
    }
}

/// `web`'s connection to the broker, as its MQTT client reports it.
public enum BrokerLink: Sendable, Equatable {
    /// Not connected yet since `since` (the start).
    case connecting(since: Double)
    /// Connected; `sessionKept` when the broker still had `web`'s session (its subscriptions and the messages
    /// queued for it), so that nothing said meanwhile was missed.
    case connected(sessionKept: Bool)
    /// Lost at `since`; the client is reconnecting.
    case lost(since: Double)
}
