public import WhereaboutsJSON

/// The type of a field as the page's script checks it.
public indirect enum PageType: Sendable, Equatable, CustomStringConvertible {
    /// A JSON string.
    case string
    /// A JSON number.
    case number
    /// `true` or `false`.
    case boolean
    /// The wrapped type, or `null`.
    case nullable(PageType)
    /// An array, every element of one type.
    case array(PageType)
    /// An object whose keys are data (an agent's id), every value of one type.
    case map(PageType)
    /// An object with exactly the fields of the named message.
    case message(String)

    /// The type as the schema writes it: `string`, `number`, `boolean`, `T?` (T or null), `[T]` (an array of T),
    /// `{T}` (an object whose values are T), or a message's name.
    public var description: String {
        switch self {
        case .string: "string"
        case .number: "number"
        case .boolean: "boolean"
        case .nullable(let wrapped): "\(wrapped)?"
        case .array(let element): "[\(element)]"
        case .map(let value): "{\(value)}"
        case .message(let name): name
        }
    }
}

/// A value the page reads: its type in the schema, and its JSON.
public protocol PageValue: Sendable {
    /// The type the schema names for it.
    static var pageType: PageType { get }
    /// The messages its type is made of, for the schema (none for a plain value).
    static var messageTypes: [any PageMessage.Type] { get }
    /// The value as the page receives it.
    var json: JSONValue { get }
}

extension PageValue {
    public static var messageTypes: [any PageMessage.Type] { [] }
}

/// An object the page reads, its fields named once in ``fields``: its JSON and its entry in the schema are both
/// made from that list, so a field cannot be sent under one name and described under another.
public protocol PageMessage: PageValue {
    /// The fields in the order they are sent.
    static var fields: [PageField<Self>] { get }
}

extension PageMessage {
    /// The message's name in the schema: its Swift type's name.
    public static var schemaName: String { String(describing: Self.self) }
    public static var pageType: PageType { .message(schemaName) }
    public static var messageTypes: [any PageMessage.Type] { [Self.self] }
    public var json: JSONValue { .object(JSONObject(Self.fields.map { ($0.name, $0.encode(self)) })) }
}

/// A message that arrives as a Server-Sent Event of its own name.
public protocol PageEvent: PageMessage {
    /// The event's name in the stream (`event:`).
    static var eventName: String { get }
}

extension PageEvent {
    /// The message as a stream event, with `id` for the browser to send back when it reconnects.
    public func serverSentEvent(id: String) -> ServerSentEvent {
        ServerSentEvent(name: Self.eventName, id: id, data: JSONWriter().string(json))
    }
}

/// One field of a message: its name on the wire, its type, and how it is read from the Swift value.
public struct PageField<Message> {
    /// The field's name in the JSON and the schema.
    public let name: String
    /// The field's type.
    public let type: PageType
    /// The messages the field's type is made of.
    let messageTypes: [any PageMessage.Type]
    let encode: (Message) -> JSONValue

    /// A field whose value is the message's property at `path`.
    public init<Value: PageValue>(_ name: String, _ path: KeyPath<Message, Value>) {
        self.name = name
        type = Value.pageType
        messageTypes = Value.messageTypes
        encode = { $0[keyPath: path].json }
    }
}

/// An object whose keys are data, in a chosen order (JSON objects keep the order they are written in).
public struct PageMap<Value: PageValue & Equatable>: PageValue, Equatable {
    /// The entries, in order.
    public var entries: [Entry]

    /// One key and its value.
    public struct Entry: Sendable, Equatable {
        public var key: String
        public var value: Value
    }

    public init(_ entries: [(key: String, value: Value)]) {
        self.entries = entries.map { Entry(key: $0.key, value: $0.value) }
    }

    public static var pageType: PageType { .map(Value.pageType) }
    public static var messageTypes: [any PageMessage.Type] { Value.messageTypes }
    public var json: JSONValue { .object(JSONObject(entries.map { ($0.key, $0.value.json) })) }
}

extension String: PageValue {
    public static var pageType: PageType { .string }
    public var json: JSONValue { .string(self) }
}

extension Double: PageValue {
    public static var pageType: PageType { .number }
    public var json: JSONValue { .number(self) }
}

extension Int: PageValue {
    public static var pageType: PageType { .number }
    public var json: JSONValue { .number(Double(self)) }
}

extension UInt16: PageValue {
    public static var pageType: PageType { .number }
    public var json: JSONValue { .number(Double(self)) }
}

extension UInt64: PageValue {
    public static var pageType: PageType { .number }
    public var json: JSONValue { .number(Double(self)) }
}

extension Bool: PageValue {
    public static var pageType: PageType { .boolean }
    public var json: JSONValue { .bool(self) }
}

extension Optional: PageValue where Wrapped: PageValue {
    public static var pageType: PageType { .nullable(Wrapped.pageType) }
    public static var messageTypes: [any PageMessage.Type] { Wrapped.messageTypes }
    public var json: JSONValue { map(\.json) ?? .null }
}

extension Array: PageValue where Element: PageValue {
    public static var pageType: PageType { .array(Element.pageType) }
    public static var messageTypes: [any PageMessage.Type] { Element.messageTypes }
    public var json: JSONValue { .array(map(\.json)) }
}
