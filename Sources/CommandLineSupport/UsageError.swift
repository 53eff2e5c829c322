/// Bad usage or bad configuration: the executable prints it and exits with status 2.
public struct UsageError: Error, Sendable, CustomStringConvertible {
    /// What is wrong, in words.
    public var message: String

    public init(_ message: String) {
        self.message = message
    }

    public var description: String { message }
}

/// A failure while running: the executable prints it and exits with status 1.
public struct RuntimeError: Error, Sendable, CustomStringConvertible {
    /// What went wrong, in words.
    public var message: String

    public init(_ message: String) {
        self.message = message
    }

    public var description: String { message }
}

/// The exit statuses every Whereabouts executable uses.
public enum ExitStatus: Int32, Sendable {
    /// Success.
    case success = 0
    /// A runtime failure.
    case failure = 1
    /// Bad usage or configuration.
    case usage = 2
    /// The command's own check refused to write its result (`whereabouts calibrate`: the calibrated map would be
    /// worse than the map it started from).
    case refused = 3
}
