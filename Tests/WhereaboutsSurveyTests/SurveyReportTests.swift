import Foundation
import TestFixtures
import Testing
import WhereaboutsCalibration
import WhereaboutsCore
import WhereaboutsJSON
import WhereaboutsMapFile
import WhereaboutsSimulation
import WhereaboutsSurvey
import WhereaboutsWire

/// A survey made with the simulator's steered tag (the same simulation as `whereabouts sim`), recorded by a session
/// and reported on.
@Suite("Survey report", .ownThread)
struct SurveyReportTests {
    static let tag = "ibeacon-e2c56db5-dffb-48d2-b060-d0f5a71096e0-7-7"

    /// Stands the steered tag at each point in turn: sent there, then, once there, a reference point of the session
    /// until its dwell ends. The readings go through the session as the recorder hands them over.
    static func survey(points: [Point], dwell: Double = 30) throws -> SurveySession {
        let tag = try #require(TagIdentity(wire: Self.tag))
        let document = try scenarioDocument("open-office")
        var configuration = SimulationConfiguration()
        configuration.tagCount = 0
        configuration.duration = 3600
        configuration.steeredTags = [tag]
        var simulator = try Simulator(map: try FloorMap.load(document).get(), configuration: configuration, seed: 3)
        var sessionConfiguration = SurveySession.Configuration()
        sessionConfiguration.dwell = dwell
        var session = try SurveySession(document: document, configuration: sessionConfiguration)
        _ = session.start(tag: tag, now: configuration.startTime)
        var pending = points[...]
        var target: Point?
        while let window = simulator.nextWindow() {
            for batch in window.batches { for reading in batch.recordedReadings { _ = session.take(reading) } }
            _ = session.tick(now: window.end)
            let here = try #require(window.truth.first { $0.tag == tag })
            if let goal = target, Point(x: here.x, y: here.y).distance(to: goal) < 1e-6 {
                _ = try session.standAt(floor: 1, x: goal.x, y: goal.y, now: window.end)
                target = nil
            } else if target == nil, session.progress(now: window.end).place?.isActive != true {
                guard let next = pending.popFirst() else { break }
                let sent = simulator.steer(tag, to: next, floor: 1)
                #expect(sent)
                target = next
            }
        }
        #expect(pending.isEmpty && target == nil, "the simulation ended before the survey")
        return session
    }

    @Test("the report holds calibrate's figures per area, as JSON and as a self-contained HTML page")
    func report() throws {
        let points = stride(from: 2.0, through: 20, by: 6).flatMap { x in
            stride(from: 2.0, through: 14, by: 6).map { Point(x: x, y: $0) }
        }
        let session = try Self.survey(points: points)
        #expect(session.places == points.count)
        #expect(session.truth.count == 2 * points.count)
        let report = SurveyReport.make(document: session.document, readings: session.readings, truth: session.truth)
        #expect(report.failure == nil)
        let run = try GuidedCalibrationRun(
            document: session.document, readings: session.readings, truth: session.truth)
        #expect(report.text == run.reportText)
        let checked = report.areas.filter(\.isChecked)
        #expect(checked.count >= 4)
        // Each checked area's line in what calibrate prints carries the report's figures.
        for area in checked {
            let line = try #require(report.text.split(separator: "\n").first { $0.hasPrefix(area.name + " ") })
            let before = try #require(area.before)
            let after = try #require(area.after)
            #expect(line.contains("\(fixedPointText(before.median)) / \(fixedPointText(before.p90))"), "\(line)")
            #expect(line.contains("\(fixedPointText(after.median)) / \(fixedPointText(after.p90))"), "\(line)")
        }
        let expected = try #require(report.expected)
        #expect(expected.median > 0 && expected.median < 10)
        // A survey of points: wherever the truth says where the tag was, it stood still, so nothing says how its
        // claims fare on a walking tag and they are not rescaled (counting the standing fixes would halve them).
        let claim = try #require(report.claim)
        #expect(claim.fixes < AccuracyClaim.minimumFixes && claim.scale == nil, "\(claim)")
        #expect(report.text.contains("model.accuracy_scale stays 1.00"))

        let json = report.json.object
        #expect(json?["ok"]?.bool == true)
        #expect(json?["areas"]?.array?.count == report.areas.count)
        #expect(json?["expected"]?.object?["after"]?.object?["median"]?.double == expected.median)
        #expect(json?["map"]?.string.map { (try? FloorMap.parse(Array($0.utf8)).get()) != nil } == true)
        #expect(json?["map"]?.string?.contains("accuracy_scale") == false)
        #expect(json?["accuracy_claim"]?.object?["fixes"]?.double == Double(claim.fixes))

        let html = report.html
        #expect(html.hasPrefix("<!DOCTYPE html>"))
        #expect(html.contains("<svg"))
        #expect(!html.contains("<?xml"), "the drawing's XML declaration has no place inside HTML")
        // Self-contained: nothing fetched (the only URL is the SVG namespace, which names, not fetches).
        for fetch in ["<script", "<link", "<img", "src=", "@import"] { #expect(!html.contains(fetch), "\(fetch)") }
        #expect(
            html.components(separatedBy: "url(").dropFirst().allSatisfy { $0.hasPrefix("#") }, "only the page's own")
        #expect(
            html.components(separatedBy: "http").count - 1 == html.components(separatedBy: "http://www.w3.org/2000/svg")
                .count - 1)
        for area in checked { #expect(html.contains("<td>\(area.name)</td>")) }
    }

    @Test("a survey with nothing usable reports why instead of figures")
    func failure() throws {
        let document = try scenarioDocument("open-office")
        let report = SurveyReport.make(document: document, readings: [], truth: [])
        #expect(report.failure?.contains("no usable samples") == true)
        #expect(!report.isSavable)
        #expect(report.json.object?["ok"]?.bool == false)
        #expect(report.html.contains("No calibration"))
    }
}
