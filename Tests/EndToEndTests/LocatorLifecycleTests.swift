import BrokerFixture
import Foundation
import Testing
import WhereaboutsCore
import WhereaboutsMQTT
import WhereaboutsWire

/// The locator's life as a daemon against a real mosquitto: SIGHUP, a restart with retained state left behind, a
/// recording a crash tore.
@Suite("Locator lifecycle", .serialized)
struct LocatorLifecycleTests {

    /// The corridor map as text, with `tag_timeout` set and, optionally, the East room taken out or agents added.
    static func corridorMap(
        tagTimeout: Double, withoutEastRoom: Bool = false, addingAgents added: [[String: Any]] = []
    ) throws -> String {
        let data = try #require(FileManager.default.contents(atPath: try Fixtures.path("corridor.json")))
        var object = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        object["model"] = ["tag_timeout": tagTimeout]
        if withoutEastRoom, let zones = object["zones"] as? [[String: Any]] {
            object["zones"] = zones.filter { ($0["name"] as? String) != "East room" }
        }
        if !added.isEmpty, let agents = object["agents"] as? [[String: Any]] { object["agents"] = agents + added }
        let text = try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])
        return String(decoding: text, as: UTF8.self)
    }

    @Test("SIGHUP: a bad map is refused and the old one kept; a good one clears what it removed; the recording reopens")
    func hangup() async throws {
        let tests = try LocatorEndToEndTests()
        try await tests.withSite { broker, collector, agents, scratch in
            let mapPath = scratch.file("map.json")
            try Self.corridorMap(tagTimeout: 30).write(toFile: mapPath, atomically: true, encoding: .utf8)
            let record = scratch.file("readings.jsonl")
            let locator = try LocatorProcess(
                map: mapPath, broker: broker, scratch: scratch, extra: ["--warm-up", "1", "--record", record])
            let topics = tests.topics
            try await waitFor("the locator to come online") { collector.last(topics.locatorStatus.name) == "online" }
            // 4 s of rounds: the grid filter estimates a tag once a second, and its first zone takes a dwell of a
            // second between two estimates that readings still come for.
            for _ in 0..<16 {
                _ = try await tests.sendRound(agents, position: Point(x: 35, y: 5), time: now())
                try await Task.sleep(for: .milliseconds(250))
            }
            let east = topics.occupancy(floor: 1, zone: 3).name
            try await waitFor("the East room to hold the tag") {
                collector.last(east).flatMap { try? ZoneOccupancy(payload: $0) }?.count == 1
            }
            // A broken map: refused, logged with its problem, the locator keeps running on the old one.
            try #"{"site": {"uuid": "not a uuid"}}"#.write(toFile: mapPath, atomically: true, encoding: .utf8)
            locator.process.send(SIGHUP)
            try await waitFor("the refusal in the log") { locator.log.contains("keeping the settings in force") }
            #expect(locator.log.contains("site.uuid"), "the problem names its field")
            #expect(locator.process.exitCode == nil, "SIGHUP must not kill the locator")
            // logrotate moves the recording away; a good map without the East room comes with the SIGHUP.
            try FileManager.default.moveItem(atPath: record, toPath: record + ".1")
            try Self.corridorMap(tagTimeout: 30, withoutEastRoom: true).write(
                toFile: mapPath, atomically: true, encoding: .utf8)
            locator.process.send(SIGHUP)
            try await waitFor("the East room's occupancy to be cleared") { collector.last(east) == "" }
            try await waitFor("the reload in the log") { locator.log.contains("SIGHUP: reloaded") }
            _ = try await tests.sendRound(agents, position: Point(x: 5, y: 5), time: now())
            try await waitFor("a new recording file") { FileManager.default.fileExists(atPath: record) }
            try await waitFor("readings in the new recording") {
                ((try? String(contentsOfFile: record, encoding: .utf8)) ?? "").contains("\"agent\"")
            }
            #expect(await locator.stop() == 0)
        }
    }

    @Test("SIGHUP on a locator split by floor subscribes to an agent the new map adds")
    func hangupSubscribesNewAgents() async throws {
        let tests = try LocatorEndToEndTests()
        try await tests.withSite { broker, collector, _, scratch in
            let mapPath = scratch.file("map.json")
            try Self.corridorMap(tagTimeout: 30).write(toFile: mapPath, atomically: true, encoding: .utf8)
            // Split by floor, it subscribes to each agent of its floors by name, not to every agent's readings.
            let locator = try LocatorProcess(
                map: mapPath, broker: broker, scratch: scratch,
                extra: ["--floors", "1", "--warm-up", "1", "--metrics-interval", "0.5"])
            let topics = tests.topics
            try await waitFor("the locator to come online") { collector.last(topics.locatorStatus.name) == "online" }
            let added = try TestAgent("east-2", site: tests.map.site.uuid, broker: broker)
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask { await added.run() }
                try await added.waitUntilConnected()
                // The new map adds the agent at the east end; nothing else is sent, so every reading the locator
                // accepts from now on is the new agent's.
                try Self.corridorMap(
                    tagTimeout: 30, addingAgents: [["id": "east-2", "floor": 1, "x": 38, "y": 5, "z": 2.4]]
                ).write(toFile: mapPath, atomically: true, encoding: .utf8)
                locator.process.send(SIGHUP)
                try await waitFor("the reload in the log") { locator.log.contains("SIGHUP: reloaded") }
                let accepted = {
                    collector.last(topics.locatorMetrics.name).flatMap { try? LocatorMetrics(payload: $0) }?
                        .readingsAccepted ?? 0
                }
                #expect(accepted() == 0)
                // A batch every 250 ms until the metrics count one (they are published every 0.5 s), for 20 s.
                var patience = Patience(.seconds(20))
                while accepted() == 0, !patience.isExhausted() {
                    let time = now()
                    try await added.send(
                        [ReadingBatch.Reading(tag: tests.tag, time: time, rssi: -62, count: 5, variance: 4)],
                        sent: time)
                    try await Task.sleep(for: .milliseconds(250))
                }
                #expect(accepted() > 0, "no reading of the agent the reload added was accepted")
                added.client.disconnect()
                group.cancelAll()
            }
            #expect(await locator.stop() == 0)
        }
    }

    @Test("retained positions an earlier run left are cleared after the tag timeout unless their tag is heard")
    func ghostPositions() async throws {
        let tests = try LocatorEndToEndTests()
        try await tests.withSite { broker, collector, agents, scratch in
            let mapPath = scratch.file("map.json")
            try Self.corridorMap(tagTimeout: 3).write(toFile: mapPath, atomically: true, encoding: .utf8)
            let topics = tests.topics
            // Positions an earlier run left retained: 15 silent tags, and Robin, who is still around.
            let silent = try (1...15).map {
                try #require(TagIdentity("ibeacon-0a1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d-7-\($0 + 1)"))
            }
            for tag in silent + [tests.tag] {
                let position = TagPosition(
                    tag: tag, name: nil, x: 5, y: 5, floor: 1, zone: 1, zoneName: "West room", accuracy: 2,
                    nearest: nil, updated: now() - 100)
                _ = try collector.client.publish(
                    topic: topics.position(tag: tag).name, payload: Array(position.payload.utf8), qos: .atLeastOnce,
                    retain: true)
            }
            try await waitFor("the old positions") {
                silent.allSatisfy { collector.last(topics.position(tag: $0).name) != nil }
            }
            let locator = try LocatorProcess(map: mapPath, broker: broker, scratch: scratch, extra: ["--warm-up", "1"])
            try await waitFor("the locator to come online") { collector.last(topics.locatorStatus.name) == "online" }
            // Robin is heard throughout, until the silent tags are cleared: had the rounds stopped first, a slow
            // clearing would have outlasted his own 3 s timeout and cleared him too.
            let started = now()
            var cleared = false
            while now() - started < 16 {
                _ = try await tests.sendRound(agents, position: Point(x: 20, y: 5), time: now())
                try await Task.sleep(for: .milliseconds(250))
                cleared = silent.allSatisfy { collector.last(topics.position(tag: $0).name) == "" }
                if cleared, now() - started >= 6 { break }
            }
            #expect(cleared, "the silent tags' positions are cleared within 16 s of the locator coming online")
            let robin = try TagPosition(payload: try #require(collector.last(topics.position(tag: tests.tag).name)))
            #expect(robin.zone == 2, "Robin, heard again, keeps a fresh position")
            #expect(await locator.stop() == 0)
        }
    }

    @Test("discovery configs an earlier run left for a zone and a tag the map no longer has are removed at start")
    func leftoverDiscovery() async throws {
        let tests = try LocatorEndToEndTests()
        try await tests.withSite { broker, _, _, scratch in
            let homeAssistant = try Collector(broker: broker, filters: ["homeassistant/#"])
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask { await homeAssistant.run() }
                try await homeAssistant.waitUntilSubscribed()
                let node = tests.topics.discoveryNode
                let gone = try #require(TagIdentity("ibeacon-0a1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d-7-99"))
                let leftovers = [
                    "homeassistant/sensor/\(node)/f1_z9_count/config",
                    "homeassistant/binary_sensor/\(node)/f1_z9_occupied/config",
                    "homeassistant/sensor/\(node)/\(gone)_zone/config",
                    "homeassistant/device_tracker/\(node)/\(gone)_tracker/config",
                ]
                let foreign = "homeassistant/sensor/whereabouts_00000000000000000000000000000000/f1_z9_count/config"
                for topic in leftovers + [foreign] {
                    _ = try homeAssistant.client.publish(
                        topic: topic, payload: Array(#"{"name":"old"}"#.utf8), qos: .atLeastOnce, retain: true)
                }
                let locator = try LocatorProcess(
                    map: try Fixtures.path("corridor.json"), broker: broker, scratch: scratch,
                    extra: ["--warm-up", "1"])
                try await waitFor("the leftover configs to be removed") {
                    leftovers.allSatisfy { homeAssistant.last($0) == "" }
                }
                let current = "homeassistant/sensor/\(node)/f1_z1_count/config"
                #expect(homeAssistant.last(current)?.contains("\"unique_id\"") == true)
                #expect(homeAssistant.all(current).allSatisfy { !$0.isEmpty }, "the map's own configs stay")
                #expect(homeAssistant.last(foreign) == #"{"name":"old"}"#, "another site's configs are not ours")
                #expect(await locator.stop() == 0)
                homeAssistant.client.disconnect()
                group.cancelAll()
            }
        }
    }

    @Test("a recording whose last line a crash tore is repaired when the locator opens it, and the log says so")
    func tornRecording() async throws {
        let tests = try LocatorEndToEndTests()
        try await tests.withSite { broker, collector, agents, scratch in
            let record = scratch.file("readings.jsonl")
            let whole = #"{"agent":"west","rssi":-60,"t":1,"tag":"mac-001122334455"}"# + "\n"
            try (whole + #"{"agent":"west","rssi":-6"#).write(toFile: record, atomically: true, encoding: .utf8)
            let locator = try LocatorProcess(
                map: try Fixtures.path("corridor.json"), broker: broker, scratch: scratch,
                extra: ["--warm-up", "1", "--record", record])
            try await waitFor("the locator to come online") {
                collector.last(tests.topics.locatorStatus.name) == "online"
            }
            #expect(locator.log.contains("cut off a torn last line of 25 bytes"))
            _ = try await tests.sendRound(agents, position: Point(x: 5, y: 5), time: now())
            try await waitFor("the new readings") {
                ((try? String(contentsOfFile: record, encoding: .utf8)) ?? "").split(separator: "\n").count > 1
            }
            #expect(await locator.stop() == 0)
            let lines = try String(contentsOfFile: record, encoding: .utf8).split(separator: "\n")
            #expect(lines.first.map(String.init) == String(whole.dropLast()))
            #expect(lines.allSatisfy { $0.hasPrefix("{") && $0.hasSuffix("}") }, "no line merged with a torn one")
        }
    }

    @Test(
        "bad usage names what is wrong and exits 2: a missing --ca-file, an empty client id, a bad floor share",
        arguments: [
            (["--broker", "mqtts://127.0.0.1:8883", "--ca-file", "/nonexistent/ca.crt"], "/nonexistent/ca.crt"),
            (["--broker", "mqtt://127.0.0.1:1883", "--client-id", ""], "--client-id"),
            (["--broker", "mqtt://127.0.0.1:1883", "--floors", "1,9"], "floor 9"),
            (["--broker", "mqtt://127.0.0.1:1883", "--floors", "1,x"], "--floors"),
            (["--broker", "mqtt://127.0.0.1:1883", "--floors", "1", "--calibration", "auto"], "--calibration auto"),
            (["--broker", "mqtt://127.0.0.1:1883", "--floors", "1", "--role", "auto"], "--role auto"),
        ])
    func badUsage(arguments: [String], named: String) async throws {
        let scratch = try ScratchDirectory()
        defer { scratch.remove() }
        let log = scratch.file("locator.log")
        let process = try ChildProcess(
            executable: BuiltProducts.path("whereabouts-locator"),
            arguments: ["--map", try Fixtures.path("corridor.json")] + arguments, outputPath: log)
        _ = await process.waitForExit(timeout: .seconds(15))
        let output = (try? String(contentsOfFile: log, encoding: .utf8)) ?? ""
        #expect(process.exitCode == 2, "\(output)")
        #expect(output.contains(named), "\(output)")
    }

    @Test("batches a broker lost show as batches_missing in the metrics and a log line naming the agent")
    func gapsReported() async throws {
        let tests = try LocatorEndToEndTests()
        try await tests.withSite { broker, collector, agents, scratch in
            let locator = try LocatorProcess(
                map: try Fixtures.path("corridor.json"), broker: broker, scratch: scratch, extra: ["--warm-up", "1"])
            let topics = tests.topics
            try await waitFor("the locator to come online") { collector.last(topics.locatorStatus.name) == "online" }
            let west = try #require(agents["west"])
            for round in 0..<6 {
                if round == 3 { west.skip(7) }
                _ = try await tests.sendRound(agents, position: Point(x: 5, y: 5), time: now())
            }
            try await waitFor("the gap in the log") { locator.log.contains("agent west: 7 batches missing") }
            #expect(await locator.stop() == 0)
            try await waitFor("the final metrics") {
                collector.last(topics.locatorMetrics.name).flatMap { try? LocatorMetrics(payload: $0) }?.batchesMissing
                    == 7
            }
        }
    }
}
