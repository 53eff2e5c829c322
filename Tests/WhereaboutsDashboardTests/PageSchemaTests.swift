import Testing
import WhereaboutsCore
import WhereaboutsDashboard
import WhereaboutsJSON
import WhereaboutsWire

/// The page's script and the Swift message types agree on every field: what the script reads is in the schema
/// Swift writes, and what Swift sends is exactly what the schema says. A field renamed on one side only fails here.
@Suite("Page schema")
struct PageSchemaTests {
    let map: FloorMap
    let topics: Topics
    let script: String
    let schema: JSONObject

    init() throws {
        map = try loadMap(try shippedMapText("demo-office.json"))
        topics = Topics(site: map.site.uuid)
        let response = DashboardSite(map: map).respond(to: "/app.js", state: DashboardState(map: map), now: 0)
        guard case .complete(let bytes) = response.body else { throw SchemaTestError("/app.js is not a document") }
        script = String(decoding: bytes, as: UTF8.self)
        schema = try #require(PageSchema.json.object)
    }

    var messages: JSONObject { schema["messages"]?.object ?? JSONObject() }
    var events: JSONObject { schema["events"]?.object ?? JSONObject() }

    @Test("the script embeds the schema Swift writes")
    func embedded() {
        #expect(script.contains("const SCHEMA = " + PageSchema.text + ";\n"))
    }

    @Test("every field the script reads is one the schema names for that message")
    func readsAreInTheSchema() throws {
        let reads = try fieldReads(in: script)
        #expect(reads.unnamed.isEmpty, "get() must name its field as a literal 'Message.field': \(reads.unnamed)")
        #expect(reads.named.count >= 30, "the script's reads were not found: \(reads.named.count)")
        for (message, field) in reads.named {
            let fields = messages[message]?.object
            #expect(fields != nil, "the script reads \(message).\(field); the schema has no message \(message)")
            #expect(fields?[field] != nil, "the script reads \(message).\(field); the schema does not name it")
        }
    }

