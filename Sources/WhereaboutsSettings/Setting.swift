/// One setting an executable reads: its flag, its `WHEREABOUTS_*` name, and what kind of value it takes.
public struct Setting: Sendable, Hashable {
    /// How a setting is given.
    public enum Kind: Sendable, Hashable {
        /// `--name VALUE` or `--name=VALUE`, given at most once.
        case value
        /// `--name` alone; `true`/`false` (also `1`/`0`, `yes`/`no`, `on`/`off`) in the environment and files.
        case switchFlag
        /// `--name VALUE`, repeatable; comma- or space-separated in the environment and files.
        case list
        /// Never a flag, because a command line shows in `ps`; the hint says what to use instead.
        case secret(hint: String)
    }

    /// The flag's name, without the leading `--`; settings are looked up by it.
    public var name: String
    /// The environment variable and file key, or `nil` for a flag that has none.
    public var key: String?
    /// What the setting takes.
    public var kind: Kind

    public init(_ name: String, key: String?, kind: Kind) {
        self.name = name
        self.key = key
        self.kind = kind
    }

    /// A setting that takes a value.
    public static func value(_ name: String, _ key: String? = nil) -> Setting {
        Setting(name, key: key, kind: .value)
    }

    /// A switch.
    public static func switchFlag(_ name: String, _ key: String? = nil) -> Setting {
        Setting(name, key: key, kind: .switchFlag)
    }

    /// A repeatable setting.
    public static func list(_ name: String, _ key: String? = nil) -> Setting {
        Setting(name, key: key, kind: .list)
    }

    /// A secret: settable only in the environment or a file.
    public static func secret(_ name: String, _ key: String, hint: String) -> Setting {
        Setting(name, key: key, kind: .secret(hint: hint))
    }
}

extension Setting {
    /// The broker settings every executable that talks to the broker takes, under the same names.
    public static let broker: [Setting] = [
        .value("broker", "WHEREABOUTS_BROKER"),
        .value("username", "WHEREABOUTS_USERNAME"),
        .secret(
            "password", "WHEREABOUTS_PASSWORD",
            hint: "the password is never taken on the command line: use --password-file or WHEREABOUTS_PASSWORD"),
        .value("password-file", "WHEREABOUTS_PASSWORD_FILE"),
        .value("ca-file", "WHEREABOUTS_CA_FILE"),
        .value("cert-file", "WHEREABOUTS_CERT_FILE"),
        .value("key-file", "WHEREABOUTS_KEY_FILE"),
        .switchFlag("insecure", "WHEREABOUTS_INSECURE"),
    ]
}
