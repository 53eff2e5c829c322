public import WhereaboutsCore
public import WhereaboutsJSON
import WhereaboutsMapFile

/// What `whereabouts web --edit MAP` answers: the editor's page, the map, its checks, saving, and the floor-plan
/// pictures beside it.
///
/// Routes (all under `/edit`; `/` redirects there):
/// - `GET /edit`, `/edit/app.js`, `/edit/app.css`: the page (self-contained: nothing fetched from elsewhere).
/// - `GET /edit/api/map`: `{"text": <the file's text>, "revision": .., "exists": bool, "underlays": [..],
///   "writable": bool, "reload": ..}`.
/// - `POST /edit/api/check` (body: the map's text): `{"ok": bool, "problems": [{"path", "message"}], "plan": [..]}`,
///   every problem the loader finds, each with its JSON path; `plan` when ok and a planner is given.
/// - `POST /edit/api/save[?revision=R]` (body: the map's text): 422 with every problem while the map does not load;
///   409 when the file changed since revision R; else the file's new text is the edited document merged into the
///   file's current text (``EditorMerge``), the previous text kept as `.bak`: `{"saved": true, "reload": ..}`.
/// - `PUT /edit/api/underlay?floor=N&name=F` (body: a PNG, JPEG or SVG picture, told by its bytes, at most
///   ``UnderlayImage/maximumBytes``): stored beside the map as a safe name: `{"file": .., "url": ..}`.
/// - `GET /edit/underlay/F`: the picture, with its type.
///
/// Writes are refused with 403 unless ``EditorAccess`` allows them. Knows no sockets and no files: the server hands it
/// requests, and the files are behind ``EditorStore``.
public struct EditorSite: Sendable {
    /// Makes the planning view's data for a map that loads: one JSON value per floor (AccuracyPlanJSON).
    public typealias Planner = @Sendable (FloorMap) -> [JSONValue]

    /// The policy every page response carries: everything from this server only, no inline scripts or styles.
    public static let contentSecurityPolicy =
        "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; "
        + "base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

    /// An uploaded SVG is served so that nothing in it runs, even opened on its own.
    static let pictureSecurityPolicy = "default-src 'none'; style-src 'unsafe-inline'; sandbox"

    /// How to make the locator read the saved map: the shipped unit reloads on SIGHUP (deploy/locator).
    public static let defaultReloadHint =
        "sudo systemctl reload whereabouts-locator (or: sudo kill -HUP $(pidof whereabouts-locator))"

    private let store: any EditorStore
    private let access: EditorAccess
    private let newMapText: [UInt8]
    private let reloadHint: String
    private let planner: Planner?
    private let page = Array(EditorPage.html.utf8)
    private let script = Array(EditorScript.text.utf8)
    private let style = Array(EditorStyle.text.utf8)

    /// - Parameters:
    ///   - newMapText: the document the editor starts from when the store has no map file yet.
    ///   - planner: the planning view's data for a map that loads, sent with each check; nil sends none.
    public init(
        store: any EditorStore, access: EditorAccess, newMapText: String, reloadHint: String = defaultReloadHint,
        planner: Planner? = nil
    ) {
        self.store = store
        self.access = access
        self.newMapText = Array(newMapText.utf8)
        self.reloadHint = reloadHint
        self.planner = planner
    }

    /// The response to one request.
    public func respond(to request: EditorRequest) -> EditorResponse {
        switch (request.method, request.path) {
        case ("GET", "/"):
            let query = request.query.map { "?" + $0 } ?? ""
            return EditorResponse(
                status: 303, headers: Self.commonHeaders + [("Location", "/edit" + query)], body: [])
        case ("GET", "/favicon.ico"):
            return EditorResponse(status: 204, headers: Self.commonHeaders, body: [])
        case ("GET", "/edit"), ("GET", "/edit/"):
            return .document(page, type: "text/html; charset=utf-8")
        case ("GET", "/edit/app.js"):
            return .document(script, type: "text/javascript; charset=utf-8")
        case ("GET", "/edit/app.css"):
            return .document(style, type: "text/css; charset=utf-8")
        case ("GET", "/edit/api/map"):
            return mapDocument(request)
        case ("POST", "/edit/api/check"):
            return check(request.body)
        case ("POST", "/edit/api/save"):
            guard access.allowsWrite(request) else { return .forbidden }
            return save(request)
        case ("PUT", "/edit/api/underlay"):
            guard access.allowsWrite(request) else { return .forbidden }
            return storeUnderlay(request)
        case ("GET", _) where request.path.hasPrefix("/edit/underlay/"):
            return underlay(named: String(request.path.dropFirst("/edit/underlay/".count)))
        case (_, "/"), (_, "/edit"), (_, "/edit/"), (_, "/edit/app.js"), (_, "/edit/app.css"), (_, "/edit/api/map"):
            return .methodNotAllowed("GET")
        case (_, "/edit/api/check"), (_, "/edit/api/save"):
            return .methodNotAllowed("POST")
        case (_, "/edit/api/underlay"):
            return .methodNotAllowed("PUT")
        default:
            return .notFound
        }
    }

