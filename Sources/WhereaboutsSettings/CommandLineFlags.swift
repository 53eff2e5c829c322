/// The flags of a command line, checked against a table of settings.
struct CommandLineFlags: Sendable {
    var values: [String: [String]] = [:]
    var switches: Set<String> = []
    var positionals: [String] = []

    /// Reads `arguments`; at most `positionalLimit` of them may be other than options.
    init(_ arguments: [String], table: [Setting], positionalLimit: Int) throws(SettingsError) {
        var index = 0
        while index < arguments.count {
            let argument = arguments[index]
            index += 1
            guard argument.hasPrefix("--"), argument.count > 2 else {
                guard positionals.count < positionalLimit else {
                    throw .invalid("unexpected argument \"\(argument)\" (options start with --; see --help)")
                }
                positionals.append(argument)
                continue
            }
            var name = String(argument.dropFirst(2))
            var inlineValue: String?
            if let equals = name.firstIndex(of: "=") {
                inlineValue = String(name[name.index(after: equals)...])
                name = String(name[..<equals])
            }
            guard let setting = table.first(where: { $0.name == name }) else {
                throw .invalid("unknown option --\(name) (see --help)")
            }
            switch setting.kind {
            case .secret(let hint):
                throw .invalid(hint)
            case .switchFlag:
                guard inlineValue == nil else { throw .invalid("--\(name) takes no value") }
                switches.insert(name)
                continue
            case .value, .list:
                break
            }
            let value: String
            if let inlineValue {
                value = inlineValue
            } else {
                guard index < arguments.count, !arguments[index].hasPrefix("--") else {
                    throw .invalid("--\(name) needs a value")
                }
                value = arguments[index]
                index += 1
            }
            if case .list = setting.kind {
                values[name, default: []].append(value)
            } else {
                guard values[name] == nil else { throw .invalid("--\(name) is given more than once") }
                values[name] = [value]
            }
        }
    }
}
