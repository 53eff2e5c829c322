public import WhereaboutsCore
import WhereaboutsDrawing
import WhereaboutsJSON

/// What the dashboard answers for one path: a page, a file, the snapshot, or the start of the event stream.
///
/// Knows nothing of sockets: the server hands it a path and sends back what it returns.
public struct DashboardSite: Sendable {
    /// The policy every response carries: scripts and styles only from this server (no inline ones, so a name from
    /// the map or the broker that slipped through escaping still could not run), nothing embedded elsewhere.
    public static let contentSecurityPolicy =
        "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; "
        + "base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

    /// How long a browser waits before reconnecting the event stream, milliseconds.
    public static let reconnectDelay = 2000

    private let map: FloorMap
    private let renderer = MapRenderer()
    private let page: [UInt8]
    private let script = Array(DashboardScript.text.utf8)
    private let style = Array(DashboardStyle.text.utf8)

    /// Builds the static page for a map.
    public init(map: FloorMap) {
        self.map = map
        page = Array(DashboardPage(map: map, renderer: renderer).html.utf8)
    }

    /// The pixel scale of the floors on the page, pixels per metre (in each floor's SVG coordinates).
    public var scale: Double { renderer.scale }

    /// The response for a GET of `path` (without the query), given the dashboard's state at `now`.
    public func respond(to path: String, state: DashboardState, now: Double) -> DashboardResponse {
        switch path {
        case "/", "/index.html":
            return .document(page, type: "text/html; charset=utf-8")
        case "/app.js":
            return .document(script, type: "text/javascript; charset=utf-8", cache: "no-cache")
        case "/app.css":
            return .document(style, type: "text/css; charset=utf-8", cache: "no-cache")
        case "/snapshot.json":
            return .document(Array(JSONWriter().string(state.snapshot().json).utf8), type: "application/json")
        case "/events":
            let snapshot = state.snapshot().serverSentEvent(id: String(state.sequence))
            let initial = ServerSentEvent.retry(milliseconds: Self.reconnectDelay) + snapshot.encoded
            return DashboardResponse(
                status: 200,
                headers: Self.commonHeaders + [
                    ("Content-Type", "text/event-stream; charset=utf-8"), ("Cache-Control", "no-store"),
                ],
                body: .stream(initial: Array(initial.utf8)))
        default:
            if path.hasPrefix("/zones/"), let key = Self.zoneKey(path.dropFirst("/zones/".count)),
                let zone = map.zones.first(where: { $0.key == key }),
                let history = state.history(of: key, now: now)
            {
                let html = ZoneHistoryPage(
                    zone: zone, history: history, siteName: map.site.name, now: now, renderer: renderer
                ).html
                return .document(Array(html.utf8), type: "text/html; charset=utf-8")
            }
            return .notFound
        }
    }

    /// `<floor>-<zone>`, both canonical decimal numbers.
    private static func zoneKey(_ text: Substring) -> ZoneKey? {
        let parts = text.split(separator: "-", omittingEmptySubsequences: false)
        guard parts.count == 2, let floor = UInt16(parts[0]), let zone = UInt16(parts[1]),
            String(floor) == parts[0], String(zone) == parts[1]
        else { return nil }
        return ZoneKey(floor: floor, minor: zone)
    }

    /// The headers of every response: the content policy, no sniffing, no referrer, no framing.
    public static let commonHeaders: [(String, String)] = [
        ("Content-Security-Policy", contentSecurityPolicy), ("X-Content-Type-Options", "nosniff"),
        ("Referrer-Policy", "no-referrer"), ("X-Frame-Options", "DENY"),
    ]
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

    static func document(_ bytes: [UInt8], type: String, cache: String = "no-store") -> DashboardResponse {
        DashboardResponse(
            status: 200, headers: DashboardSite.commonHeaders + [("Content-Type", type), ("Cache-Control", cache)],
            body: .complete(bytes))
    }

    static let notFound = DashboardResponse(
        status: 404,
        headers: DashboardSite.commonHeaders + [("Content-Type", "text/plain; charset=utf-8")],
        body: .complete(Array("not found\n".utf8)))
}
