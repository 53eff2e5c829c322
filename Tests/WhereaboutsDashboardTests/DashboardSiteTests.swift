import Foundation
import Testing
import WhereaboutsCore
import WhereaboutsDashboard
import WhereaboutsJSON
import WhereaboutsWire

@Suite("Dashboard site")
struct DashboardSiteTests {
    static let hostile = #"<script>alert("x")</script>&'"#

    func text(_ response: DashboardResponse) -> String {
        switch response.body {
        case .complete(let bytes): String(decoding: bytes, as: UTF8.self)
        case .stream(let initial): String(decoding: initial, as: UTF8.self)
        }
    }

    func header(_ response: DashboardResponse, _ name: String) -> String? {
        response.headers.first { $0.0.lowercased() == name.lowercased() }?.1
    }

    @Test("the page draws every floor, zone and agent with hooks for the script, and loads it from a file")
    func page() throws {
        let map = try loadMap(try shippedMapText("demo-office.json"))
        let site = DashboardSite(map: map)
        let response = site.respond(to: "/", state: DashboardState(map: map), now: 0)
        #expect(response.status == 200)
        let html = text(response)
        #expect(html.hasPrefix("<!DOCTYPE html>"))
        #expect(html.components(separatedBy: "<svg ").count - 1 == map.floors.count)
        #expect(html.components(separatedBy: #"<polygon class="zone""#).count - 1 == map.zones.count)
        #expect(html.components(separatedBy: "data-agent=").count - 1 == map.agents.count)
        #expect(html.components(separatedBy: #"<tr data-zone=""#).count - 1 == map.zones.count)
        #expect(html.contains(#"data-scale="30""#))
        #expect(html.components(separatedBy: "<script").count - 1 == 1)
        #expect(html.contains(#"<script src="/app.js" defer></script>"#))
        #expect(header(response, "Content-Security-Policy")?.contains("script-src 'self'") == true)
        #expect(header(response, "Content-Security-Policy")?.contains("unsafe-inline") == false)
        #expect(header(response, "X-Content-Type-Options") == "nosniff")
        #expect(site.scale == 30)
    }

