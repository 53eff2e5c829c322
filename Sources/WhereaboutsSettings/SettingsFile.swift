/// What reading a settings file gave; the shell reads files, the parser only sees this.
public enum SettingsFile: Sendable, Hashable {
    /// The file's text.
    case text(String)
    /// There is no such file.
    case missing
    /// The file exists but could not be read; the reason in words.
    case unreadable(String)
}

/// `KEY=VALUE` lines, as in `/etc/whereabouts/*.conf` and environment files.
///
/// Blank lines and lines starting with `#` are skipped; whitespace around keys and values is trimmed, an
/// `export ` prefix is ignored, and one pair of matching quotes around a value is removed. A line without `=`
/// is an error, reported with its number, and so is a key given twice (with both numbers): which one wins would be
/// a guess at what was meant (systemd takes the last, a reader of the file often the first).
public struct KeyValueText: Sendable, Hashable {
    /// The values by key.
    public private(set) var values: [String: String] = [:]
    /// Each key's line number, for error messages.
    public private(set) var lines: [String: Int] = [:]

    /// Parses `text`; `origin` names it in errors.
    public init(_ text: String, origin: String) throws(SettingsError) {
        // "\r\n" is one Character in Swift, so files with Windows line ends need it named as a separator.
        let textLines = text.split(omittingEmptySubsequences: false, whereSeparator: { $0 == "\n" || $0 == "\r\n" })
        for (index, rawLine) in textLines.enumerated() {
            var line = Self.trimmed(rawLine)
            if line.isEmpty || line.hasPrefix("#") { continue }
            if line.hasPrefix("export ") { line = Self.trimmed(line.dropFirst(7)) }
            guard let equals = line.firstIndex(of: "=") else {
                throw .invalid("\(origin):\(index + 1): expected KEY=VALUE, not \"\(line)\"")
            }
            let key = Self.trimmed(line[..<equals])
            var value = Self.trimmed(line[line.index(after: equals)...])
            if value.count >= 2, let first = value.first, first == "\"" || first == "'", value.last == first {
                value = String(value.dropFirst().dropLast())
            }
            guard !key.isEmpty else { throw .invalid("\(origin):\(index + 1): empty key") }
            if let first = lines[key] {
                throw .invalid("\(origin):\(index + 1): \(key) is given twice, first on line \(first); keep one")
            }
            values[key] = value
            lines[key] = index + 1
        }
    }

    private static func trimmed(_ text: some StringProtocol) -> String {
        let isSpace: (Character) -> Bool = { $0 == " " || $0 == "\t" || $0 == "\r" }
        guard let start = text.firstIndex(where: { !isSpace($0) }),
            let end = text.lastIndex(where: { !isSpace($0) })
        else { return "" }
        return String(text[start...end])
    }
}
