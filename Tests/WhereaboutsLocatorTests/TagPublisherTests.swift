import Testing
import WhereaboutsSession
import WhereaboutsWire

@testable import WhereaboutsCore
@testable import WhereaboutsLocator

@Suite("Tag publisher")
struct TagPublisherTests {
    let start = 1_764_000_000.0

    func publisher(_ map: FloorMap, heartbeat: Double = 30, move: Double = 0.1) -> TagPublisher {
        TagPublisher(
            map: map, share: nil, topics: Topics(site: map.site.uuid), positionHeartbeat: heartbeat,
            positionMinimumMove: move)
    }

    func estimate(_ tag: TagIdentity, x: Double, zone: ZoneKey? = nil, time: Double) -> TagEstimate {
        TagEstimate(
            tag: tag, name: nil, floor: 1, position: Point(x: x, y: 4), accuracy: 1, zone: zone, ranges: [],
            quality: .converged, time: time)
    }

    func published(_ actions: [ServiceAction<LocatorEffect>]) -> [Publication] {
        actions.compactMap {
            guard case .publish(let publication) = $0 else { return nil }
            return publication
        }
    }

    @Test("a position goes out first, then on a move, a new zone or the heartbeat; never for a tag standing still")
    func positionPolicy() throws {
        let map = try PipelineHarness().map
        var tags = publisher(map, heartbeat: 30, move: 0.5)
        let tag = try alice()
        let lobby = ZoneKey(floor: 1, minor: 1)
        var times: [Double] = []
        for (second, x, zone) in [
            (0.0, 5.0, lobby), (1, 5.1, lobby), (2, 5.2, lobby), (3, 5.6, lobby), (4, 5.6, nil), (5, 5.6, nil),
            (34, 5.6, nil),
        ] as [(Double, Double, ZoneKey?)] {
            let estimates = [estimate(tag, x: x, zone: zone, time: start + second)]
            if let publication = tags.position(of: estimates, at: 0, now: start + second) {
                #expect(publication.retain && publication.qos == .atMostOnce && publication.priority == .background)
                times.append(second)
            }
        }
        #expect(times == [0, 3, 4, 34])
    }

    @Test("a lost tag's position is cleared once; a tag handed over is published afresh when it comes back")
    func lostAndHandedOver() throws {
        let map = try PipelineHarness().map
        var tags = publisher(map)
        let tag = try alice()
        _ = tags.position(of: [estimate(tag, x: 5, time: start)], at: 0, now: start)
        let cleared = published(tags.clearPositions(of: [tag]))
        #expect(cleared.map(\.payload) == [""])
        #expect(tags.clearPositions(of: [tag]).isEmpty)
        _ = tags.position(of: [estimate(tag, x: 5, time: start)], at: 0, now: start + 1)
        tags.positionHandedOver(tag)
        #expect(tags.position(of: [estimate(tag, x: 5, time: start)], at: 0, now: start + 2) != nil)
    }

    @Test("an earlier run's position is cleared after the tag timeout; a named tag's summary is said unknown")
    func leftovers() throws {
        let map = try PipelineHarness().map
        var tags = publisher(map)
        var arbiter = FloorArbiter(share: nil)
        var engine = LocatorEngine(map: map)
        let tag = try alice()
        tags.retainedPosition(tag, payload: Array("{}".utf8), arbiter: &arbiter, engine: &engine, now: start)
        #expect(tags.clearStale(now: start + map.model.tagTimeout - 1).isEmpty)
        let cleared = published(tags.clearStale(now: start + map.model.tagTimeout))
        #expect(cleared.map(\.topic.name).sorted() == cleared.map(\.topic.name))
        #expect(cleared.contains { $0.topic.name.hasSuffix("/position") && $0.payload.isEmpty })
        let summary = try #require(cleared.first { $0.topic.name.hasSuffix("/zone") })
        #expect(try TagZone(payload: summary.payload).state == .unknown, "no agent is online: not known to be gone")
        #expect(tags.clearStale(now: start + 2 * map.model.tagTimeout).isEmpty, "said once")
    }

    @Test("a tag heard again in time is not cleared; every position and summary is said again on a reconnect")
    func heardAgain() throws {
        let map = try PipelineHarness().map
        var tags = publisher(map)
        var arbiter = FloorArbiter(share: nil)
        var engine = LocatorEngine(map: map)
        let tag = try alice()
        tags.retainedPosition(tag, payload: Array("{}".utf8), arbiter: &arbiter, engine: &engine, now: start)
        _ = tags.position(of: [estimate(tag, x: 5, time: start + 1)], at: 0, now: start + 1)
        let stale = published(tags.clearStale(now: start + map.model.tagTimeout))
        #expect(!stale.contains { $0.topic.name.hasSuffix("/position") }, "its position stands")
        let again = published(tags.connected())
        #expect(again.first?.topic == Topics(site: map.site.uuid).position(tag: tag))
        #expect(again.first?.retain == true)
        #expect(again.count == 3, "its position, and the summary and location the stale sweep said")
    }
}
