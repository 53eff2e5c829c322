import TestFixtures
import Testing

@testable import WhereaboutsCore

@Suite("Zone probabilities from a position and its accuracy", .ownThread)
struct ZoneEvidenceTests {
    static let lobby = ZoneKey(floor: 1, minor: 1)
    static let reception = ZoneKey(floor: 1, minor: 2)

    func evidence(_ map: FloorMap, _ position: Point, accuracy: Double, obstacles: [Polygon] = []) throws
        -> ZoneEvidence
    {
        let floor = try #require(map.floor(major: 1))
        return ZoneEvidence(
            position: position, accuracy: accuracy, zones: map.zones(onFloor: 1), outline: floor.outline,
            obstacles: obstacles)
    }

    @Test("the zones' probabilities never sum to more than 1, and none is outside 0…1", arguments: [UInt64(1), 2, 3])
    func sums(seed: UInt64) throws {
        let map = try loadShippedMap("demo-office.json")
        var random = SplitMix64(seed: seed)
        for _ in 0..<300 {
            let position = Point(
                x: Double.random(in: -2...32, using: &random), y: Double.random(in: -2...22, using: &random))
            let accuracy = Double.random(in: 0...8, using: &random)
            let result = try evidence(map, position, accuracy: accuracy)
            let total = result.masses.reduce(0) { $0 + $1.probability }
            #expect(total <= 1 + 1e-9, "\(position) ± \(accuracy): \(total)")
            #expect(result.masses.allSatisfy { $0.probability >= 0 && $0.probability <= 1 + 1e-9 })
            #expect(result.outside >= 0)
            // What the payload lists is the same mass, most likely first.
            let reported = result.reported
            #expect(zip(reported, reported.dropFirst()).allSatisfy { $0.probability >= $1.probability })
            #expect(reported.allSatisfy { $0.probability >= ZoneEvidence.reportedProbability })
        }
    }

    @Test("only the zones within reach are listed, in map order; those left out are beyond the integral's reach")
    func withinReach() throws {
        let map = try loadShippedMap("demo-office.json")
        let floor = map.zones(onFloor: 1)
        var random = SplitMix64(seed: 11)
        for _ in 0..<200 {
            let position = Point(
                x: Double.random(in: 0...30, using: &random), y: Double.random(in: 0...20, using: &random))
            let accuracy = Double.random(in: 0.1...4, using: &random)
            let result = try evidence(map, position, accuracy: accuracy)
            // In map order, and every zone of the floor that holds any mass is listed.
            let order = Array(result.zones.compactMap { zone in floor.firstIndex { $0.key == zone } })
            #expect(order.count == result.zones.count && order == order.sorted())
            if let holding = floor.first(where: { $0.polygon.contains(position) }) {
                #expect(result.zones.contains(holding.key), "\(position): \(holding.key) left out")
            }
            // Each zone left out is beyond the ±3σ the integral reaches (σ = accuracy / √2 per axis), by the
            // polygon's own distance, not by the bounding boxes that chose it.
            let reach = 3 * max(accuracy, ZoneEvidence.minimumAccuracy) / 2.squareRoot()
            for zone in floor where !result.zones.contains(zone.key) {
                let outside = -zone.polygon.signedDistance(position)
                #expect(outside >= reach - 1e-9, "\(zone.key) left out, \(outside) m from \(position) ± \(accuracy)")
            }
        }
        // A tag known to half a metre in the middle of the Lobby does not list the far rooms.
        #expect(try evidence(map, Point(x: 5, y: 4), accuracy: 0.5).zones.elementsEqual([Self.lobby]))
    }

