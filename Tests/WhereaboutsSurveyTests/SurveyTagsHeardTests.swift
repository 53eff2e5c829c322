import Testing
import WhereaboutsCore
import WhereaboutsJSON
import WhereaboutsSurvey
import WhereaboutsWire

@Suite("Tags heard: the list the survey tag is picked from")
struct SurveyTagsHeardTests {
    static let site = "5ce1a210-0000-4000-8000-00000000a001"

    static func tag(_ minor: Int) -> String { "ibeacon-\(site)-1-\(minor)" }

    /// A batch as an agent sends it: one reading per (tag, RSSI), all at time `t`.
    static func batch(agent: String, seq: Int, t: Double, _ readings: [(String, Double)]) -> [UInt8] {
        let items = readings.map { #"{"tag":"\#($0.0)","t":\#(t),"rssi":\#($0.1),"n":3}"# }
        return Array(
            (#"{"v":1,"agent":"\#(agent)","epoch":1000,"seq":\#(seq),"sent":\#(t),"readings":["#
                + items.joined(separator: ",") + "]}").utf8)
    }

    static func topic(_ agent: String) throws -> String {
        Topics(site: try #require(BeaconUUID(site))).readings(agent: try #require(AgentID(agent))).name
    }

    @Test("tags heard lately are listed loudest first, with their agents; stale ones and bad batches are left out")
    func listed() throws {
        var heard = SurveyTagsHeard(site: try #require(BeaconUUID(Self.site)))
        heard.take(
            topic: try Self.topic("a-1"), payload: Self.batch(agent: "a-1", seq: 0, t: 100, [(Self.tag(1), -80)]),
            now: 101)
        heard.take(
            topic: try Self.topic("a-1"),
            payload: Self.batch(agent: "a-1", seq: 1, t: 160, [(Self.tag(2), -70), (Self.tag(3), -55)]), now: 161)
        heard.take(
            topic: try Self.topic("a-2"), payload: Self.batch(agent: "a-2", seq: 0, t: 161, [(Self.tag(2), -50)]),
            now: 162)
        // Not a batch, another agent's batch under a topic not its own, another site's topic: ignored.
        heard.take(topic: try Self.topic("a-1"), payload: Array("{".utf8), now: 162)
        heard.take(
            topic: try Self.topic("a-3"), payload: Self.batch(agent: "a-1", seq: 2, t: 161, [(Self.tag(4), -40)]),
            now: 162)
        heard.take(
            topic: "whereabouts/v1/5ce1a210-0000-4000-8000-00000000ffff/agents/a-1/readings",
            payload: Self.batch(agent: "a-1", seq: 3, t: 161, [(Self.tag(5), -40)]), now: 162)

        let recent = heard.recent(now: 170, within: 60)
        #expect(recent.map(\.tag.description) == [Self.tag(2), Self.tag(3)])
        #expect(recent.first?.agents.count == 2 && recent.first?.readings == 2)
        let listed = try #require(heard.json(now: 170).array?.first?.object)
        #expect(listed["tag"]?.string == Self.tag(2) && listed["agents"] == 2 && listed["rssi"] == -50)
        #expect(listed["age"] == 9)
        #expect(heard.recent(now: 170, within: 120).count == 3)
    }

    @Test("the list is bounded: past its capacity the least recently heard tags are forgotten")
    func bounded() throws {
        var heard = SurveyTagsHeard(site: try #require(BeaconUUID(Self.site)), capacity: 3)
        for minor in 1...6 {
            heard.take(
                topic: try Self.topic("a-1"),
                payload: Self.batch(agent: "a-1", seq: minor, t: Double(minor), [(Self.tag(minor), -60)]), now: 7)
        }
        #expect(Set(heard.recent(now: 7, within: 100).map(\.tag.description)) == Set([4, 5, 6].map(Self.tag)))
    }
}
