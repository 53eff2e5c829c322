public import WhereaboutsWire

/// Something the locator's pipeline asks its shell to do.
public enum LocatorAction: Sendable, Equatable {
    /// Publish a message.
    case publish(Publication)
    /// Append a line to the readings recording (`--record`).
    case record(String)
    /// Log a line at warning level (already rate-limited by the pipeline).
    case log(String)
}

extension LocatorAction {
    /// The topic a publication goes to; empty for other actions (for ordering actions deterministically).
    var topicName: String {
        if case .publish(let publication) = self { return publication.topic.name }
        return ""
    }
}