    @Test("rectangular zones integrated exactly match a fine integral; the lattice other zones take is near it")
    func exactAndLattice() throws {
        // Six rooms of 4 × 3 m in a rectangular building, and the same rooms each with a fifth, redundant vertex
        // (mid-way along its bottom edge), which makes them other polygons and sends them to the lattice.
        func room(_ column: Int, _ row: Int, extraVertex: Bool) -> Zone {
            let x = Double(column) * 4
            let y = Double(row) * 3
            var corners = [Point(x: x, y: y)]
            if extraVertex { corners.append(Point(x: x + 2, y: y)) }
            corners += [Point(x: x + 4, y: y), Point(x: x + 4, y: y + 3), Point(x: x, y: y + 3)]
            return Zone(floor: 1, minor: UInt16(row * 3 + column + 1), name: "", polygon: Polygon(corners))
        }
        let outline = Polygon([Point(x: 0, y: 0), Point(x: 12, y: 0), Point(x: 12, y: 6), Point(x: 0, y: 6)])
        let rooms = (0..<2).flatMap { row in (0..<3).map { room($0, row, extraVertex: false) } }
        let fivers = (0..<2).flatMap { row in (0..<3).map { room($0, row, extraVertex: true) } }
        let exactFloor = FloorZones(zones: rooms, outline: outline, obstacles: [])
        let latticeFloor = FloorZones(zones: fivers, outline: outline, obstacles: [])
        #expect(exactFloor.rectangular.allSatisfy { $0 } && !latticeFloor.rectangular.contains(true))
        // The reference: the same Gaussian over ±3σ, cut to the building. Zones and building are rectangles, so
        // it is a product of one-dimensional integrals, summed here on a fine midpoint rule.
        func reference(_ position: Point, _ accuracy: Double, _ zone: Zone) -> Double {
            let sigma = accuracy / 2.squareRoot()
            func mass(_ from: Double, _ to: Double, _ centre: Double) -> Double {
                let low = max(from, centre - 3 * sigma)
                let high = min(to, centre + 3 * sigma)
                guard high > low else { return 0 }
                let steps = 20_000
                let step = (high - low) / Double(steps)
                var sum = 0.0
                for index in 0..<steps {
                    let offset = (low + (Double(index) + 0.5) * step - centre) / sigma
                    sum += exponential(-offset * offset / 2)
                }
                return sum * step
            }
            let bounds = zone.polygon.bounds
            return mass(bounds.minimum.x, bounds.maximum.x, position.x)
                * mass(bounds.minimum.y, bounds.maximum.y, position.y)
                / (mass(0, 12, position.x) * mass(0, 6, position.y))
        }
        var random = SplitMix64(seed: 4)
        var exactError = 0.0
        var latticeError = 0.0
        for _ in 0..<300 {
            // Some near the building's edge, where the exact path cuts the Gaussian at the outline.
            let position = Point(
                x: Double.random(in: 0...12, using: &random), y: Double.random(in: 0...6, using: &random))
            let accuracy = Double.random(in: 0.2...3, using: &random)
            let exact = ZoneEvidence(position: position, accuracy: accuracy, floor: exactFloor)
            let lattice = ZoneEvidence(position: position, accuracy: accuracy, floor: latticeFloor)
            #expect(exact.zones.elementsEqual(lattice.zones))
            for room in rooms where exact.zones.contains(room.key) {
                let truth = reference(position, accuracy, room)
                exactError = max(exactError, abs(exact.probability(of: room.key) - truth))
                latticeError = max(latticeError, abs(lattice.probability(of: room.key) - truth))
            }
        }
        // The engine's 12 × 12 lattice steps half a σ, so a boundary near the middle moves a whole column of its
        // mass at once.
        #expect(exactError < 1e-6, "exact: largest error \(exactError)")
        #expect(latticeError < 0.15, "lattice: largest error \(latticeError)")
        print("zone evidence: largest error, exact \(exactError), 12 × 12 lattice \(latticeError)")
    }

    @Test("the reported zones are the likely ones, most likely first and in map order among equals")
    func reportedOrder() {
        let c = ZoneKey(floor: 1, minor: 3)
        let d = ZoneKey(floor: 1, minor: 4)
        let evidence = ZoneEvidence(zones: [Self.lobby, Self.reception, c, d], mass: [0.3, 0.4, 0.3, 0.005])
        #expect(evidence.reported.map(\.zone) == [Self.reception, Self.lobby, c])
        #expect(evidence.reported.map(\.probability) == [0.4, 0.3, 0.3])

        // A mass that is not a number is not reported, and does not hold the others out of order.
        let broken = ZoneEvidence(zones: [Self.lobby, c, Self.reception], mass: [0.3, .nan, 0.6])
        #expect(broken.reported.map(\.zone) == [Self.reception, Self.lobby])
    }

    @Test("a tag in the middle of a room is in it with a probability near 1")
    func middle() throws {
        let map = try loadShippedMap("demo-office.json")
        // The Lobby is 10 × 8 m; its centre is 4 m from its nearest boundary.
        let result = try evidence(map, Point(x: 5, y: 4), accuracy: 1.5)
        #expect(result.probability(of: Self.lobby) > 0.99)
        #expect(result.reported.first?.zone == Self.lobby)
    }

