import WhereaboutsCore
import WhereaboutsJSON
import WhereaboutsSurvey

/// The editor's survey routes, under `/edit/api/survey/`: the shell answers them first (the survey is live state,
/// behind a ``SurveyDesk``) and hands every other request to ``EditorSite``.
///
/// - `GET status`: `{"broker": true, "address", "connected", "directory", "dwell", "progress": <SurveyProgress.json>,
///   "surveyed": [[floor, x, y], …], "report": "none"|"running"|"ready", "report_places", "heard": [..],
///   "failure"}`; without a broker `{"broker": false, "hint": "how to start the editor with one"}`.
/// - `POST start {"tag": id}`, `POST point {"floor", "x", "y"}`, `POST walk {"floor", "route", "speed"}`,
///   `POST finish` (closes the point under way and starts the report; it takes seconds and runs off the server's
///   thread, so `status` says when it is ready): each answers the status.
/// - `GET report.json` (``SurveyReport/json`` with `places`), `GET report.html` (the standalone report): 404 until
///   a report is ready.
/// - `POST save`: writes the report's calibrated map over the map file through the editor's own save
///   (``EditorSite``: the merge that keeps untouched bytes, `MAP.bak`, the reload hint); refused while no report
///   is ready (409), when the report refuses its map (422), and when the file changed since the survey started
///   (409: the calibrated map was made from the old text).
///
/// Writes (every POST) follow the editor's rule (``EditorAccess``): loopback or the token.
public struct EditorSurveyRoutes: Sendable {
    /// The routes' common prefix.
    public static let prefix = "/edit/api/survey/"

    /// The policy of the standalone report: its own inline style and drawing, nothing fetched, nothing run.
    public static let reportSecurityPolicy = "default-src 'none'; style-src 'unsafe-inline'; img-src data:; sandbox"

    private let desk: (any SurveyDesk)?
    private let access: EditorAccess
    private let editor: EditorSite
    private let withoutBroker: String

    /// - Parameters:
    ///   - desk: the live survey; nil when the editor was started without a broker.
    ///   - editor: the editor whose save writes the calibrated map.
    ///   - withoutBroker: what the page says without a broker: how to start the editor with one.
    public init(desk: (any SurveyDesk)?, access: EditorAccess, editor: EditorSite, withoutBroker: String) {
        self.desk = desk
        self.access = access
        self.editor = editor
        self.withoutBroker = withoutBroker
    }

    /// The response to a survey route; nil for any other path.
    public func respond(to request: EditorRequest) -> EditorResponse? {
        guard request.path.hasPrefix(Self.prefix) else { return nil }
        let route = String(request.path.dropFirst(Self.prefix.count))
        switch (request.method, route) {
        case ("GET", "status"):
            guard let desk else { return .json(["broker": false, "hint": .string(withoutBroker)]) }
            return .json(Self.json(desk.status()))
        case ("GET", "report.json"):
            guard let ready = desk?.report() else { return Self.noReport }
            var object = ready.report.json.object ?? JSONObject()
            object["places"] = .number(Double(ready.places))
            return .json(.object(object))
        case ("GET", "report.html"):
            guard let ready = desk?.report() else { return Self.noReport }
            return EditorResponse(
                status: 200,
                headers: [
                    ("Content-Security-Policy", Self.reportSecurityPolicy), ("X-Content-Type-Options", "nosniff"),
                    ("Referrer-Policy", "no-referrer"), ("Content-Type", "text/html; charset=utf-8"),
                    ("Content-Disposition", "inline; filename=\"survey-report.html\""), ("Cache-Control", "no-store"),
                ],
                body: Array(ready.report.html.utf8))
        case ("POST", "start"), ("POST", "point"), ("POST", "walk"), ("POST", "finish"), ("POST", "save"):
            guard access.allowsWrite(request) else { return .forbidden }
            guard let desk else { return .failure(409, "no survey without a broker: " + withoutBroker) }
            return act(route, request, desk)
        case (_, "status"), (_, "report.json"), (_, "report.html"):
            return .methodNotAllowed("GET")
        case (_, "start"), (_, "point"), (_, "walk"), (_, "finish"), (_, "save"):
            return .methodNotAllowed("POST")
        default:
            return .notFound
        }
    }

    static let noReport = EditorResponse.failure(404, "no report yet: finish the survey, then wait for its report")

    private func act(_ route: String, _ request: EditorRequest, _ desk: any SurveyDesk) -> EditorResponse {
        do throws(SurveyDeskError) {
            switch route {
            case "start":
                _ = try desk.start(
                    tag: try Self.read { () throws(SurveyError) in try SurveyRequests.tag(request.body) })
            case "point":
                let point = try Self.read { () throws(SurveyError) in try SurveyRequests.point(request.body) }
                _ = try desk.standAt(floor: point.floor, x: point.x, y: point.y)
            case "walk":
                let walk = try Self.read { () throws(SurveyError) in try SurveyRequests.walk(request.body) }
                _ = try desk.walk(floor: walk.floor, route: walk.route, speed: walk.speed)
            case "finish":
                _ = try desk.finish()
            default:
                return save(request, desk)
            }
        } catch {
            return .failure(error.status, error.message)
        }
        return .json(Self.json(desk.status()))
    }

    /// A body read strictly; what it lacks is the request's fault (400).
    private static func read<T>(_ body: () throws(SurveyError) -> T) throws(SurveyDeskError) -> T {
        do { return try body() } catch { throw SurveyDeskError(status: 400, error.description) }
    }

    private func save(_ request: EditorRequest, _ desk: any SurveyDesk) -> EditorResponse {
        guard let ready = desk.report() else { return Self.noReport.with(status: 409) }
        guard ready.report.isSavable, let text = ready.report.mapText else {
            let why = ready.report.failure ?? ready.report.refusal.map { "the spatial check refuses it: \($0)" }
            return .json(
                [
                    "saved": false,
                    "error": .string("the report's calibrated map cannot be saved: " + (why ?? "there is none")),
                ], status: 422)
        }
        // The editor's own save, so that the merge, the backup and the reload hint are the same; at the revision the
        // survey started from, so that a file changed since is not overwritten with the older text's calibration.
        var inner = request
        inner.path = "/edit/api/save"
        inner.query = "revision=" + ready.mapRevision + (request.query.map { "&" + $0 } ?? "")
        inner.body = Array(text.utf8)
        let response = editor.respond(to: inner)
        guard response.status != 409 else {
            return .failure(
                409,
                "the map file changed since the survey started; the calibrated map was made from the old text and "
                    + "would undo those changes (nothing was saved): calibrate the new file with `whereabouts "
                    + "calibrate` on the survey's files")
        }
        return response
    }

    /// The status for the page.
    static func json(_ status: SurveyDeskStatus) -> JSONValue {
        let places: JSONValue =
            if case .ready(let places) = status.report { .number(Double(places)) } else { .null }
        let surveyed = status.surveyed.map { place -> JSONValue in
            [.number(Double(place.floor)), .number(place.x), .number(place.y)]
        }
        return .object(
            JSONObject([
                ("broker", true), ("address", .string(status.broker)), ("connected", .bool(status.connected)),
                ("directory", status.directory.map { .string($0) } ?? .null), ("dwell", .number(status.dwell)),
                ("progress", status.progress?.json ?? .null), ("surveyed", .array(surveyed)),
                ("report", .string(status.report.name)), ("report_places", places), ("heard", status.heard),
                ("failure", status.failure.map { .string($0) } ?? .null),
            ]))
    }
}

extension EditorResponse {
    func with(status: Int) -> EditorResponse {
        var response = self
        response.status = status
        return response
    }
}
