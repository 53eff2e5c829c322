import BrokerFixture
import Foundation
import Testing
import WhereaboutsJSON

/// `whereabouts survey` against `whereabouts sim` through a real mosquitto with the shipped ACL: the simulator's
/// survey tag walks to each point the test names, the test then tells the survey it stands there, as an operator
/// clicks where they stand. The survey's report is then held against `whereabouts evaluate` on a later walk with the
/// calibrated map, and against what `whereabouts calibrate` prints for the same files.
@Suite("Survey against the simulator", .serialized)
struct SurveyEndToEndTests {
    static let tag = "ibeacon-e2c56db5-dffb-48d2-b060-d0f5a71096e0-7-7"
    /// Simulated seconds per real second, for the simulator and the survey alike.
    static let speed = 20
    /// The site's channel: shadowing mostly a property of the place (what a radio map can learn), a little that
    /// changes with time. Both simulations (the survey and the later walk) use it.
    static let channel = ["--sigma", "2", "--place-sigma", "4"]

    /// A FIFO the test writes lines into, as a user types them; closed, the reader sees the end of its input.
    final class LineFIFO {
        let path: String
        private var descriptor: Int32

        init(_ path: String) throws {
            self.path = path
            #expect(mkfifo(path, 0o600) == 0)
            // Read-write, so that neither end waits for the other to open; not inherited by the children.
            descriptor = open(path, O_RDWR | O_CLOEXEC)
            #expect(descriptor >= 0)
        }

        func send(_ line: String) {
            let bytes = Array((line + "\n").utf8)
            #expect(bytes.withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) } == bytes.count)
        }

        func close() {
            if descriptor >= 0 { _ = Foundation.close(descriptor) }
            descriptor = -1
        }

        deinit { close() }
    }

    /// Runs one of our tools to its end; its exit code and what it printed.
    func run(_ arguments: [String], scratch: ScratchDirectory) async throws -> (Int32?, String) {
        let log = scratch.file("whereabouts-\(UUID().uuidString).log")
        let process = try ChildProcess(
            executable: BuiltProducts.path("whereabouts"), arguments: arguments, outputPath: log)
        #expect(await process.waitForExit(timeout: .seconds(300)))
        return (process.exitCode, (try? String(contentsOfFile: log, encoding: .utf8)) ?? "")
    }