    @Test("a tag on the boundary between two rooms is in each with a probability near 0.5")
    func boundary() throws {
        let map = try loadShippedMap("demo-office.json")
        // x = 10 is the wall between the Lobby and Reception; y = 4 is mid-way along it.
        for accuracy in [0.5, 1.0, 2.0] {
            let result = try evidence(map, Point(x: 10, y: 4), accuracy: accuracy)
            #expect(abs(result.probability(of: Self.lobby) - 0.5) < 0.01, "± \(accuracy)")
            #expect(abs(result.probability(of: Self.reception) - 0.5) < 0.01, "± \(accuracy)")
        }
        // A little into Reception: more likely there, and the more so the sharper the position.
        let sharp = try evidence(map, Point(x: 10.5, y: 4), accuracy: 0.5)
        let wide = try evidence(map, Point(x: 10.5, y: 4), accuracy: 3)
        #expect(sharp.probability(of: Self.reception) > wide.probability(of: Self.reception))
        #expect(wide.probability(of: Self.reception) > 0.5)
    }

    @Test("nobody stands outside the floor or inside an obstacle: that mass goes to where they can stand")
    func conditionedOnFreeFloor() throws {
        let map = try loadShippedMap("demo-office.json")
        // In the Lobby's corner, which is also the building's: a Gaussian of 2 m would put three quarters of its
        // mass outside the building; none of it can be there.
        let corner = try evidence(map, Point(x: 0.2, y: 0.2), accuracy: 2)
        #expect(corner.probability(of: Self.lobby) > 0.95)
        // A block over the Lobby's half next to Reception: the tag at the boundary must be in Reception.
        let block = Polygon([Point(x: 7, y: 0), Point(x: 10, y: 0), Point(x: 10, y: 8), Point(x: 7, y: 8)])
        let blocked = try evidence(map, Point(x: 10, y: 4), accuracy: 1, obstacles: [block])
        #expect(blocked.probability(of: Self.reception) > 0.95)
    }
}

@Suite("Zone hysteresis on probabilities")
struct ProbabilityHysteresisTests {
    static let a = ZoneKey(floor: 1, minor: 1)
    static let b = ZoneKey(floor: 1, minor: 2)

    func evidence(_ a: Double, _ b: Double) -> ZoneEvidence {
        ZoneEvidence(zones: [Self.a, Self.b], mass: [a, b])
    }

    @Test("a still tag near a boundary, its probability wandering between 0.25 and 0.75, never changes zone")
    func noFlaps() {
        let configuration = ZoneHysteresis.Configuration()
        var hysteresis = ZoneHysteresis(current: Self.a)
        var random = SplitMix64(seed: 5)
        var changes = 0
        for second in 0..<3600 {
            let p = Double.random(in: 0.25...0.75, using: &random)
            if hysteresis.update(evidence: evidence(p, 1 - p), time: Double(second), configuration: configuration)
                != nil
            {
                changes += 1
            }
        }
        #expect(changes == 0)
        #expect(hysteresis.current == Self.a)
    }

    @Test(
        "at one estimate a second, the estimate that makes a zone likely enough enters it; one unlikely enough leaves")
    func enterAndExitEachSecond() {
        let configuration = ZoneHysteresis.Configuration()
        var hysteresis = ZoneHysteresis()
        let enter = configuration.enterProbability
        let exit = configuration.exitProbability
        // A tag's first estimate holds only its first readings: its place waits for the next.
        #expect(hysteresis.update(evidence: evidence(enter, 0), time: 0, configuration: configuration) == nil)
        let entered = hysteresis.update(evidence: evidence(enter, 0), time: 1, configuration: configuration)
        #expect(entered?.from == nil && entered?.to == Self.a)
        // Between the thresholds, however long and whatever else grows: stays.
        for step in 0..<20 {
            let kept = hysteresis.update(
                evidence: evidence(exit + 0.01, 1 - exit - 0.02), time: 2 + Double(step), configuration: configuration)
            #expect(kept == nil)
        }
        // The next estimate that leaves the zone clearly unlikely (evidence enough at once) weighed a second of
        // readings: it decides.
        let moved = hysteresis.update(evidence: evidence(0.05, enter), time: 22, configuration: configuration)
        #expect(moved?.from == Self.a && moved?.to == Self.b)
        #expect(hysteresis.decisionDue(configuration: configuration) == nil)
    }

