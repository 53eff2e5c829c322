public import WhereaboutsJSON

/// A locator output or recording line that reads and writes itself as one JSON object, members in a fixed order.
public protocol JSONPayload: Sendable {
    /// The payload as a JSON value.
    var json: JSONValue { get }
    /// Compact, deterministic JSON text: ``JSONWriter``'s of ``json``, unless the payload writes it more directly.
    var payload: String { get }
    /// Decodes the payload from a JSON value.
    init(json: JSONValue) throws(PayloadError)
}

extension JSONPayload {
    /// Compact, deterministic JSON text.
    public var payload: String { JSONWriter().string(json) }

    /// Decodes from JSON text, with generous limits (these payloads come from our own locator).
    public init(payload: String) throws(PayloadError) {
        let value: JSONValue
        do {
            value = try JSONParser(maximumBytes: 1 << 20, maximumDepth: 16).parse(payload)
        } catch {
            throw .malformedJSON(error)
        }
        try self.init(json: value)
    }
}

extension FieldReader {
    /// Reads an object from a value, or throws ``PayloadError/notAnObject``.
    init(json: JSONValue) throws(PayloadError) {
        guard let object = json.object else { throw .notAnObject }
        self.init(object)
    }
}

/// Runs a member-reading closure, mapping its problems to ``PayloadError``.
func decodingMembers<T>(_ body: () throws(FieldProblem) -> T) throws(PayloadError) -> T {
    do {
        return try body()
    } catch {
        throw error.payloadError
    }
}
