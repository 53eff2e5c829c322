/// Writes JSON deterministically: members in the order given, numbers in their shortest round-trip form.
///
/// Non-finite numbers, which JSON cannot carry, are written as `null`. The text is built as UTF-8 bytes and made a
/// string once: appending many short pieces to a `String` costs more than the rest of the writing together (the
/// locator writes a position payload per tag and estimate).
public struct JSONWriter: Sendable {
    /// Whether to indent nested values (two spaces) for people to read.
    public var pretty: Bool

    public init(pretty: Bool = false) {
        self.pretty = pretty
    }

    /// The document as a string.
    public func string(_ value: JSONValue) -> String {
        var output: [UInt8] = []
        output.reserveCapacity(256)
        write(value, into: &output, indent: 0)
        return String(decoding: output, as: UTF8.self)
    }

    /// Appends the document to `output` as UTF-8.
    private func write(_ value: JSONValue, into output: inout [UInt8], indent: Int) {
        switch value {
        case .null: Self.append("null", to: &output)
        case .bool(let flag): Self.append(flag ? "true" : "false", to: &output)
        case .number(let number): Self.appendNumber(number, to: &output)
        case .string(let text): Self.appendString(text, to: &output)
        case .array(let elements):
            guard !elements.isEmpty else {
                Self.append("[]", to: &output)
                return
            }
            output.append(UInt8(ascii: "["))
            for (index, element) in elements.enumerated() {
                if index > 0 { output.append(UInt8(ascii: ",")) }
                newline(&output, indent + 1)
                write(element, into: &output, indent: indent + 1)
            }
            newline(&output, indent)
            output.append(UInt8(ascii: "]"))
        case .object(let object):
            guard !object.members.isEmpty else {
                Self.append("{}", to: &output)
                return
            }
            output.append(UInt8(ascii: "{"))
            for (index, member) in object.members.enumerated() {
                if index > 0 { output.append(UInt8(ascii: ",")) }
                newline(&output, indent + 1)
                Self.appendString(member.key, to: &output)
                output.append(UInt8(ascii: ":"))
                if pretty { output.append(UInt8(ascii: " ")) }
                write(member.value, into: &output, indent: indent + 1)
            }
            newline(&output, indent)
            output.append(UInt8(ascii: "}"))
        }
    }

    private func newline(_ output: inout [UInt8], _ indent: Int) {
        guard pretty else { return }
        output.append(UInt8(ascii: "\n"))
        output.append(contentsOf: repeatElement(UInt8(ascii: " "), count: 2 * indent))
    }

    static func append(_ text: StaticString, to output: inout [UInt8]) {
        text.withUTF8Buffer { output.append(contentsOf: $0) }
    }

    /// Appends a number as UTF-8: integers without a fraction, others in Swift's shortest round-trip form.
    static func appendNumber(_ number: Double, to output: inout [UInt8]) {
        guard number.isFinite else {
            append("null", to: &output)
            return
        }
        if number.rounded() == number, abs(number) < 1e15 {
            appendInteger(Int(number), to: &output)
        } else if let thousandths = exactThousandths(number) {
            appendThousandths(thousandths, to: &output)
        } else {
            output.append(contentsOf: number.description.utf8)
        }
    }

    /// `k` when `number` is the double nearest to k / 1000 and under 10^12 in magnitude, else nil.
    ///
    /// Payloads round metres and seconds to three decimals, and `description` makes a `String` for each number.
    /// For such a number the shortest decimal that reads back as it, which `description` writes, is k / 1000
    /// itself: a decimal with fewer digits is a multiple of 0.01, at least 0.001 from k / 1000 unless it is k /
    /// 1000 with its trailing zeros dropped, while below 10^12 the doubles that read back as the same number span
    /// under 0.0003; and `description` writes positional notation from 0.0001 up to 2^53.
    static func exactThousandths(_ number: Double) -> Int? {
        guard abs(number) < 1e12 else { return nil }
        let scaled = (number * 1000).rounded()
        guard scaled / 1000 == number else { return nil }
        return Int(scaled)
    }

