import Testing
import WhereaboutsAdvertising
import WhereaboutsAgent
import WhereaboutsCore
import WhereaboutsWire

@Suite("The agent's own beacon")
struct AgentBeaconTests {
    @Test("the minor from an id is FNV-1a folded to 16 bits, stable across runs and versions")
    func minorStability() throws {
        let known: [(String, UInt16)] = [("hall-1", 48955), ("hall-2", 47074), ("a", 52512), ("kitchen", 25801)]
        for (text, minor) in known {
            let agent = try #require(AgentID(text))
            #expect(AgentBeacon.minor(forAgentID: agent.rawValue) == minor, "\(text)")
        }
    }

    @Test("the default advertisement is the site UUID, the floor as major, the id's minor")
    func defaultAdvertisement() throws {
        let site = try #require(siteUUID)
        let agent = try #require(AgentID("hall-1"))
        let advertisement = AgentAdvertisement.advertisement(site: site, floor: 2, agent: agent)
        #expect(advertisement.tag == .iBeacon(uuid: site, major: 2, minor: 48955))
        #expect(advertisement.measuredPower == -59)
    }

    @Test("--advertise text parses with and without power, and refuses the rest")
    func parsing() throws {
        let parsed = try #require(AgentAdvertisement.parse("e2c56db5-dffb-48d2-b060-d0f5a71096e0:3:77:-65"))
        #expect(parsed.major == 3)
        #expect(parsed.minor == 77)
        #expect(parsed.measuredPower == -65)
        #expect(AgentAdvertisement.parse("e2c56db5-dffb-48d2-b060-d0f5a71096e0:3:77")?.measuredPower == -59)
        for bad in [
            "e2c56db5-dffb-48d2-b060-d0f5a71096e0:3", "nope:1:2", "e2c56db5-dffb-48d2-b060-d0f5a71096e0:1:70000",
            "e2c56db5-dffb-48d2-b060-d0f5a71096e0:1:2:99",
        ] {
            #expect(AgentAdvertisement.parse(bad) == nil, "\(bad)")
        }
    }
}

@Suite("Scan watchdog")
struct ScanWatchdogTests {
    @Test("silence after steady reports asks for a restart, counted, with a growing timeout")
    func restarts() {
        var watchdog = ScanWatchdog(configuration: .init(timeout: 30, maximumTimeout: 100, minimumReports: 10), now: 0)
        watchdog.heard(20, now: 5)
        var decisions: [Bool] = []
        for now in [34.0, 35, 64, 90, 95] { decisions.append(watchdog.shouldRestart(now: now)) }
        #expect(decisions == [false, true, false, false, true])
        #expect(watchdog.restarts == 2)
        // Reports resume: back to the base timeout.
        watchdog.heard(10, now: 100)
        let afterResume = watchdog.shouldRestart(now: 130)
        #expect(afterResume)
        #expect(watchdog.restarts == 3)
    }

    @Test("a quiet room that never armed the watchdog never restarts the scan")
    func quietRoom() {
        var watchdog = ScanWatchdog(now: 0)
        watchdog.heard(3, now: 1)
        let restart = watchdog.shouldRestart(now: 10_000)
        #expect(!restart)
        #expect(watchdog.restarts == 0)
    }
}

@Suite("Replay clock")
struct ReplayClockTests {
    @Test("paced replay stamps events with the wall clock of their due time; fast ends the capture now")
    func stamps() {
        let paced = ReplayClock(
            firstEventTime: 1000, lastEventTime: 1967, startWallTime: 5000, startMonotonic: 10, speed: .factor(2),
            keepsTimes: false)
        #expect(paced.due(1004) == 12)
        #expect(paced.stamp(1004) == 5002)
        #expect(paced.replayTime(atMonotonic: 11) == 5001)
        let fast = ReplayClock(
            firstEventTime: 1000.25, lastEventTime: 1967.5, startWallTime: 5000.25, startMonotonic: 10, speed: .fast,
            keepsTimes: false)
        #expect(fast.due(1004) == nil)
        // Shifted by 3032 s: the last event at 4999.5, the first at 4032.25.
        #expect(fast.stamp(1967.5) == 4999.5)
        #expect(fast.stamp(1000.25) == 4032.25)
        let kept = ReplayClock(
            firstEventTime: 1000, lastEventTime: 1967, startWallTime: 5000, startMonotonic: 10, speed: .factor(1),
            keepsTimes: true)
        #expect(kept.stamp(1004) == 1004)
        #expect(kept.due(1004) == 14)
    }

    @Test(
        "fast replay never stamps a time ahead of its start, however long the capture",
        arguments: [0.0, 0.4, 1, 967.3, 2_592_000] as [Double])
    func fastNeverAhead(length: Double) {
        let start = 1_796_055_217.75
        let clock = ReplayClock(
            firstEventTime: 1_700_000_000.5, lastEventTime: 1_700_000_000.5 + length, startWallTime: start,
            startMonotonic: 0, speed: .fast, keepsTimes: false)
        for step in 0...100 {
            let stamp = clock.stamp(1_700_000_000.5 + length * Double(step) / 100)
            #expect(stamp <= start)
        }
        #expect(clock.stamp(1_700_000_000.5 + length) > start - 1)
        #expect(clock.fastOffset == clock.fastOffset.rounded())
    }

    @Test("replay speeds parse as fast or a positive factor")
    func speeds() {
        #expect(ReplaySpeed("fast") == .fast)
        #expect(ReplaySpeed("1") == .factor(1))
        #expect(ReplaySpeed("0.5") == .factor(0.5))
        for bad in ["0", "-1", "slow", "nan", "inf", "5000"] { #expect(ReplaySpeed(bad) == nil, "\(bad)") }
    }
}
