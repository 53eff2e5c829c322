import Foundation
import Synchronization
import Testing
import WhereaboutsCore
import WhereaboutsEditor
import WhereaboutsJSON
import WhereaboutsMapFile
import WhereaboutsSurvey
import WhereaboutsWire

/// A desk that is a real survey session on the sample map, with a clock the test moves and a report the test sets:
/// the routes see what the shell's desk gives them, without a broker, files or threads.
final class SessionDesk: SurveyDesk {
    struct State {
        var session: SurveySession
        var now = 1_767_225_600.0
        var report: SurveyDeskReport?
        var reportState = SurveyReportState.none
        var calls: [String] = []
    }

    let state: Mutex<State>

    init() throws {
        let session = try SurveySession(document: try MapDocument.parse(Array(sampleMap.utf8)))
        state = Mutex(State(session: session))
    }

    var calls: [String] { state.withLock { $0.calls } }

    func setReport(_ report: SurveyReport?, revision: String) {
        state.withLock {
            $0.report = report.map { SurveyDeskReport(report: $0, mapRevision: revision, places: 3) }
            $0.reportState = report == nil ? .none : .ready(places: 3)
        }
    }

    private func act(
        _ name: String, _ action: (inout SurveySession, Double) throws(SurveyError) -> SurveyRecords
    ) throws(SurveyDeskError) -> SurveyProgress {
        try state.withLock { state throws(SurveyDeskError) in
            state.calls.append(name)
            do throws(SurveyError) {
                _ = try action(&state.session, state.now)
            } catch {
                throw SurveyDeskError(error)
            }
            return state.session.progress(now: state.now)
        }
    }

    func start(tag: TagIdentity) throws(SurveyDeskError) -> SurveyProgress {
        try act("start \(tag)") { session, now in session.start(tag: tag, now: now) }
    }

    func standAt(floor: UInt16, x: Double, y: Double) throws(SurveyDeskError) -> SurveyProgress {
        try act("point \(floor) \(x) \(y)") { session, now throws(SurveyError) in
            try session.standAt(floor: floor, x: x, y: y, now: now)
        }
    }

    func walk(floor: UInt16, route: [Point], speed: Double) throws(SurveyDeskError) -> SurveyProgress {
        try act("walk \(route.count)") { session, now throws(SurveyError) in
            try session.walk(floor: floor, route: route, speed: speed, now: now)
        }
    }

    func finish() throws(SurveyDeskError) -> SurveyProgress {
        let progress = try act("finish") { session, now in session.finish(now: now) }
        state.withLock { $0.reportState = .running }
        return progress
    }

    func status() -> SurveyDeskStatus {
        state.withLock { state in
            SurveyDeskStatus(
                connected: true, broker: "mqtt://127.0.0.1:1883", directory: "/survey",
                progress: state.session.progress(now: state.now),
                surveyed: state.session.truth.map { ($0.floor, $0.x, $0.y) }, report: state.reportState,
                heard: [["tag": "ibeacon-x"]], dwell: 30)
        }
    }

    func report() -> SurveyDeskReport? { state.withLock { $0.report } }
}

@Suite("Editor survey routes: wiring, refusals and the save of the calibrated map")
struct EditorSurveyRoutesTests {
    static let tag = "ibeacon-f7826da6-4fa2-4e98-8024-bc5b71e0893e-7-7"
    static let hint = "start the editor with --broker"

    func routes(_ store: MemoryStore, desk: (any SurveyDesk)?, loopback: Bool = true) -> EditorSurveyRoutes {
        EditorSurveyRoutes(
            desk: desk, access: EditorAccess(token: testToken, listenerIsLoopback: loopback),
            editor: site(store, loopback: loopback), withoutBroker: Self.hint)
    }

