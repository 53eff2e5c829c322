import Synchronization
import WhereaboutsEditor
import WhereaboutsJSON

/// An editor store in memory: the map under "MAP", its backup under "MAP.bak", pictures under their names.
final class MemoryStore: EditorStore {
    let files: Mutex<[String: [UInt8]]>
    let writes = Mutex(0)

    init(map: String?) {
        files = Mutex(map.map { ["MAP": Array($0.utf8)] } ?? [:])
    }

    subscript(name: String) -> [UInt8]? {
        get { files.withLock { $0[name] } }
        set { files.withLock { $0[name] = newValue } }
    }

    var writeCount: Int { writes.withLock { $0 } }

    var snapshot: [String: [UInt8]] { files.withLock { $0 } }

    func readMap() throws(EditorStoreError) -> [UInt8]? { self["MAP"] }

    func writeMap(_ text: [UInt8], backup: [UInt8]?) throws(EditorStoreError) {
        files.withLock {
            if let backup { $0["MAP.bak"] = backup }
            $0["MAP"] = text
        }
        writes.withLock { $0 += 1 }
    }

    func readUnderlay(named name: String) throws(EditorStoreError) -> [UInt8]? { self[name] }

    func writeUnderlay(named name: String, bytes: [UInt8]) throws(EditorStoreError) {
        files.withLock { $0[name] = bytes }
        writes.withLock { $0 += 1 }
    }
}

/// A small valid map, written with the spacing and number spelling a person might use (`2.0`, members on a line).
let sampleMap = """
    {
      "site": {"uuid": "f7826da6-4fa2-4e98-8024-bc5b71e0893e", "name": "Test site"},
      "model": {"path_loss_exponent": 2.0},
      "floors": [
        {"major": 1, "name": "Ground", "height": 0, "outline": [[0,0],[20,0],[20,10],[0,10]],
         "underlay": {"file": "plan.png", "origin": [0, 10], "scale": 0.05}},
        {"major": 2, "name": "Upper", "height": 3.5, "outline": [[0,0],[20,0],[20,10],[0,10]]}
      ],
      "zones": [
        {"floor": 1, "minor": 1, "name": "West", "polygon": [[0,0],[10,0],[10,10],[0,10]]},
        {"floor": 1, "minor": 2, "name": "East", "polygon": [[10,0],[20,0],[20,10],[10,10]]}
      ],
      "agents": [{"id": "a-1", "floor": 1, "x": 1, "y": 1, "z": 2.4}]
    }

    """

let testToken = "0123456789abcdef0123456789abcdef"

func site(_ store: MemoryStore, loopback: Bool = true) -> EditorSite {
    EditorSite(
        store: store, access: EditorAccess(token: testToken, listenerIsLoopback: loopback),
        newMapText: EditorSite.newMapText(siteUUID: "f7826da6-4fa2-4e98-8024-bc5b71e0893e", siteName: "New site"))
}

func post(_ path: String, _ body: String, query: String? = nil, loopbackPeer: Bool = true) -> EditorRequest {
    EditorRequest(
        method: "POST", path: path, query: query, body: Array(body.utf8), host: "127.0.0.1:8080",
        origin: "http://127.0.0.1:8080", isLoopbackPeer: loopbackPeer)
}

func put(_ name: String, _ body: [UInt8], floor: String = "1") -> EditorRequest {
    EditorRequest(
        method: "PUT", path: "/edit/api/underlay", query: "floor=\(floor)&name=\(name)", body: body,
        host: "127.0.0.1:8080", isLoopbackPeer: true)
}

func get(_ path: String, query: String? = nil) -> EditorRequest {
    EditorRequest(method: "GET", path: path, query: query, host: "127.0.0.1:8080", isLoopbackPeer: true)
}

/// A response's body as JSON.
func json(_ response: EditorResponse) throws -> JSONValue {
    try JSONParser().parse(response.body)
}

let pngBytes: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A, 0, 0, 0, 13] + Array("IHDR".utf8)
let jpegBytes: [UInt8] = [0xFF, 0xD8, 0xFF, 0xE0, 0, 16] + Array("JFIF".utf8)
let svgBytes = Array(
    """
    <?xml version="1.0" encoding="UTF-8"?>
    <svg xmlns="http://www.w3.org/2000/svg" width="10" height="10"><line x1="0" y1="0" x2="10" y2="10"/></svg>

    """.utf8)