    /// The survey room with each agent's true constants off the map's defaults (what the survey is for).
    static func world(_ map: String, into path: String) throws {
        var document = try #require(
            try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: map))) as? [String: Any])
        let truths: [(Double, Double)] = [(4.5, 2.8), (-3.2, 2.2), (1.0, 3.3), (-5.5, 1.9), (2.7, 2.6)]
        var agents = try #require(document["agents"] as? [[String: Any]])
        for index in agents.indices {
            agents[index]["rssi_offset"] = truths[index % truths.count].0
            agents[index]["path_loss_exponent"] = truths[index % truths.count].1
        }
        document["agents"] = agents
        try JSONSerialization.data(withJSONObject: document).write(to: URL(fileURLWithPath: path))
    }

    /// The last truth line of the survey tag in the simulator's truth file, as (x, y).
    static func lastPosition(in path: String) -> (Double, Double)? {
        guard let text = try? String(contentsOfFile: path, encoding: .utf8),
            let line = text.split(separator: "\n").last(where: { $0.contains(tag) }),
            let object = try? JSONParser().parse(Array(line.utf8)).object,
            let x = object["x"]?.double, let y = object["y"]?.double
        else { return nil }
        return (x, y)
    }

    static func lineCount(_ path: String) -> Int {
        ((try? String(contentsOfFile: path, encoding: .utf8)) ?? "").split(separator: "\n").count
    }

    @Test("a survey whose tag walks to the points named gives a calibrated map whose report agrees with evaluate")
    func surveyAgainstSimulator() async throws {
        let scratch = try ScratchDirectory()
        defer { scratch.remove() }
        let map = try Fixtures.path("survey-room.json")
        let world = scratch.file("world.json")
        try Self.world(map, into: world)
        let directory = scratch.file("survey")
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let agents = ["s-1", "s-2", "s-3", "s-4", "s-5"]
        var options = BrokerOptions()
        options.allowAnonymous = false
        options.accounts = Dictionary(uniqueKeysWithValues: agents.map { ($0, "agent-secret") })
        options.accounts["surveyor"] = "survey-secret"
        options.aclRules = try BrokerSecurityTests.shippedACL
        try "agent-secret\n".write(toFile: scratch.file("agent.password"), atomically: true, encoding: .utf8)
        try "survey-secret\n".write(toFile: scratch.file("surveyor.password"), atomically: true, encoding: .utf8)
        // Every 2 m, row by row: about three quarters of the room within 1 m of a point (a calibration needs 60 %).
        let points = [1.0, 3, 5, 7].enumerated().flatMap { row, y in
            let xs = [1.0, 3, 5, 7, 9, 11]
            return (row % 2 == 0 ? xs : xs.reversed()).map { (x: $0, y: y) }
        }

        try await MosquittoBroker.with(options) { broker in
            let waypoints = try LineFIFO(scratch.file("waypoints"))
            let standing = try LineFIFO(scratch.file("points"))
            let origin = String(Int(now()))
            let brokerFlags = ["--broker", "mqtt://127.0.0.1:\(broker.port)"]
            let simTruth = scratch.file("sim-truth.jsonl")
            let sim = try ChildProcess(
                executable: BuiltProducts.path("whereabouts"),
                arguments: [
                    "sim", "--map", world, "--tags", "0", "--duration", "7200", "--seed", "1",
                    "--password-file", scratch.file("agent.password"), "--speed", "\(Self.speed)", "--time-origin",
                    origin, "--survey-tag", Self.tag, "--waypoints", waypoints.path, "--truth", simTruth,
                ] + Self.channel + brokerFlags, outputPath: scratch.file("sim.log"))
            let survey = try ChildProcess(
                executable: BuiltProducts.path("whereabouts"),
                arguments: [
                    "survey", "--map", map, "--tag", Self.tag, "--out", directory, "--password-file",
                    scratch.file("surveyor.password"), "--time-scale", "\(Self.speed)", "--time-origin", origin,
                ] + brokerFlags, outputPath: scratch.file("survey.log"), inputPath: standing.path)
            defer {
                sim.send(SIGKILL)
                survey.send(SIGKILL)
            }
            for (index, point) in points.enumerated() {
                waypoints.send("\(point.x) \(point.y) 1")
                try await waitFor("the survey tag to reach (\(point.x), \(point.y))") {
                    Self.lastPosition(in: simTruth).map { abs($0.0 - point.x) < 1e-3 && abs($0.1 - point.y) < 1e-3 }
                        ?? false
                }
                standing.send("\(point.x) \(point.y) 1")
                try await waitFor("point \(index + 1)'s 30 s") {
                    Self.lineCount(directory + "/survey-truth.jsonl") >= 2 * (index + 1)
                }
            }
            standing.close()
            #expect(await survey.waitForExit(timeout: .seconds(300)))
            let log = (try? String(contentsOfFile: scratch.file("survey.log"), encoding: .utf8)) ?? ""
            #expect(survey.exitCode == 0, "\(log)")
            #expect(log.contains("point \(points.count) done"), "\(log)")
            // SIGTERM ends `sim --broker` in order (its agents say goodbye): it once dropped the signal, because a
            // libmosquitto thread per simulated agent took it while it was ignored (SignalWatcher).
            sim.send(SIGTERM)
            #expect(await sim.waitForExit(timeout: .seconds(20)), "sim --broker did not end on SIGTERM")
            #expect(sim.exitCode == 0)
        }
        try await checkReport(directory: directory, map: map, world: world, scratch: scratch)
    }

    /// The report against a later walk of the same site (evaluate) and against calibrate's table.
    func checkReport(directory: String, map: String, world: String, scratch: ScratchDirectory) async throws {
        let report = try #require(
            try JSONParser().parse(Array(try Data(contentsOf: URL(fileURLWithPath: directory + "/survey-report.json"))))
                .object)
        #expect(report["ok"]?.bool == true)
        #expect(report["refused"]?.bool == false, "\(report["refusal"]?.string ?? "")")
        let expected = try #require(report["expected"]?.object?["after"]?.object?["median"]?.double)
        let heldOut = try #require(report["overall"]?.object?["after"]?.object?["median"]?.double)
        let html = try String(contentsOfFile: directory + "/survey-report.html", encoding: .utf8)
        #expect(html.contains("<svg") && !html.contains("<script"))

        // A later walk of four people through the same site, replayed with the calibrated map and with the map.
        let readings = scratch.file("walk.jsonl")
        let truth = scratch.file("walk-truth.jsonl")
        let (simStatus, simOutput) = try await run(
            [
                "sim", "--map", world, "--tags", "4", "--duration", "900", "--seed", "2", "--readings", readings,
                "--truth", truth,
            ] + Self.channel, scratch: scratch)
        #expect(simStatus == 0, "\(simOutput)")
        var measured: [String: Double] = [:]
        for (name, path) in [("calibrated", directory + "/survey-calibrated.json"), ("map", map)] {
            let positions = scratch.file("positions-\(name).jsonl")
            let (status, output) = try await run(
                ["replay", "--map", path, "--readings", readings, "--positions", positions], scratch: scratch)
            #expect(status == 0, "\(output)")
            let (evaluated, evaluation) = try await run(
                ["evaluate", "--positions", positions, "--truth", truth, "--json"], scratch: scratch)
            #expect(evaluated == 0, "\(evaluation)")
            let line = try #require(evaluation.split(separator: "\n").last { $0.hasPrefix("{") })
            measured[name] = try JSONParser().parse(Array(line.utf8)).object?["error_m"]?.object?["median"]?.double
        }
        let calibrated = try #require(measured["calibrated"])
        let uncalibrated = try #require(measured["map"])
        print(
            "survey of the survey room: report's expected median \(expected) m, held out \(heldOut) m; "
                + "evaluate on a later walk: calibrated \(calibrated) m, the map as it was \(uncalibrated) m")
        #expect(calibrated < uncalibrated * 0.75, "the calibration helps the later walk")
        // Held out by area (where the survey did not go), the check reads what the later walk gets within a factor 2
        // below and 25 % above, the bounds of scripts/check-editor-survey.py: the survey's tag stands at points, and
        // how much lower its figure reads than walking people's depends on how cleanly it stood, so on the machine's
        // load (0.56–0.95 of the walk's over 23 runs of that check; 0.93 and then 0.61 in two clean-clone CI runs of
        // this test, where a third had been asked for).
        #expect(
            heldOut >= calibrated / 2 && heldOut <= calibrated * 1.25, "held out \(heldOut) m against \(calibrated) m")
        // The expected figure counts the surveyed share of the room at the survey's own error, on the readings the
        // radio map was learnt from, at points where the tag stood still: about half of what the later walk's
        // moving tags get here (issue 45's 25 % was met on the Kolakowski robot, whose survey moved too). Within a
        // factor 2.5 below, and never above by more than 25 %.
        #expect(
            expected >= calibrated / 2.5 && expected <= calibrated * 1.25,
            "expected \(expected) m against \(calibrated) m")

        try await checkAgainstCalibrate(report: report, directory: directory, map: map, scratch: scratch)
    }

    /// What `whereabouts calibrate` prints for the survey's files carries the report's per-area figures.
    func checkAgainstCalibrate(
        report: JSONObject, directory: String, map: String, scratch: ScratchDirectory
    ) async throws {
        let (status, printed) = try await run(
            [
                "calibrate", "--map", map, "--readings", directory + "/survey-readings.jsonl", "--truth",
                directory + "/survey-truth.jsonl", "--out", scratch.file("calibrated.json"),
            ], scratch: scratch)
        #expect(status == 0, "\(printed)")
        let lines = printed.split(separator: "\n").map(String.init)
        func pair(_ summary: JSONValue?) -> String? {
            guard let median = summary?.object?["median"]?.double, let p90 = summary?.object?["p90"]?.double else {
                return nil
            }
            return String(format: "%.2f / %.2f", median, p90)
        }
        let areas = try #require(report["areas"]?.array)
        #expect(areas.count >= 4)
        for area in areas {
            let name = try #require(area.object?["name"]?.string)
            let samples = try #require(area.object?["samples"]?.integer)
            let line = try #require(lines.first { $0.hasPrefix(name + " ") }, "\(name) in \(printed)")
            let words = line.split(separator: " ")
            #expect(words.count > 1 && Int(words[1]) == samples, "\(line)")
            if area.object?["checked"]?.bool == true {
                let before = try #require(pair(area.object?["before"]))
                let after = try #require(pair(area.object?["after"]))
                #expect(line.contains(before) && line.contains(after), "\(line) against \(before), \(after)")
            } else {
                #expect(line.contains("too few samples"), "\(line)")
            }
        }
        let expectedLine = try #require(lines.first { $0.hasPrefix("expected over the floor") })
        let expected = try #require(pair(report["expected"]?.object?["after"]))
        #expect(expectedLine.contains(expected), "\(expectedLine) against \(expected)")
        #expect(
            try String(contentsOfFile: scratch.file("calibrated.json"), encoding: .utf8)
                == String(contentsOfFile: directory + "/survey-calibrated.json", encoding: .utf8),
            "calibrate writes the map the survey wrote")
    }
}
