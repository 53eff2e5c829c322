public import WhereaboutsCore
import WhereaboutsDrawing
import WhereaboutsJSON

/// What the dashboard answers for one path: a page, a file, the snapshot, or the start of the event stream.
///
/// Knows nothing of sockets: the server hands it a path and sends back what it returns.
public struct DashboardSite: Sendable {
    /// The policy every response carries by default: scripts and styles only from this server (no inline ones, so
    /// a name from the map or the broker that slipped through escaping still could not run), nothing embedded
    /// elsewhere.
    public static let contentSecurityPolicy = contentSecurityPolicy(frameAncestors: [])

    /// The policy with the origins that may embed the page (a Home Assistant dashboard's); none forbids framing.
    public static func contentSecurityPolicy(frameAncestors: [String]) -> String {
        "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; "
            + "base-uri 'none'; form-action 'none'; frame-ancestors "
            + (frameAncestors.isEmpty ? "'none'" : frameAncestors.joined(separator: " "))
    }

    /// Whether `text` is an origin a policy may name as a frame ancestor: `http` or `https`, a host of letters,
    /// digits, dots and hyphens (or `*.` and a domain), an optional port, nothing else (no path, no spaces, no `;`
    /// or quotes that would end the directive).
    public static func isFrameAncestor(_ text: String) -> Bool {
        let rest: Substring
        if text.hasPrefix("https://") {
            rest = text.dropFirst("https://".count)
        } else if text.hasPrefix("http://") {
            rest = text.dropFirst("http://".count)
        } else {
            return false
        }
        let parts = rest.split(separator: ":", maxSplits: 1, omittingEmptySubsequences: false)
        var host = parts[0]
        if host.hasPrefix("*.") { host = host.dropFirst(2) }
        let hostCharacters = Set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.-")
        guard !host.isEmpty, host.count <= 253, host.allSatisfy(hostCharacters.contains), host.first != ".",
            host.first != "-"
        else { return false }
        guard parts.count == 2 else { return true }
        guard let port = Int(parts[1]), (1...65535).contains(port), String(port) == parts[1] else { return false }
        return true
    }

    /// How long a browser waits before reconnecting the event stream, milliseconds.
    public static let reconnectDelay = 2000

    private let map: FloorMap
    private let renderer = MapRenderer()
    private let page: [UInt8]
    private let script = Array(DashboardScript.text.utf8)
    private let style = Array(DashboardStyle.text.utf8)
    /// The headers of every response: the content policy, no sniffing, no referrer, framing only by the origins
    /// configured.
    public let commonHeaders: [(String, String)]

    /// Builds the static page for a map; `frameAncestors` are the origins that may embed it (checked with
    /// ``isFrameAncestor(_:)`` by the caller), none by default.
    public init(map: FloorMap, frameAncestors: [String] = []) {
        self.map = map
        page = Array(DashboardPage(map: map, renderer: renderer).html.utf8)
        var headers = [
            ("Content-Security-Policy", Self.contentSecurityPolicy(frameAncestors: frameAncestors)),
            ("X-Content-Type-Options", "nosniff"), ("Referrer-Policy", "no-referrer"),
        ]
        // X-Frame-Options has no way to name several origins; with origins allowed the policy alone says who may.
        if frameAncestors.isEmpty { headers.append(("X-Frame-Options", "DENY")) }
        commonHeaders = headers
    }

    /// The pixel scale of the floors on the page, pixels per metre (in each floor's SVG coordinates).
    public var scale: Double { renderer.scale }

    /// The response for a GET of `path` (without the query), given the dashboard's state at `now`.
    public func respond(to path: String, state: DashboardState, now: Double) -> DashboardResponse {
        switch path {
        case "/", "/index.html":
            return document(page, type: "text/html; charset=utf-8")
        case "/app.js":
            return document(script, type: "text/javascript; charset=utf-8", cache: "no-cache")
        case "/app.css":
            return document(style, type: "text/css; charset=utf-8", cache: "no-cache")
        case "/snapshot.json":
            return document(Array(JSONWriter().string(state.snapshot(now: now).json).utf8), type: "application/json")
        case "/events":
            let snapshot = state.snapshot(now: now).serverSentEvent(id: String(state.sequence))
            let initial = ServerSentEvent.retry(milliseconds: Self.reconnectDelay) + snapshot.encoded
            return DashboardResponse(
                status: 200,
                headers: commonHeaders + [
                    ("Content-Type", "text/event-stream; charset=utf-8"), ("Cache-Control", "no-store"),
                ],
                body: .stream(initial: Array(initial.utf8)))
        default:
            if path.hasPrefix("/zones/"), let key = ZoneKey(pageKey: path.dropFirst("/zones/".count)),
                let zone = map.zones.first(where: { $0.key == key }),
                let history = state.history(of: key, now: now)
            {
                let html = ZoneHistoryPage(
                    zone: zone, history: history, siteName: map.site.name, now: now, renderer: renderer
                ).html
                return document(Array(html.utf8), type: "text/html; charset=utf-8")
            }
            return DashboardResponse(
                status: 404, headers: commonHeaders + [("Content-Type", "text/plain; charset=utf-8")],
                body: .complete(Array("not found\n".utf8)))
        }
    }

    private func document(_ bytes: [UInt8], type: String, cache: String = "no-store") -> DashboardResponse {
        DashboardResponse(
            status: 200, headers: commonHeaders + [("Content-Type", type), ("Cache-Control", cache)],
            body: .complete(bytes))
    }
}

/// A response from the dashboard, before the server frames it.
public struct DashboardResponse: Sendable {
    /// What follows the headers.
    public enum Body: Sendable, Equatable {
        /// A complete body; the server sends its length and closes.
        case complete([UInt8])
        /// The start of an event stream, which stays open for the changes that follow.
        case stream(initial: [UInt8])
    }

    /// The HTTP status code.
    public var status: Int
    /// Headers, in order (the server adds the framing ones).
    public var headers: [(String, String)]
    /// The body.
    public var body: Body
}