    @Test("the script listens to exactly the events the schema names")
    func listens() throws {
        let listened = try Regex(#"listen\('([a-z-]+)'"#)
        let names = script.matches(of: listened).compactMap { $0.output[1].substring.map(String.init) }
        #expect(Set(names) == Set(events.keys), "script: \(names.sorted()), schema: \(events.keys.sorted())")
        #expect(names.count == events.keys.count, "each event listened to once")
        #expect(!script.contains("addEventListener('snapshot'"), "events are listened to through listen()")
    }

    @Test("received values enter only through receive() and are read only through get()")
    func disciplinedReads() throws {
        #expect(script.ranges(of: "JSON.parse(").count == 1, "one door: receive()")
        // The names the script gives to values it received; none may be read with a dot, which would bypass get().
        let direct = try Regex(#"\b(tag|zone|event|locator|figures|snapshot|value|first|received)\.[A-Za-z_]"#)
        let found = script.matches(of: direct).map { String(script[$0.range]) }
        #expect(found.isEmpty, "direct reads of received values: \(found)")
    }

    @Test("every message the server sends has exactly the schema's fields, of the schema's types")
    func sentMessagesConform() throws {
        var state = DashboardState(map: map)
        // Before anything arrives: pending zones, an unknown locator, agents that have not said.
        try expectConforms(state.snapshot().json, "snapshot")
        var sent: [ServerSentEvent] = []
        for (topic, payload) in try everyKindOfMessage() {
            if let change = state.ingest(topic: topic, payload: Array(payload.utf8), now: Double(sent.count)) {
                sent.append(change.serverSentEvent)
            }
        }
        // Whether the picture is current: live, then the broker lost (a source with a time).
        for change in [state.refreshSource(now: 50), state.brokerLink(.lost(since: 51), now: 51).last] {
            sent.append(try #require(change).serverSentEvent)
        }
        #expect(state.dropped.isEmpty)
        #expect(Set(sent.compactMap(\.name)) == Set(events.keys).subtracting(["snapshot"]), "every change sent")
        for event in sent {
            let name = try #require(event.name)
            try expectConforms(try JSONParser().parse(event.data), name)
        }
        try expectConforms(state.snapshot().json, "snapshot")
        let stream = DashboardSite(map: map).respond(to: "/events", state: state, now: 100)
        guard case .stream(let initial) = stream.body else { throw SchemaTestError("/events is not a stream") }
        let data = try #require(
            String(decoding: initial, as: UTF8.self).split(separator: "\n").first { $0.hasPrefix("data: ") })
        try expectConforms(try JSONParser().parse(String(data.dropFirst(6))), "snapshot")
    }

    @Test("every message's fields are all in the schema, and a nested message is described too")
    func schemaIsComplete() {
        for (name, message) in events.members {
            #expect(messages[message.string ?? ""] != nil, "event \(name)")
        }
        for (message, fields) in messages.members {
            for (field, type) in fields.object?.members ?? [] {
                let named = (type.string ?? "").filter { $0.isLetter }
                let plain = ["string", "number", "boolean"].contains(named)
                #expect(plain || messages[named] != nil, "\(message).\(field): \(type)")
            }
        }
    }

    // MARK: - Helpers

    /// Every broker message a dashboard takes, one of each kind that makes a change.
    func everyKindOfMessage() throws -> [(String, String)] {
        let metrics = LocatorMetrics(
            time: 5, readingsAccepted: 10, readingsRejected: [:], tagsTracked: 1, agentsOnline: 3, latencyP50: 20,
            latencyP99: nil, inputLagP50: 240, inputLagP99: 610)
        let position = TagPosition(
            tag: .demo(1), name: nil, x: 5, y: 4, floor: 1, zone: nil, zoneName: nil, accuracy: 1.5, nearest: nil,
            updated: 100, probability: 0.6, zones: [ZoneShare(zone: 1, probability: 0.4)])
        let occupancy = ZoneOccupancy(
            site: map.site.uuid, floor: 1, zone: 1, name: "Lobby", state: .known, count: 1,
            tags: [.init(id: .demo(1), name: nil, probability: 0.4)], updated: 100)
        let event = ZoneEvent(time: 100, tag: .demo(1), floor: 1, zone: 1, kind: .enter)
        let agent = topics.agentStatus(agent: try #require(AgentID("g-lobby"))).name
        return [
            (topics.locatorStatus.name, "online"), (topics.locatorMetrics.name, metrics.payload),
            (topics.locatorMetrics.name, metrics.payload), (topics.position(tag: .demo(1)).name, position.payload),
            (topics.position(tag: .demo(2)).name, position.payload.replacingDemo(1, with: 2)),
            (topics.position(tag: .demo(2)).name, ""), (topics.occupancy(floor: 1, zone: 1).name, occupancy.payload),
            (topics.events.name, event.payload), (agent, "offline"),
        ]
    }

    /// Checks a value against the schema as the page's `conforms` does.
    func expectConforms(_ value: JSONValue, _ event: String) throws {
        let message = try #require(events[event]?.string, "no event \(event)")
        let problems = mismatches(value, message, at: event)
        #expect(problems.isEmpty, "\(problems)")
    }

    func mismatches(_ value: JSONValue, _ type: String, at path: String) -> [String] {
        if type.hasSuffix("?") {
            return value == .null ? [] : mismatches(value, String(type.dropLast()), at: path)
        }
        if type.hasPrefix("[") {
            guard let items = value.array else { return ["\(path): not an array"] }
            let element = String(type.dropFirst().dropLast())
            return items.enumerated().flatMap { mismatches($0.element, element, at: "\(path)[\($0.offset)]") }
        }
        if type.hasPrefix("{") {
            guard let object = value.object else { return ["\(path): not an object"] }
            let member = String(type.dropFirst().dropLast())
            return object.members.flatMap { mismatches($0.value, member, at: "\(path).\($0.key)") }
        }
        switch type {
        case "string": return value.string == nil ? ["\(path): not a string"] : []
        case "number": return value.double == nil ? ["\(path): not a number"] : []
        case "boolean": return value.bool == nil ? ["\(path): not a boolean"] : []
        default:
            guard let fields = messages[type]?.object else { return ["\(path): no message \(type) in the schema"] }
            guard let object = value.object else { return ["\(path): not an object"] }
            var problems: [String] = []
            if object.keys != fields.keys { problems.append("\(path): fields \(object.keys), schema \(fields.keys)") }
            for (name, fieldType) in fields.members {
                guard let field = object[name] else { continue }
                problems += mismatches(field, fieldType.string ?? "", at: "\(path).\(name)")
            }
            return problems
        }
    }

    /// The script's `get(value, 'Message.field')` calls, and the text of any call of get that names no field so.
    func fieldReads(in script: String) throws -> (named: [(String, String)], unnamed: [String]) {
        let literal = try Regex(#"^[\s\S]*,\s*'([A-Za-z]+)\.([a-z_0-9]+)'$"#)
        var named: [(String, String)] = []
        var unnamed: [String] = []
        var rest = script[...]
        while let call = rest.firstRange(of: "get(") {
            defer { rest = script[call.upperBound...] }
            // `floors.get(` is a Map's, `function get(` the accessor itself.
            if let before = script[..<call.lowerBound].last, before == "." || before.isLetter || before == "_" {
                continue
            }
            if script[..<call.lowerBound].hasSuffix("function ") { continue }
            var depth = 1
            var end = call.upperBound
            while end < script.endIndex, depth > 0 {
                if script[end] == "(" { depth += 1 }
                if script[end] == ")" { depth -= 1 }
                end = script.index(after: end)
            }
            let arguments = String(script[call.upperBound..<script.index(before: end)])
            if let match = arguments.wholeMatch(of: literal), let message = match.output[1].substring,
                let field = match.output[2].substring
            {
                named.append((String(message), String(field)))
            } else {
                unnamed.append(arguments)
            }
        }
        return (named, unnamed)
    }
}

struct SchemaTestError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

extension String {
    /// A demo tag's position payload moved to another of the demo tags.
    fileprivate func replacingDemo(_ minor: UInt16, with other: UInt16) -> String {
        replacing(TagIdentity.demo(minor).description, with: TagIdentity.demo(other).description)
    }
}