    @Test("evidence against a zone just under the exit threshold leaves it when it holds, never when it alternates")
    func accumulatedEvidence() {
        let configuration = ZoneHysteresis.Configuration()
        var hysteresis = ZoneHysteresis(current: Self.a)
        let enter = configuration.enterProbability
        func update(_ a: Double, at time: Double) -> (from: ZoneKey?, to: ZoneKey?)? {
            hysteresis.update(evidence: evidence(a, enter), time: time, configuration: configuration)
        }
        #expect(update(0.9, at: 0) == nil)
        // 0.13 likely, every other second, for an hour: each weak estimate is taken back by the next.
        for second in stride(from: 1, to: 3600, by: 2) {
            #expect(update(0.13, at: Double(second)) == nil)
            #expect(update(0.6, at: Double(second + 1)) == nil)
        }
        #expect(hysteresis.current == Self.a)
        // Twice in a row: the evidence holds, and the tag leaves.
        #expect(update(0.13, at: 3601) == nil)
        let moved = update(0.13, at: 3602)
        #expect(moved?.from == Self.a && moved?.to == Self.b)
    }

    @Test("with estimates more often, a change must hold over a dwell's worth of readings")
    func enterAndExit() {
        let configuration = ZoneHysteresis.Configuration()
        let dwell = configuration.probabilityDwell
        #expect(dwell == 1)
        var hysteresis = ZoneHysteresis()
        let enter = configuration.enterProbability
        let exit = configuration.exitProbability
        func update(_ a: Double, _ b: Double, at time: Double) -> (from: ZoneKey?, to: ZoneKey?)? {
            hysteresis.update(evidence: evidence(a, b), time: time, configuration: configuration)
        }
        // Likely enough, but not over a dwell of readings: nothing. The readings of the estimate at 0.5 began at
        // 0.25, so it holds at 1.25.
        #expect(update(enter, 0, at: 0) == nil)
        #expect(update(0.1, 0, at: 0.25) == nil)
        for time in [0.5, 0.75, 1] { #expect(update(enter, 0, at: time) == nil) }
        #expect(hysteresis.decisionDue(configuration: configuration) == 0.25 + dwell)
        let entered = update(enter + 0.05, 0, at: 1.25)
        #expect(entered?.from == nil && entered?.to == Self.a)
        // Just above the exit threshold, however long: stays, though another zone is likelier.
        for step in 0..<20 {
            #expect(update(exit + 0.01, 0.6, at: 10 + Double(step) / 4) == nil)
        }
        // Clearly below it over a dwell (evidence enough within it): leaves for the zone likely enough, the dwell
        // counted from the first readings against the zone.
        for time in [15, 15.25, 15.5] { #expect(update(0.05, 0.7, at: time) == nil) }
        let moved = update(0.05, 0.7, at: 15.75)
        #expect(moved?.from == Self.a && moved?.to == Self.b)
        // Below the exit threshold with no zone likely enough: leaves for none.
        #expect(update(0.3, 0.1, at: 16) == nil)
        let left = update(0.3, 0.1, at: 16.75)
        #expect(left?.from == Self.b && left?.to == nil)
    }

    @Test("trilateration estimates carry zone probabilities, and occupancy each member's")
    func trilaterationProbabilities() throws {
        let map = try loadShippedMap("demo-office.json")
        var engine = LocatorEngine(map: map)
        let tag = demoTag(1)
        let estimate = try #require(
            lastEstimateStandingStill(&engine, tag: tag, at: Point(x: 5, y: 4), seconds: 30, seed: 11))
        #expect(estimate.zone == Self.a)
        let probability = try #require(estimate.zoneProbability)
        #expect(probability > 0.5 && probability <= 1)
        #expect(estimate.zoneProbabilities.first?.zone == Self.a)
        #expect(estimate.zoneProbabilities.first?.probability == probability)
        #expect(estimate.zoneProbabilities.map(\.probability).reduce(0, +) <= 1 + 1e-9)
        let occupancy = try #require(engine.occupancy(of: Self.a))
        #expect(occupancy.tags == [tag])
        #expect(occupancy.probabilities == [probability])
    }
}
