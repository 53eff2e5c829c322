import Foundation
import Testing
import WhereaboutsCore
import WhereaboutsEditor
import WhereaboutsJSON
import WhereaboutsMapFile

@Suite("Editor site: the page, the map, checks and saving")
struct EditorSiteTests {
    @Test("the page, its script and its style are served under a strict policy, self-contained and under 200 KB")
    func page() throws {
        let editor = site(MemoryStore(map: sampleMap))
        var total = 0
        for (path, type) in [
            ("/edit", "text/html"), ("/edit/app.js", "text/javascript"), ("/edit/app.css", "text/css"),
        ] {
            let response = editor.respond(to: get(path))
            #expect(response.status == 200)
            #expect(response.header("Content-Type")?.hasPrefix(type) == true)
            #expect(response.header("Content-Security-Policy") == EditorSite.contentSecurityPolicy)
            let text = String(decoding: response.body, as: UTF8.self)
            // Nothing fetched from elsewhere: the only absolute URL is the SVG namespace.
            let outside = text.replacingOccurrences(of: "http://www.w3.org/2000/svg", with: "")
            #expect(!outside.contains("http://") && !outside.contains("https://") && !outside.contains("//cdn"))
            total += response.body.count
        }
        #expect(total < 200_000)
        #expect(editor.respond(to: get("/", query: "token=x")).header("Location") == "/edit?token=x")
        #expect(editor.respond(to: get("/nothing")).status == 404)
        #expect(editor.respond(to: get("/edit/api/save")).status == 405)
    }

