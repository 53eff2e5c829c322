import Testing
import WhereaboutsCore
import WhereaboutsWire

@Suite("Output topics, as a dashboard reads them")
struct OutputTopicTests {
    let topics = WireFixtures.topics
    let prefix = "whereabouts/v1/\(WireFixtures.siteText)"

    @Test("every topic the locator publishes parses back to what built it")
    func roundTrip() {
        #expect(topics.parseOutput(topics.occupancy(floor: 2, zone: 65535).name) == .occupancy(floor: 2, zone: 65535))
        #expect(topics.parseOutput(topics.position(tag: WireFixtures.tag).name) == .position(WireFixtures.tag))
        #expect(topics.parseOutput(topics.events.name) == .events)
        #expect(topics.parseOutput(topics.locatorStatus.name) == .locatorStatus)
        #expect(topics.parseOutput(topics.locatorMetrics.name) == .locatorMetrics)
        #expect(
            topics.parseOutput(topics.agentStatus(agent: WireFixtures.agent).name) == .agentStatus(WireFixtures.agent))
        #expect(topics.allOccupancy.filter == "\(prefix)/floors/+/zones/+/occupancy")
        #expect(topics.allPositions.filter == "\(prefix)/tags/+/position")
        #expect(topics.dashboardFilters.count == 6)
    }

    @Test(
        "anything else is nil: other sites, extra or missing levels, non-canonical numbers, bad identifiers",
        arguments: [
            "whereabouts/v1/00000000-0000-0000-0000-000000000000/events", "whereabouts/v2/SITE/events",
            "SITE/events", "whereabouts/v1/SITE/events/x", "whereabouts/v1/SITE/floors/01/zones/1/occupancy",
            "whereabouts/v1/SITE/floors/1/zones/65536/occupancy", "whereabouts/v1/SITE/floors/+/zones/1/occupancy",
            "whereabouts/v1/SITE/floors/1/zones/-1/occupancy", "whereabouts/v1/SITE/tags/+/position",
            "whereabouts/v1/SITE/tags//position", "whereabouts/v1/SITE/agents/a+b/status",
            "whereabouts/v1/SITE/agents/hall-1/readings", "whereabouts/v1/SITE/locator/other", "whereabouts/v1/SITE",
            "whereabouts/v1/SITE/calibration", "",
        ])
    func rejects(topic: String) {
        #expect(topics.parseOutput(topic.replacing("SITE", with: WireFixtures.siteText)) == nil)
    }
}
