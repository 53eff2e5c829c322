/// Why a document could not be parsed, and where.
public struct JSONParseError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What kind of problem it is.
    public enum Reason: Sendable, Equatable {
        /// The document is longer than the parser's byte limit; nothing was read.
        case tooLarge(limit: Int)
        /// Arrays and objects nest deeper than the parser's depth limit.
        case tooDeep(limit: Int)
        /// A byte that cannot start or continue a value here.
        case unexpectedCharacter
        /// The document ended inside a value.
        case unexpectedEnd
        /// A number that is not valid JSON or does not fit a `Double`.
        case invalidNumber
        /// A string with a bad escape, a raw control character or invalid UTF-8.
        case invalidString
        /// An object names the same key twice.
        case duplicateKey(String)
        /// Something follows the top-level value.
        case trailingData
    }

    /// What kind of problem it is.
    public var reason: Reason
    /// The byte offset where it was found.
    public var offset: Int

    public var description: String {
        switch reason {
        case .tooLarge(let limit): "document is larger than \(limit) bytes"
        case .tooDeep(let limit): "nesting deeper than \(limit) levels at byte \(offset)"
        case .unexpectedCharacter: "unexpected character at byte \(offset)"
        case .unexpectedEnd: "document ends early at byte \(offset)"
        case .invalidNumber: "invalid number at byte \(offset)"
        case .invalidString: "invalid string at byte \(offset)"
        case .duplicateKey(let key): "duplicate key \"\(key)\" at byte \(offset)"
        case .trailingData: "unexpected data after the value at byte \(offset)"
        }
    }
}

/// A strict JSON parser (RFC 8259) with limits on size and depth, for input that may be hostile.
///
/// It never recurses deeper than `maximumDepth`, checks the size before reading, rejects duplicate keys,
/// and accepts nothing that is not JSON (no comments, no trailing commas, no NaN).
public struct JSONParser: Sendable {
    /// The largest document accepted, in bytes.
    public var maximumBytes: Int
    /// The deepest nesting of arrays and objects accepted.
    public var maximumDepth: Int
    /// Whether a number too large for a `Double` parses as an infinity (for a validator to name its path) instead
    /// of failing the whole document.
    public var keepsOverflowingNumbers: Bool

    public init(maximumBytes: Int = 16 << 20, maximumDepth: Int = 64, keepsOverflowingNumbers: Bool = false) {
        self.maximumBytes = maximumBytes
        self.maximumDepth = maximumDepth
        self.keepsOverflowingNumbers = keepsOverflowingNumbers
    }

    /// Parses one JSON document.
    public func parse(_ bytes: some Collection<UInt8>) throws(JSONParseError) -> JSONValue {
        guard bytes.count <= maximumBytes else {
            throw JSONParseError(reason: .tooLarge(limit: maximumBytes), offset: 0)
        }
        let result: Result<JSONValue, JSONParseError>? = bytes.withContiguousStorageIfAvailable { buffer in
            parseBuffer(buffer)
        }
        if let result { return try result.get() }
        let copy = Array(bytes)
        return try copy.withUnsafeBufferPointer { parseBuffer($0) }.get()
    }

    /// Parses one JSON document from a string.
    public func parse(_ text: String) throws(JSONParseError) -> JSONValue {
        var text = text
        let result = text.withUTF8 { buffer -> Result<JSONValue, JSONParseError> in
            guard buffer.count <= maximumBytes else {
                return .failure(JSONParseError(reason: .tooLarge(limit: maximumBytes), offset: 0))
            }
            return parseBuffer(buffer)
        }
        return try result.get()
    }

    private func parseBuffer(_ buffer: UnsafeBufferPointer<UInt8>) -> Result<JSONValue, JSONParseError> {
        var reader = Reader(bytes: buffer, maximumDepth: maximumDepth, keepsOverflowingNumbers: keepsOverflowingNumbers)
        do throws(JSONParseError) {
            reader.skipWhitespace()
            let value = try reader.parseValue(depth: 0)
            reader.skipWhitespace()
            guard reader.position == buffer.count else {
                throw JSONParseError(reason: .trailingData, offset: reader.position)
            }
            return .success(value)
        } catch {
            return .failure(error)
        }
    }
}

private struct Reader {
    let bytes: UnsafeBufferPointer<UInt8>
    let maximumDepth: Int
    let keepsOverflowingNumbers: Bool
    var position = 0

    init(bytes: UnsafeBufferPointer<UInt8>, maximumDepth: Int, keepsOverflowingNumbers: Bool) {
        self.bytes = bytes
        self.maximumDepth = maximumDepth
        self.keepsOverflowingNumbers = keepsOverflowingNumbers
    }