    @Test("names from the map are escaped in the page and in the history page")
    func mapNamesEscaped() throws {
        var text = try shippedMapText("demo-office.json")
        text = text.replacingOccurrences(of: #""name": "Lobby""#, with: #""name": "\#(jsonEscaped(Self.hostile))""#)
        text = text.replacingOccurrences(
            of: #""name": "Demo Office""#, with: #""name": "\#(jsonEscaped(Self.hostile))""#)
        let map = try loadMap(text)
        #expect(map.zones.contains { $0.name == Self.hostile })
        let site = DashboardSite(map: map)
        let state = DashboardState(map: map)
        for path in ["/", "/zones/1-1"] {
            let html = self.text(site.respond(to: path, state: state, now: 0))
            #expect(!html.contains("<script>alert"), "\(path)")
            #expect(html.contains("&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;&amp;&apos;"), "\(path)")
        }
    }

    @Test("names from the broker travel as JSON strings in the event stream, never as markup")
    func brokerNamesInStream() throws {
        let map = try loadMap(try shippedMapText("demo-office.json"))
        let topics = Topics(site: map.site.uuid)
        var state = DashboardState(map: map)
        let tag = TagIdentity.demo(77)
        let payload = TagPosition(
            tag: tag, name: "evil\n\nevent: snapshot\ndata: {}" + Self.hostile, x: 1, y: 2, floor: 1, zone: nil,
            zoneName: nil, accuracy: 1, nearest: nil, updated: 0
        ).payload
        let ingested = state.ingest(topic: topics.position(tag: tag).name, payload: Array(payload.utf8), now: 0)
        let change = try #require(ingested)
        let encoded = change.serverSentEvent.encoded
        let lines = encoded.split(separator: "\n", omittingEmptySubsequences: false)
        #expect(lines.first == "event: tag")
        #expect(lines.dropFirst().first == "id: 1")
        #expect(lines.filter { $0.hasPrefix("data: ") }.count == 1, "JSON escapes the line breaks")
        #expect(encoded.hasSuffix("\n\n"))
        let data = try #require(lines.first { $0.hasPrefix("data: ") }?.dropFirst(6))
        let value = try JSONParser().parse(String(data))
        #expect(value.object?["tag"]?.object?["label"]?.string?.hasSuffix(Self.hostile) == true)
    }

    @Test("an event's data cannot start another field or event, whatever its line breaks")
    func serverSentEventFraming() {
        let event = ServerSentEvent(name: "tag\nevent: x", id: "1\r\nretry: 0", data: "a\nevent: evil\r\ndata: b\rc")
        #expect(
            event.encoded == "event: tageventx\nid: 1retry: 0\ndata: a\ndata: event: evil\ndata: data: b\ndata: c\n\n")
    }

    @Test("the event stream starts with the reconnect delay and a snapshot numbered as the state")
    func streamStart() throws {
        let map = try loadMap(try shippedMapText("demo-office.json"))
        var state = DashboardState(map: map)
        _ = state.ingest(topic: Topics(site: map.site.uuid).locatorStatus.name, payload: Array("online".utf8), now: 0)
        let response = DashboardSite(map: map).respond(to: "/events", state: state, now: 0)
        guard case .stream = response.body else {
            Issue.record("not a stream")
            return
        }
        #expect(header(response, "Content-Type") == "text/event-stream; charset=utf-8")
        #expect(text(response).hasPrefix("retry: 2000\n\nevent: snapshot\nid: 1\ndata: {\"seq\":1,"))
    }

    @Test(
        "paths: files and pages are found, anything else is 404",
        arguments: [
            ("/", 200), ("/index.html", 200), ("/app.js", 200), ("/app.css", 200), ("/snapshot.json", 200),
            ("/zones/1-1", 200), ("/zones/2-7", 200), ("/zones/01-1", 404), ("/zones/9-9", 404), ("/zones/1-", 404),
            ("/zones/1-1/../..", 404), ("/../etc/passwd", 404), ("/app.js/", 404), ("/events/x", 404),
        ])
    func paths(path: String, status: Int) throws {
        let map = try loadMap(try shippedMapText("demo-office.json"))
        #expect(DashboardSite(map: map).respond(to: path, state: DashboardState(map: map), now: 0).status == status)
    }

    @Test("a zone's history page shows unknown stretches and its crossings")
    func historyPage() throws {
        let map = try loadMap(try shippedMapText("demo-office.json"))
        let topics = Topics(site: map.site.uuid)
        var state = DashboardState(map: map)
        let now = 1_764_475_200.0
        for (offset, status) in [(-1800.0, ZoneOccupancy.State.known), (-600, .unknown)] {
            let payload = ZoneOccupancy(
                site: map.site.uuid, floor: 1, zone: 1, name: "Lobby", state: status, count: 0, tags: [], updated: 0
            ).payload
            _ = state.ingest(
                topic: topics.occupancy(floor: 1, zone: 1).name, payload: Array(payload.utf8), now: now + offset)
        }
        let event = ZoneEvent(time: 0, tag: .demo(1), floor: 1, zone: 1, kind: .enter).payload
        _ = state.ingest(topic: topics.events.name, payload: Array(event.utf8), now: now - 900)
        let html = text(DashboardSite(map: map).respond(to: "/zones/1-1", state: state, now: now))
        #expect(html.contains("unknown (its agents are silent)"))
        #expect(html.contains(#"class="chart-unknown""#))
        #expect(html.contains("<td>Alice</td><td>entered</td>"))
        #expect(html.contains("03:45:00 UTC"))
    }

    func jsonEscaped(_ text: String) -> String {
        var out = ""
        JSONWriter.appendString(text, to: &out)
        return String(out.dropFirst().dropLast())
    }
}

/// Issue 49, item 7: `web --frame-ancestors` lets the named origins embed the page; without it nobody may.
@Suite("Dashboard framing")
struct DashboardFramingTests {
    func header(_ response: DashboardResponse, _ name: String) -> String? {
        response.headers.first { $0.0.lowercased() == name.lowercased() }?.1
    }

    @Test("by default every response forbids framing, in the policy and in X-Frame-Options")
    func forbidden() throws {
        let map = try loadMap(try shippedMapText("demo-office.json"))
        for path in ["/", "/app.js", "/events", "/zones/1-1", "/nowhere"] {
            let response = DashboardSite(map: map).respond(to: path, state: DashboardState(map: map), now: 0)
            #expect(header(response, "Content-Security-Policy")?.hasSuffix("frame-ancestors 'none'") == true, "\(path)")
            #expect(header(response, "X-Frame-Options") == "DENY", "\(path)")
        }
    }

    @Test("configured origins are the only frame ancestors, and X-Frame-Options (which cannot name them) goes")
    func allowed() throws {
        let map = try loadMap(try shippedMapText("demo-office.json"))
        let site = DashboardSite(map: map, frameAncestors: ["https://ha.example:8123", "http://10.0.0.5"])
        for path in ["/", "/events", "/nowhere"] {
            let response = site.respond(to: path, state: DashboardState(map: map), now: 0)
            let policy = header(response, "Content-Security-Policy")
            #expect(policy?.hasSuffix("frame-ancestors https://ha.example:8123 http://10.0.0.5") == true, "\(path)")
            #expect(policy?.contains("script-src 'self'") == true)
            #expect(header(response, "X-Frame-Options") == nil, "\(path)")
        }
    }

    @Test(
        "only plain origins are accepted: nothing that could end the directive or widen it",
        arguments: [
            ("https://ha.example:8123", true), ("http://192.168.1.20", true), ("https://*.example.org", true),
            ("https://ha.example/lovelace", false), ("https://ha.example; script-src *", false), ("'self'", false),
            ("*", false), ("https://", false), ("ftp://ha.example", false), ("https://ha.example:0", false),
            ("https://ha.example:08123", false), ("https://ha example", false), ("javascript:alert(1)", false),
            ("https://ha.example:8123,https://x", false),
        ])
    func origins(text: String, accepted: Bool) {
        #expect(DashboardSite.isFrameAncestor(text) == accepted)
    }
}
