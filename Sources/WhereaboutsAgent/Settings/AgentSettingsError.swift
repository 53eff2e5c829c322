import WhereaboutsSettings

/// Why the agent's settings are unusable: bad usage, exit status 2. `help` asks for the usage text.
public enum AgentSettingsError: Error, Sendable, Hashable, CustomStringConvertible {
    /// `--help` was given.
    case help
    /// A setting is missing, malformed or out of range; the message says which and why.
    case invalid(String)

    /// The agent's error for a settings error.
    init(_ error: SettingsError) {
        switch error {
        case .help: self = .help
        case .invalid(let message): self = .invalid(message)
        }
    }

    public var description: String {
        switch self {
        case .help: AgentSettings.usage
        case .invalid(let message): message
        }
    }
}
