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