    /// Writes k / 1000 in positional notation without trailing zeros.
    private static func appendThousandths(_ thousandths: Int, to output: inout [UInt8]) {
        var fraction = thousandths.magnitude % 1000
        // Integers take the other way, but a whole k / 1000 must not loop below.
        guard fraction != 0 else {
            appendInteger(thousandths / 1000, negative: thousandths < 0, to: &output)
            return
        }
        var digits = 3
        while fraction % 10 == 0 {
            fraction /= 10
            digits -= 1
        }
        // Written backwards into a buffer of its own and appended at once: an array's append checks its buffer
        // every time, and a payload is mostly numbers.
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 32) { buffer in
            var start = buffer.count
            for _ in 0..<digits {
                start -= 1
                buffer[start] = UInt8(ascii: "0") + UInt8(fraction % 10)
                fraction /= 10
            }
            start -= 1
            buffer[start] = UInt8(ascii: ".")
            start = writeDigits(thousandths.magnitude / 1000, negative: thousandths < 0, before: start, in: buffer)
            output.append(contentsOf: UnsafeBufferPointer(rebasing: buffer[start...]))
        }
    }

    /// Appends an integer's decimal digits.
    private static func appendInteger(_ value: Int, to output: inout [UInt8]) {
        appendInteger(value, negative: value < 0, to: &output)
    }

    /// Appends an integer's decimal digits, with a minus sign when `negative` (so that -0.5 rounded towards zero
    /// keeps its sign).
    private static func appendInteger(_ value: Int, negative: Bool, to output: inout [UInt8]) {
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 24) { buffer in
            let start = writeDigits(value.magnitude, negative: negative, before: buffer.count, in: buffer)
            output.append(contentsOf: UnsafeBufferPointer(rebasing: buffer[start...]))
        }
    }

    /// Writes `magnitude`'s digits, and a minus sign when `negative`, to end just before `end` in `buffer`, which
    /// must have room (21 bytes for any `UInt`); returns where they start.
    private static func writeDigits(
        _ magnitude: UInt, negative: Bool, before end: Int, in buffer: UnsafeMutableBufferPointer<UInt8>
    ) -> Int {
        var magnitude = magnitude
        var start = end
        repeat {
            start -= 1
            buffer[start] = UInt8(ascii: "0") + UInt8(magnitude % 10)
            magnitude /= 10
        } while magnitude > 0
        if negative {
            start -= 1
            buffer[start] = UInt8(ascii: "-")
        }
        return start
    }

    /// Appends a quoted string with the escapes JSON requires.
    public static func appendString(_ text: String, to output: inout String) {
        var bytes: [UInt8] = []
        appendString(text, to: &bytes)
        output += String(decoding: bytes, as: UTF8.self)
    }

    /// Appends a quoted string, as UTF-8, with the escapes JSON requires.
    private static func appendString(_ text: String, to output: inout [UInt8]) {
        appendString(text.utf8, to: &output)
    }

    /// Appends a string given as UTF-8 bytes, quoted, with the escapes JSON requires.
    static func appendString(_ text: some Sequence<UInt8>, to output: inout [UInt8]) {
        let done: Void? = text.withContiguousStorageIfAvailable { appendString($0, to: &output) }
        if done == nil { Array(text).withUnsafeBufferPointer { appendString($0, to: &output) } }
    }

    /// Appends a string given as UTF-8 bytes, quoted, with the escapes JSON requires: the runs between escapes
    /// are copied whole.
    static func appendString(_ text: UnsafeBufferPointer<UInt8>, to output: inout [UInt8]) {
        output.append(UInt8(ascii: "\""))
        // Every byte that needs an escape is ASCII, so the UTF-8 bytes can be copied as they are between escapes: a
        // byte of a multi-byte character is never below 0x80.
        var runStart = 0
        for index in text.indices {
            let byte = text[index]
            guard byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") else { continue }
            output.append(contentsOf: UnsafeBufferPointer(rebasing: text[runStart..<index]))
            runStart = index + 1
            switch byte {
            case UInt8(ascii: "\""): append("\\\"", to: &output)
            case UInt8(ascii: "\\"): append("\\\\", to: &output)
            case UInt8(ascii: "\n"): append("\\n", to: &output)
            case UInt8(ascii: "\r"): append("\\r", to: &output)
            case UInt8(ascii: "\t"): append("\\t", to: &output)
            default:
                let digits: StaticString = "0123456789abcdef"
                append("\\u00", to: &output)
                output.append(digits.utf8Start[Int(byte >> 4)])
                output.append(digits.utf8Start[Int(byte & 0xF)])
            }
        }
        output.append(contentsOf: UnsafeBufferPointer(rebasing: text[runStart...]))
        output.append(UInt8(ascii: "\""))
    }
}
