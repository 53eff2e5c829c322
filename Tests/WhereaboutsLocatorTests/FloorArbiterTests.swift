import TestFixtures
import Testing
import WhereaboutsCore
import WhereaboutsSession
import WhereaboutsWire

@testable import WhereaboutsLocator

@Suite("Floor arbiter")
struct FloorArbiterTests {
    let start = 1_764_000_000.0

    func tag(_ minor: Int) throws -> TagIdentity {
        try #require(TagIdentity("ibeacon-\(site)-300-\(minor)"))
    }

    @Test("the whole site's locator owns and hears every floor and owns the site")
    func wholeSite() throws {
        let arbiter = FloorArbiter(share: nil)
        #expect(arbiter.owns(floor: 1) && arbiter.owns(floor: 999))
        #expect(arbiter.hears(floor: 42))
        #expect(arbiter.ownsSite)
    }

    @Test("retained state of a tag: contested when we publish it, a leftover on our floors, another's elsewhere")
    func verdicts() throws {
        let map = try FloorShareTests.fiveFloors()
        var lowest = FloorArbiter(share: try FloorShare(map: map, floors: [1]))
        var upper = FloorArbiter(share: try FloorShare(map: map, floors: [3]))
        #expect(lowest.verdict(on: try tag(1), floor: 3, published: true, map: map) == .contested)
        #expect(lowest.contestedTags == [try tag(1)])
        #expect(lowest.verdict(on: try tag(2), floor: 1, published: false, map: map) == .leftover)
        #expect(lowest.verdict(on: try tag(2), floor: 3, published: false, map: map) == .others(forget: true))
        // A lost tag, or a floor no map has: the site owner's to clean up.
        #expect(lowest.verdict(on: try tag(2), floor: nil, published: false, map: map) == .leftover)
        #expect(lowest.verdict(on: try tag(2), floor: 77, published: false, map: map) == .leftover)
        #expect(upper.verdict(on: try tag(2), floor: nil, published: false, map: map) == .others(forget: false))
        #expect(upper.contestedTags.isEmpty)
    }

    @Test("a contested tag is answered at most 10 times a minute, and the refusal is a warning once a minute")
    func contestsBounded() throws {
        let map = try FloorShareTests.fiveFloors()
        var arbiter = FloorArbiter(share: try FloorShare(map: map, floors: [1]))
        var answered = 0
        var warnings: [String] = []
        for second in 0..<120 {
            _ = arbiter.verdict(on: try tag(1), floor: 2, published: true, map: map)
            for case .log(let level, let line) in arbiter.answerContests(now: start + Double(second)) {
                #expect(level == .warning)
                warnings.append(line)
            }
            answered += arbiter.contestedTags.count
            arbiter.contestsAnswered()
            #expect(arbiter.contestedTags.isEmpty)
        }
        #expect(answered == 2 * FloorArbiter.repliesPerMinute)
        #expect(warnings.count == 2)
        #expect(warnings.first?.contains("another locator keeps publishing tag \(try tag(1))") == true)
    }

    @Test("a new share clears the contests under way")
    func replaceShare() throws {
        let map = try FloorShareTests.fiveFloors()
        var arbiter = FloorArbiter(share: try FloorShare(map: map, floors: [1]))
        _ = arbiter.verdict(on: try tag(1), floor: 2, published: true, map: map)
        arbiter.replaceShare(try FloorShare(map: map, floors: [1]))
        #expect(arbiter.contestedTags.isEmpty)
    }
}
