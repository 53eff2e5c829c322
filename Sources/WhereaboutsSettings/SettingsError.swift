/// Why settings are unusable: bad usage, which every executable reports as `<program>: <message>` and exit
/// status 2. `help` asks for the usage text instead.
public enum SettingsError: Error, Sendable, Hashable, CustomStringConvertible {
    /// `--help` was given.
    case help
    /// A setting is missing, malformed or out of range; the message says which and why.
    case invalid(String)

    public var description: String {
        switch self {
        case .help: "--help"
        case .invalid(let message): message
        }
    }
}