    @Test("the map is served as the file's exact text, with its revision and its floors' underlays")
    func mapDocument() throws {
        let store = MemoryStore(map: sampleMap)
        store["plan.png"] = pngBytes
        let answer = try json(site(store).respond(to: get("/edit/api/map")))
        #expect(answer.object?["text"]?.string == sampleMap)
        #expect(answer.object?["revision"]?.string == EditorSite.revision(Array(sampleMap.utf8)))
        #expect(answer.object?["exists"] == true)
        #expect(answer.object?["writable"] == true)
        #expect(answer.object?["reload"]?.string?.contains("systemctl reload whereabouts-locator") == true)
        #expect(
            answer.object?["underlays"]
                == [["floor": 1, "file": "plan.png", "url": "/edit/underlay/plan.png", "present": true]])
    }

    @Test("without a map file the editor starts from a new map that loads")
    func newMap() throws {
        let answer = try json(site(MemoryStore(map: nil)).respond(to: get("/edit/api/map")))
        #expect(answer.object?["exists"] == false)
        #expect(answer.object?["revision"] == "none")
        let text = try #require(answer.object?["text"]?.string)
        let map = try FloorMap.parse(Array(text.utf8)).get()
        #expect(map.site.name == "New site" && map.floors.count == 1 && map.agents.isEmpty)
    }

    @Test("a check answers every problem the loader finds, each with its JSON path, all at once")
    func check() throws {
        let editor = site(MemoryStore(map: sampleMap))
        let valid = try json(editor.respond(to: post("/edit/api/check", sampleMap)))
        #expect(valid == ["ok": true, "problems": []])
        let broken =
            sampleMap
            .replacingOccurrences(of: "[[10,0],[20,0],[20,10],[10,10]]", with: "[[5,0],[20,0],[20,10],[5,10]]")
            .replacingOccurrences(of: #""x": 1, "y": 1"#, with: #""x": 40, "y": 1"#)
            .replacingOccurrences(of: #""scale": 0.05"#, with: #""scale": 0"#)
        let expected = try #require(FloorMap.parse(Array(broken.utf8)).failureProblems)
        #expect(expected.count == 3)
        let answer = try json(editor.respond(to: post("/edit/api/check", broken)))
        #expect(answer.object?["ok"] == false)
        let problems = answer.object?["problems"]?.array?.compactMap { problem -> MapProblem? in
            guard let path = problem.object?["path"]?.string, let message = problem.object?["message"]?.string else {
                return nil
            }
            return MapProblem(path: path, message: message)
        }
        #expect(problems == expected)
        #expect(
            Set(expected.map(\.path)) == ["$.zones[1].polygon", "$.agents[0]", "$.floors[0].underlay.scale"])
    }

    @Test("a plan is sent with a check of a map that loads, when a planner is given")
    func planner() throws {
        let editor = EditorSite(
            store: MemoryStore(map: sampleMap), access: EditorAccess(token: testToken, listenerIsLoopback: true),
            newMapText: "{}", planner: { map in map.floors.map { ["floor": .number(Double($0.major))] } })
        let answer = try json(editor.respond(to: post("/edit/api/check", sampleMap)))
        #expect(answer.object?["plan"] == [["floor": 1], ["floor": 2]])
    }

    @Test("saving is refused with 422 and every problem while the map is invalid; nothing is written")
    func saveRefused() throws {
        let store = MemoryStore(map: sampleMap)
        let broken = sampleMap.replacingOccurrences(of: #""minor": 2"#, with: #""minor": 1"#)
            .replacingOccurrences(of: #""id": "a-1""#, with: #""id": "a 1""#)
        let response = site(store).respond(to: post("/edit/api/save", broken))
        #expect(response.status == 422)
        let answer = try json(response)
        #expect(answer.object?["saved"] == false)
        let paths = answer.object?["problems"]?.array?.compactMap { $0.object?["path"]?.string }
        #expect(paths == ["$.zones[1].minor", "$.agents[0].id"])
        #expect(store["MAP"] == Array(sampleMap.utf8) && store["MAP.bak"] == nil && store.writeCount == 0)
        #expect(site(store).respond(to: post("/edit/api/save", "{not json")).status == 422)
    }

    @Test("saving keeps the previous file as .bak and writes the edit merged into the file")
    func saveWrites() throws {
        let store = MemoryStore(map: sampleMap)
        var document = try MapDocument.parse(Array(sampleMap.utf8))
        guard case .object(var root) = document, case .array(var agents)? = root["agents"] else {
            Issue.record("the sample has agents")
            return
        }
        agents.append(["id": "a-2", "floor": 2, "x": 5, "y": 5, "z": 2.4])
        root["agents"] = .array(agents)
        document = .object(root)
        let edited = JSONWriter(pretty: true).string(document)
        let response = site(store).respond(
            to: post("/edit/api/save", edited, query: "revision=" + EditorSite.revision(Array(sampleMap.utf8))))
        #expect(response.status == 200)
        let answer = try json(response)
        #expect(answer.object?["saved"] == true && answer.object?["unchanged"] == false)
        #expect(answer.object?["backup"] == true)
        #expect(answer.object?["reload"]?.string == EditorSite.defaultReloadHint)
        #expect(store["MAP.bak"] == Array(sampleMap.utf8))
        let saved = try #require(store["MAP"])
        #expect(try MapDocument.parse(saved) == document)
        #expect(answer.object?["revision"]?.string == EditorSite.revision(saved))
        #expect(saved == EditorSite.newText(original: Array(sampleMap.utf8), edited: document))
    }

    @Test("an untouched map saves byte for byte, without writing; a map saved from nothing gets no .bak")
    func untouched() throws {
        let store = MemoryStore(map: sampleMap)
        // The page posts the document as JavaScript writes it: other spacing, `2` for `2.0`.
        let reformatted = JSONWriter(pretty: true).string(try MapDocument.parse(Array(sampleMap.utf8)))
        #expect(reformatted != sampleMap)
        let answer = try json(site(store).respond(to: post("/edit/api/save", reformatted)))
        #expect(answer.object?["saved"] == true && answer.object?["unchanged"] == true)
        #expect(store["MAP"] == Array(sampleMap.utf8) && store.writeCount == 0)

        let fresh = MemoryStore(map: nil)
        #expect(site(fresh).respond(to: post("/edit/api/save", sampleMap)).status == 200)
        #expect(fresh["MAP"] != nil && fresh["MAP.bak"] == nil)
    }

    @Test("a save against a file that changed since the page loaded it is refused with 409")
    func staleRevision() {
        let store = MemoryStore(map: sampleMap)
        let response = site(store).respond(to: post("/edit/api/save", sampleMap, query: "revision=0000000000000000"))
        #expect(response.status == 409)
        #expect(store.writeCount == 0)
    }
}

extension Result where Failure == MapProblems {
    var failureProblems: [MapProblem]? {
        if case .failure(let problems) = self { return problems.problems }
        return nil
    }
}