    func fail(_ reason: JSONParseError.Reason) -> JSONParseError {
        JSONParseError(reason: reason, offset: position)
    }

    mutating func skipWhitespace() {
        while position < bytes.count {
            switch bytes[position] {
            case 0x20, 0x09, 0x0A, 0x0D: position += 1
            default: return
            }
        }
    }

    func peek() throws(JSONParseError) -> UInt8 {
        guard position < bytes.count else { throw fail(.unexpectedEnd) }
        return bytes[position]
    }

    mutating func expect(_ literal: StaticString) throws(JSONParseError) {
        let count = literal.utf8CodeUnitCount
        guard position + count <= bytes.count else { throw fail(.unexpectedEnd) }
        for index in 0..<count where bytes[position + index] != literal.utf8Start[index] {
            throw JSONParseError(reason: .unexpectedCharacter, offset: position + index)
        }
        position += count
    }

    // The structure is walked with an explicit depth bound; recursion is at most `maximumDepth` deep.
    mutating func parseValue(depth: Int) throws(JSONParseError) -> JSONValue {
        switch try peek() {
        case UInt8(ascii: "{"): return .object(try parseObject(depth: depth + 1))
        case UInt8(ascii: "["): return .array(try parseArray(depth: depth + 1))
        case UInt8(ascii: "\""): return .string(try parseString())
        case UInt8(ascii: "t"):
            try expect("true")
            return .bool(true)
        case UInt8(ascii: "f"):
            try expect("false")
            return .bool(false)
        case UInt8(ascii: "n"):
            try expect("null")
            return .null
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"):
            return .number(try parseNumber())
        default:
            throw fail(.unexpectedCharacter)
        }
    }

    mutating func parseObject(depth: Int) throws(JSONParseError) -> JSONObject {
        guard depth <= maximumDepth else { throw fail(.tooDeep(limit: maximumDepth)) }
        position += 1
        var members: [(key: String, value: JSONValue)] = []
        skipWhitespace()
        if try peek() == UInt8(ascii: "}") {
            position += 1
            return JSONObject(members)
        }
        while true {
            skipWhitespace()
            guard try peek() == UInt8(ascii: "\"") else { throw fail(.unexpectedCharacter) }
            let keyOffset = position
            let key = try parseString()
            if members.contains(where: { $0.key == key }) {
                throw JSONParseError(reason: .duplicateKey(key), offset: keyOffset)
            }
            skipWhitespace()
            guard try peek() == UInt8(ascii: ":") else { throw fail(.unexpectedCharacter) }
            position += 1
            skipWhitespace()
            let value = try parseValue(depth: depth)
            members.append((key, value))
            skipWhitespace()
            switch try peek() {
            case UInt8(ascii: ","): position += 1
            case UInt8(ascii: "}"):
                position += 1
                return JSONObject(members)
            default: throw fail(.unexpectedCharacter)
            }
        }
    }

    mutating func parseArray(depth: Int) throws(JSONParseError) -> [JSONValue] {
        guard depth <= maximumDepth else { throw fail(.tooDeep(limit: maximumDepth)) }
        position += 1
        var elements: [JSONValue] = []
        skipWhitespace()
        if try peek() == UInt8(ascii: "]") {
            position += 1
            return elements
        }
        while true {
            skipWhitespace()
            elements.append(try parseValue(depth: depth))
            skipWhitespace()
            switch try peek() {
            case UInt8(ascii: ","): position += 1
            case UInt8(ascii: "]"):
                position += 1
                return elements
            default: throw fail(.unexpectedCharacter)
            }
        }
    }

    mutating func parseNumber() throws(JSONParseError) -> Double {
        let start = position
        if bytes[position] == UInt8(ascii: "-") { position += 1 }
        guard position < bytes.count else { throw fail(.unexpectedEnd) }
        if bytes[position] == UInt8(ascii: "0") {
            position += 1
        } else if isDigit(bytes[position]) {
            while position < bytes.count, isDigit(bytes[position]) { position += 1 }
        } else {
            throw fail(.invalidNumber)
        }
        if position < bytes.count, bytes[position] == UInt8(ascii: ".") {
            position += 1
            guard position < bytes.count, isDigit(bytes[position]) else { throw fail(.invalidNumber) }
            while position < bytes.count, isDigit(bytes[position]) { position += 1 }
        }
        if position < bytes.count, bytes[position] == UInt8(ascii: "e") || bytes[position] == UInt8(ascii: "E") {
            position += 1
            if position < bytes.count, bytes[position] == UInt8(ascii: "+") || bytes[position] == UInt8(ascii: "-") {
                position += 1
            }
            guard position < bytes.count, isDigit(bytes[position]) else { throw fail(.invalidNumber) }
            while position < bytes.count, isDigit(bytes[position]) { position += 1 }
        }
        let text = UnsafeBufferPointer(rebasing: bytes[start..<position])
        // Small integers are common (RSSI, major, minor, counts): read them without going through a String. `-0` is
        // an integer 0 but the number -0.0, as the batch fast path and `Double("-0")` read it.
        if let integer = Self.smallInteger(text) {
            return integer == 0 && text[0] == UInt8(ascii: "-") ? -0.0 : Double(integer)
        }
        guard let value = Double(String(decoding: text, as: UTF8.self)), value.isFinite || keepsOverflowingNumbers
        else {
            throw JSONParseError(reason: .invalidNumber, offset: start)
        }
        return value
    }

