/// The bytes one value of a document occupies, with its children's: what ``JSONSourceMerge`` copies when a part of
/// the document is unchanged.
///
/// Spans come from a scanner of their own rather than from ``JSONParser``, which parses every MQTT payload in the
/// locator and should not pay for recording positions nobody asks for there.
struct JSONSourceSpan: Sendable {
    /// From the value's first byte to just past its last.
    var range: Range<Int>
    /// An array's elements or an object's members' values, in document order.
    var children: [JSONSourceSpan] = []
    /// An object's members' keys, quotes included, in document order.
    var keys: [Range<Int>] = []

    /// The spans of the one value in `bytes` and of its children.
    ///
    /// The scan finds bounds only: it relies on ``JSONParser`` having accepted `bytes` (so the nesting is bounded
    /// by the parser's depth limit), and throws rather than traps if they are not JSON after all.
    static func scan(_ bytes: [UInt8]) throws(JSONParseError) -> JSONSourceSpan {
        var scanner = SpanScanner(bytes: bytes)
        scanner.skipWhitespace()
        let span = try scanner.scanValue()
        scanner.skipWhitespace()
        guard scanner.position == bytes.count else {
            throw JSONParseError(reason: .trailingData, offset: scanner.position)
        }
        return span
    }

    /// Whether `byte` is JSON whitespace.
    static func isWhitespace(_ byte: UInt8) -> Bool {
        byte == 0x20 || byte == 0x0A || byte == 0x0D || byte == 0x09
    }
}

/// An original value with its span: the parsed tree and the span tree, walked together.
struct JSONSourceNode {
    var value: JSONValue
    var span: JSONSourceSpan

    /// The number of children, when the value and the span agree on it (they do for a document both accepted);
    /// nil when they do not.
    var childCount: Int? {
        switch value {
        case .object(let object):
            let count = object.members.count
            return span.children.count == count && span.keys.count == count ? count : nil
        case .array(let elements):
            return span.children.count == elements.count ? elements.count : nil
        default:
            return span.children.isEmpty ? 0 : nil
        }
    }

    /// Whether this is an array or object with at least one child: a container whose layout can be copied.
    var hasChildren: Bool { (childCount ?? 0) > 0 }

    /// Whether the value is of the same kind of container as `other` (both arrays or both objects).
    func isContainer(like other: JSONValue) -> Bool {
        switch (value, other) {
        case (.array, .array), (.object, .object): true
        default: false
        }
    }

    /// The child at `index` (an element, or a member's value).
    func child(_ index: Int) -> JSONSourceNode? {
        guard let count = childCount, index >= 0, index < count else { return nil }
        switch value {
        case .object(let object): return JSONSourceNode(value: object.members[index].value, span: span.children[index])
        case .array(let elements): return JSONSourceNode(value: elements[index], span: span.children[index])
        default: return nil
        }
    }

    /// The value of the member named `key`, when this is an object that has one.
    func member(_ key: String) -> JSONSourceNode? {
        guard case .object(let object) = value, let index = object.members.firstIndex(where: { $0.key == key })
        else { return nil }
        return child(index)
    }

    /// Where child `index` starts: its key's opening quote in an object, the element itself in an array.
    func childStart(_ index: Int) -> Int {
        if case .object = value { return span.keys[index].lowerBound }
        return span.children[index].range.lowerBound
    }

    /// Where child `index` ends: just past its value.
    func childEnd(_ index: Int) -> Int { span.children[index].range.upperBound }
}

/// Finds the bounds of values in text that ``JSONParser`` accepted.
private struct SpanScanner {
    let bytes: [UInt8]
    var position = 0

    init(bytes: [UInt8]) {
        self.bytes = bytes
    }

    mutating func skipWhitespace() {
        while position < bytes.count, JSONSourceSpan.isWhitespace(bytes[position]) { position += 1 }
    }

    func peek() throws(JSONParseError) -> UInt8 {
        guard position < bytes.count else { throw JSONParseError(reason: .unexpectedEnd, offset: position) }
        return bytes[position]
    }

    mutating func expect(_ byte: UInt8) throws(JSONParseError) {
        guard try peek() == byte else { throw JSONParseError(reason: .unexpectedCharacter, offset: position) }
        position += 1
    }

    /// Moves past `byte` when it comes next; whether it did.
    mutating func consume(_ byte: UInt8) throws(JSONParseError) -> Bool {
        guard try peek() == byte else { return false }
        position += 1
        return true
    }

    mutating func scanValue() throws(JSONParseError) -> JSONSourceSpan {
        let start = position
        switch try peek() {
        case UInt8(ascii: "{"): return try scanContainer(close: UInt8(ascii: "}"), keyed: true)
        case UInt8(ascii: "["): return try scanContainer(close: UInt8(ascii: "]"), keyed: false)
        case UInt8(ascii: "\""): try skipString()
        default:
            // A number or a literal: the parser has checked its spelling; only its end is wanted here.
            while position < bytes.count, Self.isScalarByte(bytes[position]) { position += 1 }
        }
        guard position > start else { throw JSONParseError(reason: .unexpectedCharacter, offset: position) }
        return JSONSourceSpan(range: start..<position)
    }

    mutating func scanContainer(close: UInt8, keyed: Bool) throws(JSONParseError) -> JSONSourceSpan {
        let start = position
        position += 1
        var span = JSONSourceSpan(range: start..<start)
        skipWhitespace()
        if try peek() != close {
            repeat {
                skipWhitespace()
                if keyed {
                    let keyStart = position
                    try skipString()
                    span.keys.append(keyStart..<position)
                    skipWhitespace()
                    try expect(UInt8(ascii: ":"))
                    skipWhitespace()
                }
                span.children.append(try scanValue())
                skipWhitespace()
            } while try consume(UInt8(ascii: ","))
        }
        try expect(close)
        span.range = start..<position
        return span
    }

    /// Moves past a string, quotes included; an escape's backslash takes the byte after it along.
    mutating func skipString() throws(JSONParseError) {
        try expect(UInt8(ascii: "\""))
        while true {
            switch try peek() {
            case UInt8(ascii: "\""):
                position += 1
                return
            case UInt8(ascii: "\\"): position += 2
            default: position += 1
            }
        }
    }

    static func isScalarByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "E"),
            UInt8(ascii: "+"), UInt8(ascii: "-"), UInt8(ascii: "."):
            true
        default: false
        }
    }
}