    func answer(_ routes: EditorSurveyRoutes, _ request: EditorRequest) throws -> (Int, JSONObject) {
        let response = try #require(routes.respond(to: request))
        return (response.status, try #require(try json(response).object))
    }

    @Test("only the survey's paths are answered; the editor's go on to the editor")
    func onlySurveyPaths() throws {
        let routes = routes(MemoryStore(map: sampleMap), desk: try SessionDesk())
        #expect(routes.respond(to: get("/edit/api/map")) == nil)
        #expect(routes.respond(to: post("/edit/api/save", sampleMap)) == nil)
        #expect(routes.respond(to: get("/edit/api/survey/nothing"))?.status == 404)
        #expect(routes.respond(to: get("/edit/api/survey/start"))?.status == 405)
        #expect(routes.respond(to: get("/edit/api/survey/start"))?.header("Allow") == "POST")
        #expect(routes.respond(to: post("/edit/api/survey/status", "{}"))?.status == 405)
    }

    @Test("without a broker the status says how to start with one, and every action is refused with it")
    func withoutBroker() throws {
        let store = MemoryStore(map: sampleMap)
        let routes = routes(store, desk: nil)
        let (status, body) = try answer(routes, get("/edit/api/survey/status"))
        #expect(status == 200 && body["broker"] == false && body["hint"]?.string == Self.hint)
        for route in ["start", "point", "walk", "finish", "save"] {
            let (status, body) = try answer(routes, post("/edit/api/survey/" + route, "{\"tag\":\"\(Self.tag)\"}"))
            #expect(status == 409 && body["error"]?.string?.contains(Self.hint) == true, "\(route)")
        }
        #expect(routes.respond(to: get("/edit/api/survey/report.json"))?.status == 404)
        #expect(store.writeCount == 0)
    }

    @Test("on a listener that is not loopback, an action without the token is refused and the desk never called")
    func tokenRequired() throws {
        let desk = try SessionDesk()
        let routes = routes(MemoryStore(map: sampleMap), desk: desk, loopback: false)
        for route in ["start", "point", "walk", "finish", "save"] {
            #expect(routes.respond(to: post("/edit/api/survey/" + route, "{}"))?.status == 403, "\(route)")
            var wrong = post("/edit/api/survey/" + route, "{}", loopbackPeer: false)
            wrong.token = "wrong"
            #expect(routes.respond(to: wrong)?.status == 403, "\(route)")
        }
        #expect(desk.calls.isEmpty)
        var request = post("/edit/api/survey/start", "{\"tag\":\"\(Self.tag)\"}", loopbackPeer: false)
        request.token = testToken
        #expect(routes.respond(to: request)?.status == 200)
        #expect(desk.calls == ["start \(Self.tag)"])
        // Reading is open, as the editor's is.
        #expect(routes.respond(to: get("/edit/api/survey/status"))?.status == 200)
    }

    @Test("bodies are read strictly: what they lack is named (400) and the desk is not called")
    func strictBodies() throws {
        let desk = try SessionDesk()
        let routes = routes(MemoryStore(map: sampleMap), desk: desk)
        for (route, body) in [
            ("start", "{}"), ("start", "{\"tag\":\"phone\"}"), ("start", "not json"), ("point", "{\"x\":1}"),
            ("point", "{\"floor\":1,\"x\":\"1\",\"y\":2}"), ("point", "{\"floor\":-1,\"x\":1,\"y\":2}"),
            ("walk", "{\"floor\":1,\"route\":\"x\"}"), ("walk", "{\"floor\":1,\"route\":[[1]]}"),
        ] {
            let (status, body) = try answer(routes, post("/edit/api/survey/" + route, body))
            #expect(status == 400 && body["error"]?.string?.isEmpty == false, "\(route) \(body)")
        }
        #expect(desk.calls.isEmpty)
    }

    @Test("actions reach the desk; its refusals keep their status; each answer is the status with the progress")
    func actions() throws {
        let desk = try SessionDesk()
        let routes = routes(MemoryStore(map: sampleMap), desk: desk)
        let early = try answer(routes, post("/edit/api/survey/point", "{\"floor\":1,\"x\":2,\"y\":3}"))
        #expect(early.0 == 409 && early.1["error"]?.string?.contains("choose the survey tag") == true)
        #expect(try answer(routes, post("/edit/api/survey/start", "{\"tag\":\"\(Self.tag)\"}")).0 == 200)
        let outside = try answer(routes, post("/edit/api/survey/point", "{\"floor\":1,\"x\":25,\"y\":3}"))
        #expect(outside.0 == 422 && outside.1["error"]?.string?.contains("outline") == true)
        #expect(try answer(routes, post("/edit/api/survey/point", "{\"floor\":9,\"x\":2,\"y\":3}")).0 == 422)
        let (status, body) = try answer(routes, post("/edit/api/survey/point", "{\"floor\":1,\"x\":2,\"y\":3}"))
        #expect(status == 200 && body["broker"] == true && body["connected"] == true)
        let progress = try #require(body["progress"]?.object)
        #expect(progress["tag"]?.string == Self.tag && progress["phase"]?.string == "standing")
        #expect(progress["place"]?.object?["x"]?.double == 2 && progress["place"]?.object?["active"] == true)
        #expect(body["surveyed"] == [[1, 2, 3]] && body["report"]?.string == "none")
        let walk = try answer(routes, post("/edit/api/survey/walk", "{\"floor\":1,\"route\":[[1,1],[5,1]]}"))
        #expect(walk.0 == 200 && walk.1["progress"]?.object?["phase"]?.string == "walking")
        let finished = try answer(routes, post("/edit/api/survey/finish", ""))
        #expect(finished.0 == 200 && finished.1["report"]?.string == "running")
        #expect(
            desk.calls == [
                "point 1 2.0 3.0", "start \(Self.tag)", "point 1 25.0 3.0", "point 9 2.0 3.0", "point 1 2.0 3.0",
                "walk 2", "finish",
            ])
    }

