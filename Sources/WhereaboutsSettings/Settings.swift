/// The settings of one run of an executable, each looked up in flags, then the environment, then an environment
/// file, then a configuration file, the first that has it winning.
///
/// The flags are checked against a table of ``Setting``s: an unknown or repeated flag is bad usage. With a
/// configuration file (`configFile`), two more flags are taken: `--env-file FILE` (which must exist) and
/// `--config FILE` (instead of the default, which may be missing). Files hold `KEY=VALUE` lines with the
/// environment variable names; an unknown key in a file is an error, since a typo should not pass silently,
/// while the process environment may carry other programs' variables. An empty value counts as not set.
///
/// Parsing is pure: the shell passes the arguments, the environment and a function that reads files.
public struct Settings: Sendable {
    /// A layer below the flags, in precedence order.
    struct Layer: Sendable {
        var origin: String
        var values: [String: String]
    }

    private let table: [Setting]
    private let flags: CommandLineFlags
    private let layers: [Layer]

    /// The arguments that are not options, in order.
    public var positionals: [String] { flags.positionals }

    /// Reads the settings.
    ///
    /// - Parameters:
    ///   - arguments: The command-line arguments, without the program name (and subcommand).
    ///   - table: The settings the executable takes.
    ///   - environment: The process environment (only the table's keys are read).
    ///   - configFile: The default configuration file, or `nil` for flags and environment only (no files).
    ///   - positionalLimit: How many arguments that are not options are allowed.
    ///   - readFile: Reads the `--env-file` and the configuration file.
    /// - Throws: ``SettingsError/help`` when `--help` is anywhere in `arguments`, else ``SettingsError/invalid(_:)``.
    public init(
        arguments: [String], table: [Setting], environment: [String: String], configFile: String? = nil,
        positionalLimit: Int = 0, readFile: (String) -> SettingsFile = { _ in .missing }
    ) throws(SettingsError) {
        if arguments.contains("--help") { throw .help }
        let flagTable = table + CommandInterface.fileSettings(configFile: configFile)
        flags = try CommandLineFlags(arguments, table: flagTable, positionalLimit: positionalLimit)
        self.table = table
        let keys = Set(table.compactMap(\.key))
        var layers = [Layer(origin: "the environment", values: environment.filter { keys.contains($0.key) })]
        if let configFile {
            if let path = flags.values["env-file"]?.last {
                layers.append(try Self.layer(path, readFile(path), keys: keys, optional: false))
            }
            let path = flags.values["config"]?.last ?? configFile
            layers.append(try Self.layer(path, readFile(path), keys: keys, optional: flags.values["config"] == nil))
        }
        self.layers = layers
    }

    /// Reads the settings `interface` declares, with its configuration file and positional limit.
    ///
    /// - Throws: ``SettingsError/help`` for `--help`, else ``SettingsError/invalid(_:)``; also when the declaration
    ///   itself is faulty (``CommandInterface/problems``), so that a flag without help fails the program's first run.
    public init(
        arguments: [String], interface: CommandInterface, environment: [String: String],
        readFile: (String) -> SettingsFile = { _ in .missing }
    ) throws(SettingsError) {
        if let problem = interface.problems.first {
            throw .invalid("\(interface.program) declares its settings wrongly: \(problem)")
        }
        try self.init(
            arguments: arguments, table: interface.table, environment: environment, configFile: interface.configFile,
            positionalLimit: interface.positionalLimit, readFile: readFile)
    }

    private static func layer(_ path: String, _ file: SettingsFile, keys: Set<String>, optional: Bool)
        throws(SettingsError) -> Layer
    {
        switch file {
        case .text(let text):
            let parsed = try KeyValueText(text, origin: path)
            for key in parsed.values.keys.sorted() where !keys.contains(key) {
                throw .invalid("\(path):\(parsed.lines[key] ?? 0): unknown setting \(key)")
            }
            return Layer(origin: path, values: parsed.values)
        case .missing:
            if optional { return Layer(origin: path, values: [:]) }
            throw .invalid("cannot read \(path): no such file")
        case .unreadable(let reason):
            throw .invalid("cannot read \(path): \(reason)")
        }
    }

    /// The raw text of a setting and where it came from (`--name`, or `KEY in <file>`).
    public func lookup(_ name: String) -> (text: String, origin: String)? {
        guard let setting = table.first(where: { $0.name == name }) else { return nil }
        if let given = flags.values[name]?.last { return (given, "--\(name)") }
        guard let key = setting.key else { return nil }
        for layer in layers {
            if let text = layer.values[key], !text.isEmpty { return (text, "\(key) in \(layer.origin)") }
        }
        return nil
    }

    /// A setting's text, if given anywhere.
    public func value(_ name: String) -> String? {
        lookup(name)?.text
    }

    /// A setting that must be given; `what` explains it after the name.
    public func required(_ name: String, _ what: String? = nil) throws(SettingsError) -> String {
        if let text = value(name) { return text }
        let key = table.first { $0.name == name }?.key
        throw .invalid("--\(name) is required" + (key.map { " (or \($0))" } ?? "") + (what.map { ": \($0)" } ?? ""))
    }

    /// A switch: on when the flag is given, else as the environment or a file says.
    public func switchValue(_ name: String) throws(SettingsError) -> Bool {
        if flags.switches.contains(name) { return true }
        guard let (text, origin) = lookup(name) else { return false }
        switch text.lowercased() {
        case "1", "true", "yes", "on": return true
        case "0", "false", "no", "off": return false
        default: throw .invalid("\(origin) must be true or false, not \"\(text)\"")
        }
    }

    /// A repeatable setting: every flag, or the first layer's comma- or space-separated list.
    public func list(_ name: String) -> [String] {
        if let given = flags.values[name] { return given }
        guard let (text, _) = lookup(name) else { return [] }
        return text.split(whereSeparator: { $0 == "," || $0 == " " }).map(String.init)
    }

    /// A number, checked against `range` when one is given.
    public func number(_ name: String, in range: ClosedRange<Double>? = nil) throws(SettingsError) -> Double? {
        guard let (text, origin) = lookup(name) else { return nil }
        guard let number = Double(text), number.isFinite else {
            throw .invalid("\(origin) must be a number\(Self.describe(range)), not \"\(text)\"")
        }
        guard range?.contains(number) ?? true else {
            throw .invalid("\(origin) must be a number\(Self.describe(range)), not \"\(text)\"")
        }
        return number
    }

    /// A whole number, checked against `range` when one is given.
    public func integer(_ name: String, in range: ClosedRange<Int>? = nil) throws(SettingsError) -> Int? {
        guard let (text, origin) = lookup(name) else { return nil }
        guard let number = Int(text), range?.contains(number) ?? true else {
            throw .invalid("\(origin) must be a whole number\(Self.describe(range)), not \"\(text)\"")
        }
        return number
    }

    private static func describe<Bound>(_ range: ClosedRange<Bound>?) -> String {
        range.map { " from \($0.lowerBound) to \($0.upperBound)" } ?? ""
    }
}
