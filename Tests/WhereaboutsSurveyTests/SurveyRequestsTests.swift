import Testing
import WhereaboutsCore
import WhereaboutsSurvey

/// The editor's survey routes' bodies.
@Suite("Survey requests")
struct SurveyRequestsTests {
    static func body(_ text: String) -> [UInt8] { Array(text.utf8) }

    @Test("start, point and walk bodies are read; anything else is refused with a reason")
    func bodies() throws {
        let tag = try SurveyRequests.tag(Self.body(#"{"tag":"ibeacon-5ce1a210-0000-4000-8000-00000000a001-1-1"}"#))
        #expect(tag.description == "ibeacon-5ce1a210-0000-4000-8000-00000000a001-1-1")
        let point = try SurveyRequests.point(Self.body(#"{"floor":2,"x":4.25,"y":-0.5}"#))
        #expect(point.floor == 2 && point.x == 4.25 && point.y == -0.5)
        let walk = try SurveyRequests.walk(Self.body(#"{"floor":1,"route":[[1,1],[5,1]],"speed":0.8}"#))
        #expect(walk.route == [Point(x: 1, y: 1), Point(x: 5, y: 1)] && walk.speed == 0.8 && walk.floor == 1)
        #expect(try SurveyRequests.walk(Self.body(#"{"floor":1,"route":[[1,1],[5,1]]}"#)).speed == 1)
        for bad in ["", "[]", "{", #"{"tag":"ibeacon-nonsense"}"#, #"{"tag":7}"#] {
            #expect(throws: SurveyError.self, "\(bad)") { try SurveyRequests.tag(Self.body(bad)) }
        }
        for bad in [
            "", "[]", #"{"floor":1.5,"x":1,"y":1}"#, #"{"floor":1,"x":"1","y":1}"#, #"{"floor":-1,"x":1,"y":1}"#,
            #"{"floor":1,"x":1}"#, #"{"floor":70000,"x":1,"y":1}"#,
        ] {
            #expect(throws: SurveyError.self, "\(bad)") { try SurveyRequests.point(Self.body(bad)) }
        }
        for bad in [
            #"{"floor":1,"route":[[1]]}"#, #"{"floor":1,"route":{}}"#, #"{"floor":1,"route":[[1,1],[2,"x"]]}"#,
            #"{"route":[[1,1],[2,2]]}"#,
        ] {
            #expect(throws: SurveyError.self, "\(bad)") { try SurveyRequests.walk(Self.body(bad)) }
        }
        #expect(throws: SurveyError.self) {
            try SurveyRequests.point([UInt8](repeating: 32, count: SurveyRequests.maximumBytes + 1))
        }
    }
}
