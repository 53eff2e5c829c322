import CommandLineSupport
import WhereaboutsCore
import WhereaboutsMapFile
import WhereaboutsSurvey
import WhereaboutsWire

/// Reading and writing the files the offline commands share: maps and JSON Lines recordings.
enum RecordingFiles {
    /// Loads and validates a map, or throws a usage error listing every problem.
    static func map(_ path: String) throws -> FloorMap {
        switch FloorMap.parse(try FileAccess.read(path)) {
        case .success(let map):
            return map
        case .failure(let problems):
            let lines = problems.problems.map { "  \($0)" }.joined(separator: "\n")
            throw UsageError("\(path): bad map (\(problems.problems.count) problems)\n\(lines)")
        }
    }

    /// Reads a recording. Bad lines are reported with their numbers (the first few in full) and counted, not fatal.
    static func records<Record: RecordingLine>(_ path: String, as type: Record.Type) throws -> (
        records: [Record], badLines: Int
    ) {
        let bytes = try FileAccess.read(path)
        let decoded = JSONLines.decode(String(decoding: bytes, as: UTF8.self), as: type)
        let shown = 20
        for error in decoded.errors.prefix(shown) { printError("\(path):\(error.line): \(error.error)") }
        if decoded.errors.count > shown {
            printError("\(path): \(decoded.errors.count - shown) more bad lines not shown")
        }
        return (decoded.records, decoded.errors.count)
    }

    /// Writes records as JSON Lines.
    static func write(_ lines: [some RecordingLine], to path: String) throws {
        var text = ""
        text.reserveCapacity(lines.count * 128)
        for line in lines { text += JSONLines.line(line) }
        try FileAccess.write(Array(text.utf8), to: path)
    }
}

/// Fixed-point text for tables, without Foundation's formatters (``fixedPointText(_:_:)``, shared with the survey's
/// report).
func fixed(_ value: Double, _ decimals: Int = 2) -> String { fixedPointText(value, decimals) }
