public import WhereaboutsJSON

/// A record that is one line of a JSON Lines recording.
public protocol RecordingLine: Sendable {
    /// The line as a JSON object, members in a fixed order.
    var lineJSON: JSONValue { get }
    /// Decodes a line's JSON object.
    init(lineJSON: JSONValue) throws(PayloadError)
}

extension RecordingLine where Self: JSONPayload {
    public var lineJSON: JSONValue { json }
    public init(lineJSON: JSONValue) throws(PayloadError) { try self.init(json: lineJSON) }
}

/// A line of a recording that could not be decoded.
public struct LineError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The line number, from 1.
    public var line: Int
    /// What was wrong with it.
    public var error: PayloadError

    /// Makes a line error.
    public init(line: Int, error: PayloadError) {
        self.line = line
        self.error = error
    }

    public var description: String { "line \(line): \(error)" }
}

/// The records of a recording that decoded, and the lines that did not.
public struct DecodedLines<Record: RecordingLine>: Sendable {
    /// The good records, in file order.
    public var records: [Record]
    /// The bad lines, in file order.
    public var errors: [LineError]
}

/// Reads and writes recordings as JSON Lines: one compact JSON object per line, each line ending in `\n`.
///
/// Readers skip blank lines and accept `\r\n`. A bad line is reported with its number and does not stop
/// the rest of the file from being read.
public enum JSONLines {
    /// The longest line read, in bytes.
    public static let maximumLineBytes = 1 << 20

    /// One record as a line, with its `\n`.
    public static func line(_ record: some RecordingLine) -> String {
        var text = JSONWriter().string(record.lineJSON)
        text += "\n"
        return text
    }

    /// Records as JSON Lines text.
    public static func encode<Record: RecordingLine>(_ records: some Sequence<Record>) -> String {
        var text = ""
        for record in records { text += line(record) }
        return text
    }

    /// Decodes every line of `text` as a `Record`.
    public static func decode<Record: RecordingLine>(_ text: String, as type: Record.Type) -> DecodedLines<Record> {
        let parser = JSONParser(maximumBytes: maximumLineBytes, maximumDepth: 16)
        var result = DecodedLines<Record>(records: [], errors: [])
        for (index, rawLine) in text.utf8.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false)
            .enumerated()
        {
            var line = rawLine
            if line.last == UInt8(ascii: "\r") { line = line.dropLast() }
            if line.allSatisfy({ $0 == 0x20 || $0 == 0x09 }) { continue }
            do throws(PayloadError) {
                let value: JSONValue
                do {
                    value = try parser.parse(line)
                } catch {
                    throw .malformedJSON(error)
                }
                result.records.append(try Record(lineJSON: value))
            } catch {
                result.errors.append(LineError(line: index + 1, error: error))
            }
        }
        return result
    }
}

extension ZoneEvent: RecordingLine {
    /// The recording form, `{"t","tag","floor","zone","event"}`.
    public var lineJSON: JSONValue { recordingJSON }
    public init(lineJSON: JSONValue) throws(PayloadError) { try self.init(json: lineJSON) }
}
