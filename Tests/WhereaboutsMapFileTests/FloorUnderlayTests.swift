import Testing
import WhereaboutsCore
import WhereaboutsJSON
import WhereaboutsMapFile

@Suite("Floor underlays")
struct FloorUnderlayTests {
    static func map(underlay: String) -> String {
        """
        {"site": {"uuid": "f7826da6-4fa2-4e98-8024-bc5b71e0893e", "name": "Test"},
         "floors": [{"major": 3, "name": "Ground", "outline": [[0, 0], [30, 0], [30, 20], [0, 20]],
                     "underlay": \(underlay)}],
         "agents": []}
        """
    }

    func problems(_ underlay: String) -> [String] {
        switch mapFromJSON(Self.map(underlay: underlay)) {
        case .success: []
        case .failure(let problems): problems.problems.map(\.description)
        }
    }

    @Test("a floor's underlay loads and is read back by major, with rotation defaulting to 0")
    func loads() throws {
        let text = Self.map(underlay: #"{"file": "plan-1.png", "origin": [-1.5, 22], "scale": 0.05}"#)
        #expect(problems(#"{"file": "plan-1.png", "origin": [-1.5, 22], "scale": 0.05}"#).isEmpty)
        let underlays = FloorUnderlay.underlays(in: try document(text))
        #expect(underlays == [3: FloorUnderlay(file: "plan-1.png", origin: Point(x: -1.5, y: 22), scale: 0.05)])
    }

    @Test("every problem of a bad underlay is reported with its path, all at once")
    func problemsWithPaths() throws {
        let found = problems(#"{"file": "../plan.png", "origin": [1], "scale": 0, "rotation": 400, "opacity": 1}"#)
        let paths = found.map { $0.prefix(while: { $0 != ":" }) }
        #expect(
            Set(paths) == [
                "$.floors[0].underlay.opacity", "$.floors[0].underlay.file", "$.floors[0].underlay.origin",
                "$.floors[0].underlay.scale", "$.floors[0].underlay.rotation",
            ])
        #expect(FloorUnderlay.underlays(in: try document(Self.map(underlay: #"{"file": "a.png"}"#))).isEmpty)
    }

    @Test("underlay file names name a picture beside the map and nothing else")
    func fileNames() {
        for good in ["plan.png", "Ground_floor-2.JPG", "a.jpeg", "x.svg", String(repeating: "a", count: 124) + ".png"] {
            #expect(FloorUnderlay.isSafeFileName(good), "\(good)")
        }
        for bad in [
            "", "plan", "plan.gif", "map.json", ".plan.png", "a/b.png", "..png", "a..b.png", "/etc/x.png",
            "plan png.png", "plan\\x.png", "plän.png", String(repeating: "a", count: 125) + ".png", "plan.png\u{0}",
        ] {
            #expect(!FloorUnderlay.isSafeFileName(bad), "\(bad)")
        }
    }
}
