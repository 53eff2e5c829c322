/// Writes JSON deterministically: members in the order given, numbers in their shortest round-trip form.
///
/// Non-finite numbers, which JSON cannot carry, are written as `null`.
public struct JSONWriter: Sendable {
    /// Whether to indent nested values (two spaces) for people to read.
    public var pretty: Bool

    public init(pretty: Bool = false) {
        self.pretty = pretty
    }

    /// The document as a string.
    public func string(_ value: JSONValue) -> String {
        var output = ""
        write(value, into: &output, indent: 0)
        return output
    }

    /// Appends the document to `output`.
    public func write(_ value: JSONValue, into output: inout String, indent: Int = 0) {
        switch value {
        case .null: output += "null"
        case .bool(let flag): output += flag ? "true" : "false"
        case .number(let number): Self.appendNumber(number, to: &output)
        case .string(let text): Self.appendString(text, to: &output)
        case .array(let elements):
            guard !elements.isEmpty else {
                output += "[]"
                return
            }
            output += "["
            for (index, element) in elements.enumerated() {
                if index > 0 { output += "," }
                newline(&output, indent + 1)
                write(element, into: &output, indent: indent + 1)
            }
            newline(&output, indent)
            output += "]"
        case .object(let object):
            guard !object.members.isEmpty else {
                output += "{}"
                return
            }
            output += "{"
            for (index, member) in object.members.enumerated() {
                if index > 0 { output += "," }
                newline(&output, indent + 1)
                Self.appendString(member.key, to: &output)
                output += pretty ? ": " : ":"
                write(member.value, into: &output, indent: indent + 1)
            }
            newline(&output, indent)
            output += "}"
        }
    }

    private func newline(_ output: inout String, _ indent: Int) {
        guard pretty else { return }
        output += "\n"
        output += String(repeating: "  ", count: indent)
    }

    /// Appends a number: integers without a fraction, others in Swift's shortest round-trip form.
    public static func appendNumber(_ number: Double, to output: inout String) {
        guard number.isFinite else {
            output += "null"
            return
        }
        if number.rounded() == number, abs(number) < 1e15 {
            output += String(Int(number))
        } else {
            output += number.description
        }
    }

    /// Appends a quoted string with the escapes JSON requires.
    public static func appendString(_ text: String, to output: inout String) {
        output += "\""
        var needsEscaping = false
        for byte in text.utf8 where byte < 0x20 || byte == 0x22 || byte == 0x5C {
            needsEscaping = true
            break
        }
        guard needsEscaping else {
            output += text
            output += "\""
            return
        }
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": output += "\\\""
            case "\\": output += "\\\\"
            case "\n": output += "\\n"
            case "\r": output += "\\r"
            case "\t": output += "\\t"
            default:
                if scalar.value < 0x20 {
                    let hex = String(scalar.value, radix: 16)
                    output += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
                } else {
                    output.unicodeScalars.append(scalar)
                }
            }
        }
        output += "\""
    }
}
