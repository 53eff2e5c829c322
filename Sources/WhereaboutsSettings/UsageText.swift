extension CommandInterface {
    /// The `--help` text: the synopsis, the introduction, where settings may come from, every setting with its
    /// placeholder, help, default and environment name, then the notes.
    public var usage: String {
        var paragraphs = [synopsisText]
        if let introduction { paragraphs.append(introduction) }
        if let configFile {
            let file = configFile.split(separator: "/").last.map(String.init) ?? configFile
            paragraphs.append(
                UsageText.wrap(
                    "Every option can also be set in the environment, an --env-file or \(configFile), with the "
                        + "WHEREABOUTS_* name shown (precedence: flag > environment > env file > \(file) > default).",
                    width: UsageText.width
                ).joined(separator: "\n"))
        }
        var groups = sections
        groups.append(Section(fileSettings + [.switchFlag("help", "print this text", key: .flagOnly)]))
        for group in groups {
            var lines = group.title.map { [$0] } ?? []
            for setting in group.settings { lines += UsageText.entry(setting) }
            paragraphs.append(lines.joined(separator: "\n"))
        }
        if let notes { paragraphs.append(notes) }
        return paragraphs.joined(separator: "\n\n")
    }
}

/// How the usage lays a setting out: the flag and placeholder from column 2, the help from column 27, and the
/// environment name from column 80 on the help's first line.
enum UsageText {
    /// The widest a usage line should be.
    static let width = 116
    static let helpColumn = 27
    static let keyColumn = 80

    /// The lines of one setting.
    static func entry(_ setting: Setting) -> [String] {
        var left: String
        var key = setting.key
        switch setting.kind {
        case .secret:
            // Never a flag: the environment name is what there is to write.
            left = "  " + (setting.key ?? setting.name)
            key = nil
        case .switchFlag:
            left = "  --" + setting.name
        case .value, .list:
            left = "  --\(setting.name) \(setting.placeholder)"
        }
        var help = setting.help
        if case .list = setting.kind { help += "; repeatable" }
        if let defaultText = setting.defaultText { help += " (default \(defaultText))" }
        let helpWidth = (key == nil ? width : keyColumn - 2) - helpColumn
        var lines: [String] = []
        if left.count > helpColumn - 2 {
            lines.append(left)
            left = ""
        }
        for (index, line) in wrap(help, width: helpWidth).enumerated() {
            var text = (index == 0 ? left : "").padded(to: helpColumn) + line
            if index == 0, let key { text = text.padded(to: keyColumn) + key }
            lines.append(text)
        }
        return lines
    }

    /// `text` in lines of at most `width` characters, broken at spaces (a longer word gets a line of its own).
    static func wrap(_ text: String, width: Int) -> [String] {
        var lines: [String] = []
        var line = ""
        for word in text.split(separator: " ") {
            if line.isEmpty {
                line = String(word)
            } else if line.count + 1 + word.count <= width {
                line += " " + word
            } else {
                lines.append(line)
                line = String(word)
            }
        }
        if !line.isEmpty || lines.isEmpty { lines.append(line) }
        return lines
    }
}

extension String {
    fileprivate func padded(to column: Int) -> String {
        count >= column ? self + " " : self + String(repeating: " ", count: column - count)
    }
}
