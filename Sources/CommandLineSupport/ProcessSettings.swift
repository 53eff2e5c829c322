public import WhereaboutsCore
public import WhereaboutsSettings

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

// The shell's half of the settings: the real environment and real files, handed to the pure parser.

extension Settings {
    /// Reads the settings of this process: `arguments`, its environment and, with `configFile`, real files.
    public init(
        processArguments arguments: [String], table: [Setting], configFile: String? = nil, positionalLimit: Int = 0
    ) throws(SettingsError) {
        try self.init(
            arguments: arguments, table: table, environment: Environment.values(table.compactMap(\.key)),
            configFile: configFile, positionalLimit: positionalLimit, readFile: SettingsFileReader.read)
    }
}

extension Settings {
    /// Reads the settings `interface` declares from this process: `arguments`, its environment and, when the
    /// interface has a configuration file, real files.
    public init(processArguments arguments: [String], interface: CommandInterface) throws(SettingsError) {
        try self.init(
            arguments: arguments, interface: interface,
            environment: Environment.values(interface.table.compactMap(\.key)), readFile: SettingsFileReader.read)
    }
}

/// Reads settings files for the pure parser.
public enum SettingsFileReader {
    /// Reads a settings file whole, telling a missing file from an unreadable one. Only a regular file is read: a
    /// FIFO (or a device) given as `--config` would block the program before it says a word. `/dev/null` is read as
    /// the empty file it stands for (`--config /dev/null`: no settings file, as `scripts/bench.sh` runs the agent).
    public static func read(_ path: String) -> SettingsFile {
        if path == "/dev/null" { return .text("") }
        do {
            guard let bytes = try FileAccess.readStateFile(path, limit: 1 << 20) else { return .missing }
            guard let text = String(validating: bytes, as: UTF8.self) else { return .unreadable("not UTF-8 text") }
            return .text(text)
        } catch {
            return .unreadable(error.message)
        }
    }
}

extension Environment {
    /// The variables among `names` that are set and not empty.
    public static func values(_ names: some Sequence<String>) -> [String: String] {
        var values: [String: String] = [:]
        for name in names {
            if let value = value(name) { values[name] = value }
        }
        return values
    }
}

extension SettingsError {
    /// Reports the error the same way in every executable: the usage text on standard output for `--help`
    /// (status 0), else `<program>: <message>` on standard error (status 2).
    public func report(program: String, usage: String) -> ExitStatus {
        switch self {
        case .help:
            print(usage)
            return .success
        case .invalid(let message):
            printError("\(program): \(message)")
            return .usage
        }
    }
}

/// How many cores are online (at least 1).
public var onlineCores: Int { max(Int(sysconf(Int32(_SC_NPROCESSORS_ONLN))), 1) }

extension Settings {
    /// `--workers N`: how many threads an engine update may split its estimates among; by default the cores online.
    public func workers() throws(SettingsError) -> Int {
        guard let count = try number("workers", in: 1...256) else { return onlineCores }
        guard count == count.rounded() else { throw .invalid("--workers must be a whole number") }
        return Int(count)
    }

    /// `--positioning grid|trilateration` and `--lag S`: which tracker positions the tags (the grid filter by
    /// default), and the grid filter's fixed lag in seconds (0–10; trilateration has none).
    public func applyTracker(to configuration: inout LocatorEngine.Configuration) throws(SettingsError) {
        if let text = value("positioning") {
            // `automatic` meant the grid filter once it was the default for every map; it is refused, not taken.
            guard text != "automatic" else {
                throw .invalid("--positioning automatic is no more: it meant grid, the default; say grid")
            }
            guard let positioning = LocatorEngine.Configuration.Positioning(rawValue: text) else {
                throw .invalid("--positioning must be grid or trilateration, not \"\(text)\"")
            }
            configuration.positioning = positioning
        }
        if let lag = try number("lag", in: 0...10) {
            guard lag == 0 || configuration.positioning != .trilateration else {
                throw .invalid("--lag needs the grid filter: trilateration has no fixed-lag smoother")
            }
            configuration.grid.lag = lag
        }
    }
}
