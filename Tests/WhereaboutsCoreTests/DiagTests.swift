import Testing
import WhereaboutsCore

@Suite("Diag")
struct DiagTests {
    @Test("diag") func diag() throws {
        let map = try loadShippedMap("demo-office.json")
        var engine = LocatorEngine(map: map)
        var generator = ReadingGenerator(map: map)
        generator.noiseDB = 0
        var random = SplitMix64(seed: 1)
        let tag = demoTag(1)
        for step in 0..<80 {
            let now = 1_000_000 + Double(step) * 0.25
            let position = step < 24 ? Point(x: 5, y: 4) : Point(x: 27, y: 4)
            for (agentIndex, reading) in generator.readings(tag: tag, at: position, floor: 1, time: now, using: &random) {
                var r = reading
                r.count = 5
                r.variance = 4
                engine.ingest(r, agentIndex: agentIndex, now: now)
            }
            let u = engine.update(now: now)
            if step >= 20, let e = u.estimates.first {
                print("DIAG t \(step) est \(e.position.x) \(e.position.y) zone \(String(describing: e.zone)) moving \(engine.isMoving(tag)!) stat \(engine.motionStatistic(of: tag, now: now)!)")
            }
        }
    }
}
