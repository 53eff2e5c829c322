/// A program's command line, declared once: the settings it takes (in titled groups), where its files are, and the
/// words around them. The parser's table (``table``) and the `--help` text (``usage``) are both made from it.
public struct CommandInterface: Sendable, Hashable {
    /// A group of settings under an optional title.
    public struct Section: Sendable, Hashable {
        /// The group's title line, or nil for none.
        public var title: String?
        /// The group's settings, in the order the usage lists them.
        public var settings: [Setting]

        /// A group under `title`.
        public init(_ title: String, _ settings: [Setting]) {
            self.title = title
            self.settings = settings
        }

        /// A group without a title.
        public init(_ settings: [Setting]) {
            self.title = nil
            self.settings = settings
        }
    }

    /// The program as the usage names it (`whereabouts-locator`, `whereabouts sim`).
    public var program: String
    /// What follows `usage: `, lines after the first indented as they should show.
    public var synopsis: String
    /// Paragraphs between the synopsis and the settings, or nil.
    public var introduction: String?
    /// The settings, grouped.
    public var sections: [Section]
    /// Paragraphs after the settings (exit statuses, how options combine), or nil.
    public var notes: String?
    /// The default configuration file; with one, `--env-file` and `--config` are taken too.
    public var configFile: String?
    /// How many arguments that are not options are allowed.
    public var positionalLimit: Int

    /// A program's command line; see the properties for each part.
    public init(
        program: String, synopsis: String, introduction: String? = nil, sections: [Section], notes: String? = nil,
        configFile: String? = nil, positionalLimit: Int = 0
    ) {
        self.program = program
        self.synopsis = synopsis
        self.introduction = introduction
        self.sections = sections
        self.notes = notes
        self.configFile = configFile
        self.positionalLimit = positionalLimit
    }

    /// The settings the parser takes (without `--env-file` and `--config`, which ``Settings`` adds itself).
    public var table: [Setting] { sections.flatMap(\.settings) }

    /// The synopsis line(s), as bad usage quotes them.
    public var synopsisText: String { "usage: " + synopsis }

    /// The `--env-file` and `--config` flags a program with a configuration file takes.
    public var fileSettings: [Setting] { Self.fileSettings(configFile: configFile) }

    static func fileSettings(configFile: String?) -> [Setting] {
        guard let configFile else { return [] }
        return [
            .value("env-file", "FILE", "KEY=VALUE file of WHEREABOUTS_* settings", key: .flagOnly),
            .value("config", "FILE", "configuration file", default: configFile, key: .flagOnly),
        ]
    }

    /// What is wrong with the declaration itself: a setting without help or placeholder, a flag or a name declared
    /// twice. ``Settings`` refuses to parse with such an interface, so the first run of the program says so.
    public var problems: [String] {
        var problems: [String] = []
        var names: Set<String> = ["help"]
        var keys: Set<String> = []
        for setting in table + fileSettings {
            if !names.insert(setting.name).inserted { problems.append("--\(setting.name) is declared twice") }
            if let key = setting.key, !keys.insert(key).inserted { problems.append("\(key) is declared twice") }
            if setting.help.allSatisfy(\.isWhitespace) { problems.append("--\(setting.name) has no help") }
            switch setting.kind {
            case .value, .list:
                if setting.placeholder.isEmpty { problems.append("--\(setting.name) has no placeholder") }
            case .secret:
                if setting.key == nil { problems.append("--\(setting.name) is a secret without an environment name") }
            case .switchFlag:
                break
            }
            let allowed = setting.name.allSatisfy { ($0.isASCII && ($0.isLowercase || $0.isNumber)) || $0 == "-" }
            if setting.name.isEmpty || !allowed { problems.append("--\(setting.name) is not a flag name") }
        }
        return problems
    }
}