    /// The document the editor starts from when there is no map file yet: the site, one 10 m × 10 m floor to
    /// redraw, no agents. It loads, so the first save can write it.
    public static func newMapText(siteUUID: String, siteName: String) -> String {
        let square: JSONValue = [[0, 0], [10, 0], [10, 10], [0, 10]]
        let document: JSONValue = [
            "site": ["uuid": .string(siteUUID), "name": .string(siteName)],
            "floors": [["major": 1, "name": "Ground floor", "height": 0, "outline": square]],
            "zones": [], "agents": [], "walls": [],
        ]
        return JSONWriter(pretty: true).string(document) + "\n"
    }

    // MARK: - The map

    private func mapDocument(_ request: EditorRequest) -> EditorResponse {
        let stored: [UInt8]?
        do {
            stored = try store.readMap()
        } catch {
            return .failure(500, "cannot read the map: \(error)")
        }
        let text = stored ?? newMapText
        var underlays: [JSONValue] = []
        if let document = try? MapDocument.parse(text) {
            for (major, underlay) in FloorUnderlay.underlays(in: document).sorted(by: { $0.key < $1.key }) {
                let present = ((try? store.readUnderlay(named: underlay.file)) ?? nil) != nil
                underlays.append([
                    "floor": .number(Double(major)), "file": .string(underlay.file),
                    "url": .string("/edit/underlay/" + underlay.file), "present": .bool(present),
                ])
            }
        }
        return .json([
            "text": .string(String(decoding: text, as: UTF8.self)), "revision": .string(Self.revision(stored)),
            "exists": .bool(stored != nil), "underlays": .array(underlays),
            "writable": .bool(access.allowsWrite(request)), "reload": .string(reloadHint),
        ])
    }

    /// The problems of a map's text, each with its JSON path, or nil when it loads.
    private func problems(of text: [UInt8]) -> (map: FloorMap?, problems: [JSONValue]) {
        switch FloorMap.parse(text) {
        case .success(let map): return (map, [])
        case .failure(let found):
            return (
                nil,
                found.problems.map { ["path": .string($0.path), "message": .string($0.message)] }
            )
        }
    }

    private func check(_ body: [UInt8]) -> EditorResponse {
        let (map, problems) = problems(of: body)
        var answer: [(key: String, value: JSONValue)] = [("ok", .bool(map != nil)), ("problems", .array(problems))]
        if let map, let planner { answer.append(("plan", .array(planner(map)))) }
        return .json(.object(JSONObject(answer)))
    }

    private func save(_ request: EditorRequest) -> EditorResponse {
        let (map, problems) = problems(of: request.body)
        guard map != nil, let edited = try? MapDocument.parse(request.body) else {
            return .json(["saved": false, "problems": .array(problems)], status: 422)
        }
        let original: [UInt8]?
        do {
            original = try store.readMap()
        } catch {
            return .failure(500, "cannot read the map: \(error)")
        }
        if let revision = request.queryValue("revision"), revision != Self.revision(original) {
            return .failure(409, "the map file changed since the page loaded it; reload the page (nothing was saved)")
        }
        let text = Self.newText(original: original, edited: edited)
        guard case .success = FloorMap.parse(text) else {
            return .failure(500, "the merged text does not load (nothing was saved)")
        }
        let unchanged = text == original
        if !unchanged {
            do {
                try store.writeMap(text, backup: original)
            } catch {
                return .failure(500, "cannot save the map: \(error)")
            }
        }
        return .json([
            "saved": true, "unchanged": .bool(unchanged), "revision": .string(Self.revision(text)),
            "backup": .bool(!unchanged && original != nil), "reload": .string(reloadHint),
        ])
    }

