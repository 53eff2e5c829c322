/// A small command-line reader: `--name value`, `--name=value`, `--flag`, and positional arguments.
///
/// Every option read is checked off, so that ``finish()`` can reject a misspelled one instead of ignoring it.
public struct Arguments: Sendable {
    private var remaining: [String]

    /// Reads `arguments`, which do not include the program name.
    public init(_ arguments: [String]) {
        remaining = arguments
    }

    /// The value of `--name`, if given.
    ///
    /// - Throws: ``UsageError`` when the option is given without a value.
    public mutating func option(_ name: String) throws(UsageError) -> String? {
        let flag = "--\(name)"
        for index in remaining.indices {
            let argument = remaining[index]
            if argument == flag {
                guard index + 1 < remaining.count, !remaining[index + 1].hasPrefix("--") else {
                    throw UsageError("\(flag) needs a value")
                }
                let value = remaining[index + 1]
                remaining.removeSubrange(index...(index + 1))
                return value
            }
            if argument.hasPrefix(flag + "=") {
                remaining.remove(at: index)
                return String(argument.dropFirst(flag.count + 1))
            }
        }
        return nil
    }

    /// Every value of a repeatable option.
    public mutating func options(_ name: String) throws(UsageError) -> [String] {
        var values: [String] = []
        while let value = try option(name) { values.append(value) }
        return values
    }

    /// Whether `--name` is given (and removes it).
    public mutating func flag(_ name: String) -> Bool {
        guard let index = remaining.firstIndex(of: "--\(name)") else { return false }
        remaining.remove(at: index)
        return true
    }

    /// A numeric option.
    public mutating func number(_ name: String) throws(UsageError) -> Double? {
        guard let text = try option(name) else { return nil }
        guard let value = Double(text), value.isFinite else {
            throw UsageError("--\(name) needs a number, not \"\(text)\"")
        }
        return value
    }

    /// A whole-number option.
    public mutating func integer(_ name: String) throws(UsageError) -> Int? {
        guard let text = try option(name) else { return nil }
        guard let value = Int(text) else { throw UsageError("--\(name) needs a whole number, not \"\(text)\"") }
        return value
    }

    /// Whether `--name` is given, as a flag or with a value (without consuming it).
    public func contains(_ name: String) -> Bool {
        remaining.contains { $0 == "--\(name)" || $0.hasPrefix("--\(name)=") }
    }

    /// The next positional argument, if any.
    public mutating func positional() -> String? {
        guard let index = remaining.firstIndex(where: { !$0.hasPrefix("--") }) else { return nil }
        return remaining.remove(at: index)
    }

    /// Rejects anything not read.
    public func finish() throws(UsageError) {
        guard remaining.isEmpty else {
            throw UsageError(
                "unexpected argument\(remaining.count > 1 ? "s" : ""): \(remaining.joined(separator: " "))")
        }
    }
}
