public import WhereaboutsJSON

/// What the page may receive, written by Swift from the message types: for each stream event the message it
/// carries, and for each message its fields and their types (``PageType/description``).
///
/// Embedded in the page's script, which checks every message against it before using it and reads fields only
/// through an accessor that names the message and the field (`get(value, 'TagView.label')`), so a field renamed on
/// one side only fails the schema test instead of blanking the page.
public enum PageSchema {
    /// Every event the page listens to, in the order the schema lists them.
    public static var events: [any PageEvent.Type] {
        [
            DashboardSnapshot.self, TagChange.self, TagRemoval.self, ZoneChange.self, EventChange.self,
            LocatorChange.self, AgentChange.self, SourceChange.self,
        ]
    }

    /// `{"events": {name: message}, "messages": {message: {field: type}}}`.
    public static var json: JSONValue {
        var messages: [(key: String, value: JSONValue)] = []
        var seen: Set<String> = []
        var pending: [any PageMessage.Type] = events.map { $0 as any PageMessage.Type }
        while !pending.isEmpty {
            let message = pending.removeFirst()
            guard seen.insert(message.schemaName).inserted else { continue }
            messages.append((message.schemaName, fieldsJSON(message)))
            pending += nestedTypes(message)
        }
        let names = events.map { ($0.eventName, JSONValue.string($0.schemaName)) }
        return .object(
            JSONObject([("events", .object(JSONObject(names))), ("messages", .object(JSONObject(messages)))]))
    }

    /// The schema as the script embeds it.
    public static let text = JSONWriter().string(json)

    private static func fieldsJSON<Message: PageMessage>(_ message: Message.Type) -> JSONValue {
        .object(JSONObject(Message.fields.map { ($0.name, .string($0.type.description)) }))
    }

    private static func nestedTypes<Message: PageMessage>(_ message: Message.Type) -> [any PageMessage.Type] {
        Message.fields.flatMap(\.messageTypes)
    }
}
