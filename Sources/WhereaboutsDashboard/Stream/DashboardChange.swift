/// One change for the pages: what changed, as the page reads it, numbered in order.
public struct DashboardChange: Sendable, Equatable {
    /// What changed.
    public enum Kind: Sendable, Equatable {
        /// A tag appeared or moved.
        case tag(TagView)
        /// A tag was lost (its retained position was cleared).
        case tagRemoved(id: String)
        /// A zone's occupancy.
        case zone(ZoneView)
        /// An enter or exit.
        case event(EventView)
        /// The locator's status or metrics.
        case locator(LocatorView)
        /// An agent went online or offline, at `since` (the dashboard's clock).
        case agent(id: String, online: Bool, since: Double)
        /// Whether the picture is current changed.
        case source(SourceView)
    }

    /// The change's number; a page ignores changes not newer than its snapshot.
    public var sequence: UInt64
    /// What changed.
    public var kind: Kind

    /// The Server-Sent Event carrying this change: named by its kind, with the sequence number as its id.
    public var serverSentEvent: ServerSentEvent {
        let id = String(sequence)
        return switch kind {
        case .tag(let tag): TagChange(sequence: sequence, tag: tag).serverSentEvent(id: id)
        case .tagRemoved(let tag): TagRemoval(sequence: sequence, id: tag).serverSentEvent(id: id)
        case .zone(let zone): ZoneChange(sequence: sequence, zone: zone).serverSentEvent(id: id)
        case .event(let event): EventChange(sequence: sequence, event: event).serverSentEvent(id: id)
        case .locator(let locator): LocatorChange(sequence: sequence, locator: locator).serverSentEvent(id: id)
        case .agent(let agent, let online, let since):
            AgentChange(sequence: sequence, id: agent, online: online, since: since).serverSentEvent(id: id)
        case .source(let source): SourceChange(sequence: sequence, source: source).serverSentEvent(id: id)
        }
    }
}
