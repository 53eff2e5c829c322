public import WhereaboutsJSON

/// Why a locator output payload or a recording line could not be decoded.
public enum PayloadError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The text is not JSON (or is over the parser's limits).
    case malformedJSON(JSONParseError)
    /// The document is JSON but not an object.
    case notAnObject
    /// A required member is absent.
    case missingField(String)
    /// A member has the wrong JSON type.
    case wrongType(field: String)
    /// A member has the right type but a value outside its domain (an invalid tag, a fractional floor…).
    case invalidValue(field: String)

    public var description: String {
        switch self {
        case .malformedJSON(let error): "malformed JSON: \(error)"
        case .notAnObject: "not a JSON object"
        case .missingField(let field): "missing field \"\(field)\""
        case .wrongType(let field): "field \"\(field)\" has the wrong type"
        case .invalidValue(let field): "field \"\(field)\" has an invalid value"
        }
    }
}

/// A problem with one member, before the caller maps it to its own error type.
enum FieldProblem: Error, Equatable {
    case missing(String)
    case wrongType(String)
    case invalid(String)

    var payloadError: PayloadError {
        switch self {
        case .missing(let field): .missingField(field)
        case .wrongType(let field): .wrongType(field: field)
        case .invalid(let field): .invalidValue(field: field)
        }
    }
}

/// Typed access to the members of a decoded object; `null` counts as absent for optional members.
struct FieldReader {
    let object: JSONObject

    init(_ object: JSONObject) {
        self.object = object
    }

    /// Parses `text` with `parser` and checks it is an object.
    static func parseObject(_ text: String, parser: JSONParser) throws(PayloadError) -> FieldReader {
        let value: JSONValue
        do {
            value = try parser.parse(text)
        } catch {
            throw .malformedJSON(error)
        }
        guard let object = value.object else { throw .notAnObject }
        return FieldReader(object)
    }

    func value(_ key: String) throws(FieldProblem) -> JSONValue {
        guard let value = object[key], value != .null else { throw .missing(key) }
        return value
    }

    func optionalValue(_ key: String) -> JSONValue? {
        guard let value = object[key], value != .null else { return nil }
        return value
    }

    func string(_ key: String) throws(FieldProblem) -> String {
        guard let text = try value(key).string else { throw .wrongType(key) }
        return text
    }

    func optionalString(_ key: String) throws(FieldProblem) -> String? {
        guard let value = optionalValue(key) else { return nil }
        guard let text = value.string else { throw .wrongType(key) }
        return text
    }

    /// A number; non-finite values (possible only in values built in code) are `invalid`.
    func number(_ key: String) throws(FieldProblem) -> Double {
        guard case .number(let number) = try value(key) else { throw .wrongType(key) }
        guard number.isFinite else { throw .invalid(key) }
        return number
    }

    func optionalNumber(_ key: String) throws(FieldProblem) -> Double? {
        guard optionalValue(key) != nil else { return nil }
        return try number(key)
    }

    /// An integral number in `range`.
    func integer(_ key: String, in range: ClosedRange<Int>) throws(FieldProblem) -> Int {
        guard case .number = try value(key) else { throw .wrongType(key) }
        guard let integer = object[key]?.integer, range.contains(integer) else { throw .invalid(key) }
        return integer
    }

    func optionalInteger(_ key: String, in range: ClosedRange<Int>) throws(FieldProblem) -> Int? {
        guard optionalValue(key) != nil else { return nil }
        return try integer(key, in: range)
    }

    func uint16(_ key: String) throws(FieldProblem) -> UInt16 {
        UInt16(try integer(key, in: 0...Int(UInt16.max)))
    }

    func optionalUInt16(_ key: String) throws(FieldProblem) -> UInt16? {
        guard optionalValue(key) != nil else { return nil }
        return try uint16(key)
    }

    func array(_ key: String) throws(FieldProblem) -> [JSONValue] {
        guard let elements = try value(key).array else { throw .wrongType(key) }
        return elements
    }

    func nested(_ key: String) throws(FieldProblem) -> FieldReader {
        guard let nested = try value(key).object else { throw .wrongType(key) }
        return FieldReader(nested)
    }
}

extension JSONValue {
    /// A number member, or `null` for nil.
    static func optionalNumber(_ number: Double?) -> JSONValue {
        number.map { .number($0) } ?? .null
    }

    /// An integer member, or `null` for nil.
    static func optionalInteger(_ integer: (some BinaryInteger)?) -> JSONValue {
        integer.map { .number(Double($0)) } ?? .null
    }

    /// A string member, or `null` for nil.
    static func optionalString(_ text: String?) -> JSONValue {
        text.map { .string($0) } ?? .null
    }
}
