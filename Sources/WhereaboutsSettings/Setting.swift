/// One setting an executable reads, declared once: its flag, its value's placeholder, its one-line help, its default
/// as the usage shows it, and its `WHEREABOUTS_*` name.
///
/// The same value makes the parser's table and the usage text (``CommandInterface/usage``), so a flag cannot be
/// accepted without appearing in `--help`, and the help is not optional.
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

    /// Which name a setting has in the environment and in files.
    public enum Key: Sendable, Hashable {
        /// `WHEREABOUTS_` and the flag's name in capitals, `-` as `_` (`--lease-time`: `WHEREABOUTS_LEASE_TIME`).
        case derived
        /// A name of its own, for the few that predate the rule (`--constraint`: `WHEREABOUTS_CONSTRAINTS`).
        case named(String)
        /// None: a flag only.
        case flagOnly
    }

    /// The flag's name, without the leading `--`; settings are looked up by it.
    public var name: String
    /// The environment variable and file key, or `nil` for a flag that has none.
    public var key: String?
    /// What the setting takes.
    public var kind: Kind
    /// What the usage shows for the value (`SECONDS`, `FILE`); empty for switches and secrets.
    public var placeholder: String
    /// What the setting does, in a line or two; the usage wraps it.
    public var help: String
    /// The default as the usage shows it (`30`, `the cores online`), or `nil` when it goes without saying.
    public var defaultText: String?

    /// A setting; `help` is required, so that every flag explains itself in `--help`.
    public init(
        _ name: String, kind: Kind, placeholder: String, help: String, default defaultText: String? = nil,
        key: Key = .derived
    ) {
        self.name = name
        self.kind = kind
        self.placeholder = placeholder
        self.help = help
        self.defaultText = defaultText
        switch key {
        case .derived: self.key = Self.derivedKey(name)
        case .named(let named): self.key = named
        case .flagOnly: self.key = nil
        }
    }

    /// `WHEREABOUTS_` and `name` in capitals with `-` as `_`.
    public static func derivedKey(_ name: String) -> String {
        "WHEREABOUTS_" + String(name.uppercased().map { $0 == "-" ? "_" : $0 })
    }

    /// A setting that takes a value.
    public static func value(
        _ name: String, _ placeholder: String, _ help: String, default defaultText: String? = nil, key: Key = .derived
    ) -> Setting {
        Setting(name, kind: .value, placeholder: placeholder, help: help, default: defaultText, key: key)
    }

    /// A switch.
    public static func switchFlag(_ name: String, _ help: String, key: Key = .derived) -> Setting {
        Setting(name, kind: .switchFlag, placeholder: "", help: help, key: key)
    }

    /// A repeatable setting.
    public static func list(
        _ name: String, _ placeholder: String, _ help: String, default defaultText: String? = nil, key: Key = .derived
    ) -> Setting {
        Setting(name, kind: .list, placeholder: placeholder, help: help, default: defaultText, key: key)
    }

    /// A secret: settable only in the environment or a file; `hint` is the refusal of the flag.
    public static func secret(_ name: String, _ help: String, hint: String) -> Setting {
        Setting(name, kind: .secret(hint: hint), placeholder: "", help: help)
    }

    /// These settings without their environment names: flags only.
    public static func flagsOnly(_ settings: [Setting]) -> [Setting] {
        settings.map { setting in
            var copy = setting
            copy.key = nil
            return copy
        }
    }
}

extension Setting {
    /// The broker settings every executable that talks to the broker takes, under the same names;
    /// `defaultUsername` is the account the program uses when none is given, as the usage shows it.
    public static func broker(defaultUsername: String? = nil) -> [Setting] {
        [
            .value("broker", "URL", "mqtt://host[:port] or mqtts://host[:port]"),
            .value("username", "NAME", "broker account", default: defaultUsername),
            .secret(
                "password", "the password itself, in the environment or a file only (a command line shows in ps)",
                hint: "the password is never taken on the command line: use --password-file or WHEREABOUTS_PASSWORD"),
            .value("password-file", "FILE", "file holding the password"),
            .value("ca-file", "FILE", "CA certificate(s) to verify the broker"),
            .value("cert-file", "FILE", "client certificate"),
            .value("key-file", "FILE", "client key"),
            .switchFlag("insecure", "do not verify the broker's certificate (logged as a warning)"),
        ]
    }
}
