/// Takes one JSON object's members in order. A payload describes its members once, to any of these:
/// ``JSONTreeMembers`` makes them a ``JSONValue``, ``JSONTextMembers`` writes their compact text straight away.
///
/// The text is the same, byte for byte, as ``JSONWriter`` writes of the tree; only the tree and its strings are not
/// made. The locator writes a position payload for every tag that moves, thousands a second on a campus, and making
/// the tree cost more than writing it.
public protocol JSONMembers {
    /// A string member, or `null` for nil.
    mutating func add(_ key: StaticString, _ text: String?)
    /// A number member (`null` for nil, or when not finite).
    mutating func add(_ key: StaticString, _ number: Double?)
    /// A member whose value is an object of its own, described by `body`.
    mutating func add(_ key: StaticString, object body: (inout Self) -> Void)
    /// A member whose value is an array of objects, one for each element, described by `body`.
    mutating func add<Elements: Sequence>(
        _ key: StaticString, objects elements: Elements, _ body: (inout Self, Elements.Element) -> Void)
}

extension JSONMembers {
    /// An integer member, or `null` for nil. Inlinable, so that a payload's call is specialized where it is made:
    /// unspecialized, this generic step cost more than writing the member.
    @inlinable
    public mutating func add(_ key: StaticString, _ integer: (some BinaryInteger)?) {
        add(key, integer.map { Double($0) })
    }
}

/// Gathers members into a ``JSONValue``.
public struct JSONTreeMembers: JSONMembers {
    private var members: [(key: String, value: JSONValue)] = []

    /// The object `body` describes.
    public static func object(_ body: (inout JSONTreeMembers) -> Void) -> JSONValue {
        var members = JSONTreeMembers()
        body(&members)
        return .object(JSONObject(members.members))
    }

    public mutating func add(_ key: StaticString, _ text: String?) {
        members.append((key.description, text.map { .string($0) } ?? .null))
    }

    public mutating func add(_ key: StaticString, _ number: Double?) {
        members.append((key.description, number.map { .number($0) } ?? .null))
    }

    public mutating func add(_ key: StaticString, object body: (inout JSONTreeMembers) -> Void) {
        members.append((key.description, Self.object(body)))
    }

    public mutating func add<Elements: Sequence>(
        _ key: StaticString, objects elements: Elements, _ body: (inout JSONTreeMembers, Elements.Element) -> Void
    ) {
        members.append((key.description, .array(elements.map { element in Self.object { body(&$0, element) } })))
    }
}

/// Writes members as compact JSON text, as ``JSONWriter`` writes the same object.
public struct JSONTextMembers: JSONMembers {
    private var bytes: [UInt8]
    /// Whether the object being written has no member yet (no comma before the next).
    private var opened = true

    private init() {
        bytes = []
        bytes.reserveCapacity(256)
    }

    /// The compact text of the object `body` describes.
    public static func object(_ body: (inout JSONTextMembers) -> Void) -> String {
        var members = JSONTextMembers()
        members.open()
        body(&members)
        members.close()
        return String(decoding: members.bytes, as: UTF8.self)
    }

    public mutating func add(_ key: StaticString, _ text: String?) {
        self.key(key)
        if let text { JSONWriter.appendString(text.utf8, to: &bytes) } else { JSONWriter.append("null", to: &bytes) }
    }

    public mutating func add(_ key: StaticString, _ number: Double?) {
        self.key(key)
        if let number { JSONWriter.appendNumber(number, to: &bytes) } else { JSONWriter.append("null", to: &bytes) }
    }

    public mutating func add(_ key: StaticString, object body: (inout JSONTextMembers) -> Void) {
        self.key(key)
        open()
        body(&self)
        close()
    }

    public mutating func add<Elements: Sequence>(
        _ key: StaticString, objects elements: Elements, _ body: (inout JSONTextMembers, Elements.Element) -> Void
    ) {
        self.key(key)
        bytes.append(UInt8(ascii: "["))
        var first = true
        for element in elements {
            if !first { bytes.append(UInt8(ascii: ",")) }
            first = false
            open()
            body(&self, element)
            close()
        }
        bytes.append(UInt8(ascii: "]"))
    }

    private mutating func open() {
        bytes.append(UInt8(ascii: "{"))
        opened = true
    }

    private mutating func close() {
        bytes.append(UInt8(ascii: "}"))
        opened = false
    }

    /// A comma unless this is the object's first member, then the quoted key and the colon.
    private mutating func key(_ key: StaticString) {
        if !opened { bytes.append(UInt8(ascii: ",")) }
        opened = false
        key.withUTF8Buffer { JSONWriter.appendString($0, to: &bytes) }
        bytes.append(UInt8(ascii: ":"))
    }
}