    /// The file's new text: the edit merged into what is on disk (pretty text when there is no file or it does not
    /// parse), unless the merge would not read back as the edited document.
    public static func newText(original: [UInt8]?, edited: JSONValue) -> [UInt8] {
        let pretty = Array((JSONWriter(pretty: true).string(edited) + "\n").utf8)
        guard let original, let merged = try? EditorMerge.merge(original: original, edited: edited),
            (try? MapDocument.parse(merged)) == edited
        else { return pretty }
        return merged
    }

    /// A short fingerprint of the file's bytes (FNV-1a, 64 bits), so that a save can tell the file changed
    /// underneath the page; `none` when there is no file.
    public static func revision(_ bytes: [UInt8]?) -> String {
        guard let bytes else { return "none" }
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in bytes {
            hash ^= UInt64(byte)
            hash = hash &* 0x100_0000_01b3
        }
        let digits = String(hash, radix: 16)
        return String(repeating: "0", count: 16 - digits.count) + digits
    }

    // MARK: - Underlays

    private func storeUnderlay(_ request: EditorRequest) -> EditorResponse {
        guard let requested = request.queryValue("name"), !requested.isEmpty else {
            return .failure(400, "name the picture: ?name=plan.png")
        }
        if let floor = request.queryValue("floor"), UInt16(floor) == nil {
            return .failure(400, "floor must be a major (0 to 65535), not \"\(floor)\"")
        }
        guard request.body.count <= UnderlayImage.maximumBytes else {
            return .failure(413, "a picture may be at most \(UnderlayImage.maximumBytes >> 20) MB")
        }
        guard let kind = UnderlayImage(request.body) else {
            return .failure(415, "not a PNG, JPEG or SVG picture (told by its first bytes)")
        }
        guard let name = kind.storedName(for: requested) else {
            return .failure(400, "a picture's name is a file name, not a path: \"\(requested)\"")
        }
        do {
            try store.writeUnderlay(named: name, bytes: request.body)
        } catch {
            return .failure(500, "cannot store the picture: \(error)")
        }
        return .json([
            "file": .string(name), "url": .string("/edit/underlay/" + name), "type": .string(kind.contentType),
            "bytes": .number(Double(request.body.count)),
        ])
    }

    private func underlay(named name: String) -> EditorResponse {
        guard FloorUnderlay.isSafeFileName(name) else { return .notFound }
        let bytes: [UInt8]?
        do {
            bytes = try store.readUnderlay(named: name)
        } catch {
            return .failure(500, "cannot read the picture: \(error)")
        }
        guard let bytes, let kind = UnderlayImage(bytes) else { return .notFound }
        return EditorResponse(
            status: 200,
            headers: [
                ("Content-Security-Policy", Self.pictureSecurityPolicy), ("X-Content-Type-Options", "nosniff"),
                ("Content-Type", kind.contentType), ("Cache-Control", "no-cache"),
            ],
            body: bytes)
    }

    /// The headers of every response but a picture's: the content policy, no sniffing, no referrer, no framing.
    public static let commonHeaders: [(String, String)] = [
        ("Content-Security-Policy", contentSecurityPolicy), ("X-Content-Type-Options", "nosniff"),
        ("Referrer-Policy", "no-referrer"), ("X-Frame-Options", "DENY"),
    ]
}

extension EditorResponse {
    static func document(_ bytes: [UInt8], type: String) -> EditorResponse {
        EditorResponse(
            status: 200, headers: EditorSite.commonHeaders + [("Content-Type", type), ("Cache-Control", "no-cache")],
            body: bytes)
    }

    static func json(_ value: JSONValue, status: Int = 200) -> EditorResponse {
        EditorResponse(
            status: status,
            headers: EditorSite.commonHeaders + [
                ("Content-Type", "application/json"), ("Cache-Control", "no-store"),
            ],
            body: Array(JSONWriter().string(value).utf8))
    }

    static func failure(_ status: Int, _ message: String) -> EditorResponse {
        json(["error": .string(message)], status: status)
    }

    static let forbidden = failure(
        403,
        "writing needs the token printed when the editor started (?token= or X-Whereabouts-Token), "
            + "unless the editor listens on loopback and this is its own page on this machine")

    static let notFound = failure(404, "not found")

    static func methodNotAllowed(_ allowed: String) -> EditorResponse {
        var response = failure(405, "method not allowed")
        response.headers.append(("Allow", allowed))
        return response
    }
}