    static func smallInteger(_ text: UnsafeBufferPointer<UInt8>) -> Int? {
        guard !text.isEmpty, text.count <= 15 else { return nil }
        var index = 0
        var negative = false
        if text[0] == UInt8(ascii: "-") {
            negative = true
            index = 1
        }
        guard index < text.count else { return nil }
        var value = 0
        while index < text.count {
            let byte = text[index]
            guard byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") else { return nil }
            value = value * 10 + Int(byte - UInt8(ascii: "0"))
            index += 1
        }
        return negative ? -value : value
    }

    func isDigit(_ byte: UInt8) -> Bool { byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") }

    mutating func parseString() throws(JSONParseError) -> String {
        let start = position
        position += 1
        // Fast path: no escapes.
        var scan = position
        while scan < bytes.count {
            let byte = bytes[scan]
            if byte == UInt8(ascii: "\"") {
                let slice = UnsafeBufferPointer(rebasing: bytes[position..<scan])
                guard let text = String(validating: slice, as: UTF8.self) else {
                    throw JSONParseError(reason: .invalidString, offset: start)
                }
                position = scan + 1
                return text
            }
            if byte == UInt8(ascii: "\\") || byte < 0x20 { break }
            scan += 1
        }
        var utf8: [UInt8] = []
        while true {
            guard position < bytes.count else { throw fail(.unexpectedEnd) }
            let byte = bytes[position]
            switch byte {
            case UInt8(ascii: "\""):
                position += 1
                guard let text = String(validating: utf8, as: UTF8.self) else {
                    throw JSONParseError(reason: .invalidString, offset: start)
                }
                return text
            case UInt8(ascii: "\\"):
                position += 1
                guard position < bytes.count else { throw fail(.unexpectedEnd) }
                let escape = bytes[position]
                position += 1
                switch escape {
                case UInt8(ascii: "\""): utf8.append(0x22)
                case UInt8(ascii: "\\"): utf8.append(0x5C)
                case UInt8(ascii: "/"): utf8.append(0x2F)
                case UInt8(ascii: "b"): utf8.append(0x08)
                case UInt8(ascii: "f"): utf8.append(0x0C)
                case UInt8(ascii: "n"): utf8.append(0x0A)
                case UInt8(ascii: "r"): utf8.append(0x0D)
                case UInt8(ascii: "t"): utf8.append(0x09)
                case UInt8(ascii: "u"):
                    var scalarValue = try parseHex4()
                    if scalarValue >= 0xD800, scalarValue < 0xDC00 {
                        guard position + 1 < bytes.count, bytes[position] == UInt8(ascii: "\\"),
                            bytes[position + 1] == UInt8(ascii: "u")
                        else { throw fail(.invalidString) }
                        position += 2
                        let low = try parseHex4()
                        guard low >= 0xDC00, low < 0xE000 else { throw fail(.invalidString) }
                        scalarValue = 0x10000 + ((scalarValue - 0xD800) << 10) + (low - 0xDC00)
                    }
                    guard let scalar = Unicode.Scalar(scalarValue) else { throw fail(.invalidString) }
                    utf8.append(contentsOf: String(Character(scalar)).utf8)
                default:
                    throw fail(.invalidString)
                }
            default:
                guard byte >= 0x20 else { throw fail(.invalidString) }
                utf8.append(byte)
                position += 1
            }
        }
    }

    mutating func parseHex4() throws(JSONParseError) -> UInt32 {
        guard position + 4 <= bytes.count else { throw fail(.unexpectedEnd) }
        var value: UInt32 = 0
        for _ in 0..<4 {
            let byte = bytes[position]
            let digit: UInt32
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = UInt32(byte - UInt8(ascii: "0"))
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = UInt32(byte - UInt8(ascii: "a") + 10)
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = UInt32(byte - UInt8(ascii: "A") + 10)
            default: throw fail(.invalidString)
            }
            value = value << 4 | digit
            position += 1
        }
        return value
    }
}