    @Test("the report is served once ready: JSON with its points, the standalone HTML under a sandbox")
    func reportServed() throws {
        let desk = try SessionDesk()
        let routes = routes(MemoryStore(map: sampleMap), desk: desk)
        for path in ["report.json", "report.html"] {
            #expect(routes.respond(to: get("/edit/api/survey/" + path))?.status == 404)
        }
        desk.setReport(SurveyReport(site: "Test site", failure: "cannot calibrate: no samples"), revision: "r")
        let (status, body) = try answer(routes, get("/edit/api/survey/report.json"))
        #expect(status == 200 && body["ok"] == false && body["places"] == 3)
        #expect(body["verdict"]?.string?.contains("no samples") == true)
        let html = try #require(routes.respond(to: get("/edit/api/survey/report.html")))
        #expect(html.status == 200 && html.header("Content-Type")?.hasPrefix("text/html") == true)
        #expect(html.header("Content-Security-Policy") == EditorSurveyRoutes.reportSecurityPolicy)
        #expect(String(decoding: html.body, as: UTF8.self).contains("Survey report: Test site"))
    }

    @Test("saving is refused before a report, and for a report that cannot be saved; nothing is written")
    func saveRefused() throws {
        let store = MemoryStore(map: sampleMap)
        let desk = try SessionDesk()
        let routes = routes(store, desk: desk)
        let early = try answer(routes, post("/edit/api/survey/save", "{}"))
        #expect(early.0 == 409 && early.1["error"]?.string?.contains("finish the survey") == true)
        var refused = SurveyReport(site: "Test site", failure: "x")
        refused.failure = nil
        refused.mapText = sampleMap
        refused.refusal = "held out by area, the median error rises from 1.07 to 1.19 m"
        desk.setReport(refused, revision: EditorSite.revision(Array(sampleMap.utf8)))
        let (status, body) = try answer(routes, post("/edit/api/survey/save", "{}"))
        #expect(status == 422 && body["saved"] == false)
        #expect(body["error"]?.string?.contains("rises from 1.07 to 1.19 m") == true)
        desk.setReport(SurveyReport(site: "Test site", failure: "cannot calibrate: no samples"), revision: "r")
        #expect(try answer(routes, post("/edit/api/survey/save", "{}")).0 == 422)
        #expect(store.writeCount == 0 && store["MAP.bak"] == nil)
    }

    @Test(
        "saving writes the calibrated map through the editor's save (merge, .bak, reload hint), not over a newer file")
    func saveWrites() throws {
        let store = MemoryStore(map: sampleMap)
        let desk = try SessionDesk()
        let routes = routes(store, desk: desk)
        let calibrated = sampleMap.replacingOccurrences(
            of: "\"z\": 2.4}", with: "\"z\": 2.4, \"rssi_offset\": 3.5, \"path_loss_exponent\": 2.4}")
        var report = SurveyReport(site: "Test site", failure: "x")
        report.failure = nil
        report.mapText = calibrated
        desk.setReport(report, revision: EditorSite.revision(Array(sampleMap.utf8)))
        let (status, body) = try answer(routes, post("/edit/api/survey/save", "{}"))
        #expect(status == 200 && body["saved"] == true && body["backup"] == true)
        #expect(body["reload"]?.string?.contains("systemctl reload") == true)
        #expect(store["MAP.bak"] == Array(sampleMap.utf8))
        // The merge keeps the untouched bytes (`2.0`, members on one line) and adds the calibration.
        #expect(store["MAP"] == Array(calibrated.utf8))
        // The file changed since the survey started (the save above): the calibration was made from the older text.
        let again = try answer(routes, post("/edit/api/survey/save", "{}"))
        #expect(again.0 == 409 && again.1["error"]?.string?.contains("changed since the survey started") == true)
        #expect(store.writeCount == 1)
    }
}
