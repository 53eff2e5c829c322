import Foundation
import Testing
import WhereaboutsCore
import WhereaboutsEditor
import WhereaboutsJSON

@Suite("Editor site: who may write, and the floor-plan pictures")
struct EditorWriteTests {
    static func save(
        token: String? = nil, query: String? = nil, host: String? = "127.0.0.1:8080",
        origin: String? = nil, loopbackPeer: Bool = true
    ) -> EditorRequest {
        EditorRequest(
            method: "POST", path: "/edit/api/save", query: query, body: Array(sampleMap.utf8), token: token, host: host,
            origin: origin, isLoopbackPeer: loopbackPeer)
    }

    @Test("on a listener that is not loopback, a write without the right token is refused with 403")
    func tokenRequired() throws {
        let store = MemoryStore(map: sampleMap)
        let editor = site(store, loopback: false)
        for request in [
            Self.save(), Self.save(loopbackPeer: false), Self.save(token: "wrong"),
            Self.save(token: String(testToken.dropLast())), Self.save(query: "token=" + testToken.uppercased()),
            put("plan.png", pngBytes),
        ] {
            let response = editor.respond(to: request)
            #expect(response.status == 403)
            #expect(try json(response).object?["error"]?.string?.contains("token") == true)
        }
        #expect(store.writeCount == 0)
        #expect(try json(editor.respond(to: get("/edit/api/map"))).object?["writable"] == false)
        #expect(editor.respond(to: Self.save(token: testToken, loopbackPeer: false)).status == 200)
        #expect(
            editor.respond(to: Self.save(query: "revision=x&token=" + testToken, loopbackPeer: false)).status == 409)
        var upload = put("plan.png", pngBytes)
        upload.isLoopbackPeer = false
        upload.query = (upload.query ?? "") + "&token=" + testToken
        #expect(editor.respond(to: upload).status == 200)
        #expect(
            try json(editor.respond(to: get("/edit/api/map", query: "token=" + testToken))).object?["writable"] == true)
    }

    @Test("on a loopback listener, only the editor's own page on this machine writes without the token")
    func loopbackRule() {
        let editor = site(MemoryStore(map: sampleMap), loopback: true)
        let allowed = [
            Self.save(), Self.save(host: "localhost:8080", origin: "http://localhost:8080"), Self.save(host: nil),
            Self.save(host: "127.0.0.2:80"), Self.save(host: "[::1]:8080"),
        ]
        for request in allowed { #expect(editor.respond(to: request).status == 200, "\(request.host ?? "")") }
        let refused = [
            Self.save(loopbackPeer: false),  // a peer elsewhere (the listener is loopback only by configuration)
            Self.save(host: "evil.example:8080"),  // DNS rebinding: another name for 127.0.0.1
            Self.save(origin: "http://evil.example"),  // another site's page in the user's browser
            Self.save(origin: "null"), Self.save(host: "127.0.0.1.evil.example"), Self.save(host: "127.0.0.1:x"),
        ]
        for request in refused { #expect(editor.respond(to: request).status == 403) }
        #expect(editor.respond(to: Self.save(token: testToken, host: "evil.example:8080")).status == 200)
    }

    @Test("pictures are told by their bytes and served back with their type; anything else is refused with 415")
    func magicBytes() throws {
        let store = MemoryStore(map: sampleMap)
        let editor = site(store)
        for (name, bytes, type) in [
            ("plan.png", pngBytes, "image/png"), ("photo.jpg", jpegBytes, "image/jpeg"),
            ("lines.svg", svgBytes, "image/svg+xml"),
            (
                "bom.svg", [0xEF, 0xBB, 0xBF] + Array("\n <svg xmlns=\"http://www.w3.org/2000/svg\"/>".utf8),
                "image/svg+xml"
            ),
        ] {
            let stored = editor.respond(to: put(name, bytes))
            #expect(stored.status == 200)
            #expect(
                try json(stored) == [
                    "file": .string(name), "url": .string("/edit/underlay/" + name),
                    "type": .string(type), "bytes": .number(Double(bytes.count)),
                ])
            let served = editor.respond(to: get("/edit/underlay/" + name))
            #expect(served.status == 200 && served.body == bytes && served.header("Content-Type") == type)
            #expect(served.header("Content-Security-Policy")?.contains("sandbox") == true)
        }
        let refused: [[UInt8]] = [
            Array("GIF89a".utf8), Array("<html><script>alert(1)</script></html>".utf8), [],
            Array("<svg".utf8) + [0xFF, 0xFE], Array("<?xml version=\"1.0\"?><html/>".utf8), [0x89, 0x50, 0x4E],
        ]
        for bytes in refused { #expect(editor.respond(to: put("bad.png", bytes)).status == 415) }
        #expect(store["bad.png"] == nil)
    }

    @Test("a picture's name is made safe; a name that is a path is refused and nothing is stored")
    func names() throws {
        let store = MemoryStore(map: sampleMap)
        let editor = site(store)
        for (requested, stored) in [
            ("My%20Plan%20(1).PNG", "My-Plan--1-.PNG"), ("plan.gif", "plan.gif.png"), (".hidden.png", "hidden.png"),
            ("%C3%A9tage.png", "-tage.png"), ("map.json", "map.json.png"), ("plan", "plan.png"),
        ] {
            let response = editor.respond(to: put(requested, pngBytes))
            #expect(try json(response).object?["file"]?.string == stored, "\(requested)")
            #expect(store[stored] == pngBytes)
        }
        let before = store.snapshot
        for requested in ["../plan.png", "a/b.png", "%2Fetc%2Fplan.png", "..%5Cplan.png", "x%00.png", "..", ""] {
            #expect(editor.respond(to: put(requested, pngBytes)).status == 400, "\(requested)")
        }
        #expect(editor.respond(to: put("plan.png", pngBytes, floor: "ground")).status == 400)
        #expect(store.snapshot == before)
        // Reading: only plain names of pictures; never the map, its backup, or a path.
        store["MAP.bak"] = Array(sampleMap.utf8)
        for path in [
            "/edit/underlay/../MAP", "/edit/underlay/MAP.bak", "/edit/underlay/%2e%2e/x.png", "/edit/underlay/",
        ] {
            #expect(editor.respond(to: get(path)).status == 404, "\(path)")
        }
    }

    @Test("a picture over 20 MB is refused with 413 before anything is stored")
    func oversized() {
        let store = MemoryStore(map: sampleMap)
        let big = pngBytes + [UInt8](repeating: 0, count: UnderlayImage.maximumBytes + 1 - pngBytes.count)
        #expect(site(store).respond(to: put("big.png", big)).status == 413)
        #expect(store["big.png"] == nil)
        let largest = Array(big.dropLast())
        #expect(site(store).respond(to: put("big.png", largest)).status == 200)
    }
}
