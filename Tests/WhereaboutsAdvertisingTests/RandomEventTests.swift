import Foundation
import TestFixtures
import Testing
import WhereaboutsAdvertising
import WhereaboutsCore

/// SplitMix64: a small, fast, seedable generator, so a failing run can be repeated from its printed seed.
struct SplitMix64: RandomNumberGenerator {
    private var state: UInt64

    init(seed: UInt64) { state = seed }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// A value in 0..<bound, cheaply; the tiny modulo bias does not matter here.
    mutating func below(_ bound: Int) -> Int { Int(next() % UInt64(bound)) }

    mutating func byte() -> UInt8 { UInt8(truncatingIfNeeded: next()) }
}

/// Makes random events biased toward what reaches deep code: LE Meta events with a correct plen, real report
/// shapes, beacon-looking AD structures, then a few corrupted bytes or lengths.
struct RandomEventMaker {
    var random: SplitMix64
    let seeds: [[UInt8]]

    mutating func event(into bytes: inout [UInt8]) {
        bytes.removeAll(keepingCapacity: true)
        switch random.below(8) {
        case 0:
            // Pure noise, 0–300 bytes.
            for _ in 0..<random.below(301) { bytes.append(random.byte()) }
        case 1:
            // A right header and plen over noise.
            let length = random.below(256)
            bytes += [0x04, 0x3E, UInt8(length), random.below(2) == 0 ? 0x02 : 0x0D, UInt8(random.below(4))]
            for _ in 0..<max(0, length - 2) { bytes.append(random.byte()) }
            if length < 2 { bytes.removeLast(2 - length) }
        case 2, 3:
            // A fixture event with a few bytes changed.
            bytes += seeds[random.below(seeds.count)]
            mutate(&bytes)
        default:
            structured(into: &bytes)
            if random.below(2) == 0 { mutate(&bytes) }
        }
    }

    // Written straight into the event buffer: a debug build makes every temporary array and closure costly.
    private mutating func structured(into bytes: inout [UInt8]) {
        let extended = random.below(2) == 0
        let count = 1 + random.below(3)
        bytes += [0x04, 0x3E, 0x00, extended ? 0x0D : 0x02, UInt8(count)]
        for _ in 0..<count {
            let rssi = random.below(8) == 0 ? random.byte() : UInt8(bitPattern: Int8(-100 + random.below(80)))
            let lengthIndex: Int
            if extended {
                bytes += [random.below(4) == 0 ? random.byte() : 0x13, 0x00, random.byte() & 0x03]
                appendRandom(6, to: &bytes)
                bytes += [0x01, 0x00, 0xFF, random.byte(), rssi, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]
                lengthIndex = bytes.count - 1
            } else {
                bytes += [random.byte() & 0x03, random.byte() & 0x03]
                appendRandom(6, to: &bytes)
                bytes.append(0)
                lengthIndex = bytes.count - 1
            }
            let budget = extended ? 70 : 31
            while bytes.count - lengthIndex - 1 < budget, random.below(4) != 0 {
                appendADStructure(to: &bytes)
            }
            bytes.removeLast(max(0, bytes.count - lengthIndex - 1 - budget))
            bytes[lengthIndex] = UInt8(bytes.count - lengthIndex - 1)
            if !extended { bytes.append(rssi) }
        }
        // Three reports of 70 bytes can overflow one event; then the length byte simply lies.
        bytes[2] = UInt8(truncatingIfNeeded: bytes.count - 3)
    }

    private mutating func appendRandom(_ count: Int, to bytes: inout [UInt8]) {
        for _ in 0..<count { bytes.append(random.byte()) }
    }

    private mutating func appendADStructure(to bytes: inout [UInt8]) {
        switch random.below(6) {
        case 0:
            bytes += [0x1A, 0xFF, 0x4C, 0x00, 0x02, 0x15]
            appendRandom(21, to: &bytes)
        case 1:
            bytes += [0x17, 0x16, 0xAA, 0xFE, 0x00]
            appendRandom(20, to: &bytes)
        case 2:
            bytes += [0x11, 0x16, 0xAA, 0xFE, 0x20, 0x00]
            appendRandom(12, to: &bytes)
        case 3:
            bytes += [0x1B, 0xFF, random.byte(), random.byte(), 0xBE, 0xAC]
            appendRandom(22, to: &bytes)
        case 4:
            bytes += [0x02, 0x01, 0x06]
        default:
            let length = random.below(8)
            bytes.append(UInt8(length))
            appendRandom(length, to: &bytes)
        }
    }

    private mutating func mutate(_ bytes: inout [UInt8]) {
        guard !bytes.isEmpty else { return }
        for _ in 0..<(1 + random.below(3)) {
            let index = random.below(bytes.count)
            switch random.below(4) {
            case 0: bytes[index] = random.byte()
            case 1: bytes[index] &+= random.below(2) == 0 ? 1 : 0xFF
            case 2: if bytes.count > 1 { bytes.removeLast() }
            default: bytes[index] = [0x00, 0x01, 0x15, 0x1A, 0x7F, 0xFF][random.below(6)]
            }
        }
    }
}

@Suite("Seeded random events never crash the decoder", .ownThread)
struct RandomEventTests {
    @Test("a million seeded random events give only dropped events or sane reports and sightings")
    func randomEvents() throws {
        let environment = ProcessInfo.processInfo.environment
        let seed = environment["WHEREABOUTS_RANDOM_SEED"].flatMap { UInt64($0) } ?? 0x5EED_0F_B1E
        let count = environment["WHEREABOUTS_RANDOM_EVENTS"].flatMap { Int($0) } ?? 1_000_000
        print("random HCI events: seed \(seed), \(count) events (set WHEREABOUTS_RANDOM_SEED to repeat)")
        var maker = RandomEventMaker(random: SplitMix64(seed: seed), seeds: FixtureEvent.all.map(\.bytes))
        let parser = HCIEventParser()
        var decoder = SightingDecoder(filter: SightingFilter(constraints: [], selectsAllBeacons: true))
        var counters = DropCounters()
        var event: [UInt8] = []
        event.reserveCapacity(512)
        var reportCount = 0
        var sightingCount = 0
        var failures = 0
        for _ in 0..<count {
            maker.event(into: &event)
            let reports = parser.reports(in: event, counters: &counters)
            reportCount += reports.count
            for report in reports {
                if !(report.data.startIndex >= 0 && report.data.endIndex <= event.count && report.rssi <= 20) {
                    failures += 1
                }
                for sighting in decoder.sightings(in: report, time: 1) {
                    sightingCount += 1
                    if !Self.isSane(sighting) {
                        failures += 1
                        if failures < 5 { Issue.record("insane sighting \(sighting) from \(event)") }
                    }
                }
            }
        }
        print("random HCI events: \(reportCount) reports, \(sightingCount) sightings; drops: \(counters)")
        print("random HCI events: report and AD drops: \(decoder.counters)")
        #expect(failures == 0)
        // The bias worked: many events reached the reports and the beacon decoders.
        #expect(reportCount > count / 10)
        #expect(decoder.counters.total > 0)
        #expect(decoder.telemetryCount <= 1024)
    }

    @Test("decoding a whole event gives the sightings and drops of its reports decoded one by one")
    func eventAgreesWithReports() {
        let environment = ProcessInfo.processInfo.environment
        let seed = environment["WHEREABOUTS_RANDOM_SEED"].flatMap { UInt64($0) } ?? 0x5EED_0F_B1E
        var maker = RandomEventMaker(random: SplitMix64(seed: seed), seeds: FixtureEvent.all.map(\.bytes))
        let filter = SightingFilter(constraints: [], selectsAllBeacons: true)
        // The decoder reads reports in place and reuses one frame buffer; the parser's array of reports is the
        // plain reading it must agree with.
        var whole = SightingDecoder(filter: filter)
        var oneByOne = SightingDecoder(filter: filter)
        var parserCounters = DropCounters()
        var event: [UInt8] = []
        var disagreements = 0
        for _ in 0..<50_000 {
            maker.event(into: &event)
            let reports = oneByOne.parser.reports(in: event, counters: &parserCounters)
            let expected = reports.flatMap { oneByOne.sightings(in: $0, time: 2) }
            if whole.sightings(in: event, time: 2) != expected {
                disagreements += 1
                if disagreements < 5 { Issue.record("sightings differ for \(event)") }
            }
        }
        var expectedCounters = parserCounters
        expectedCounters.add(oneByOne.counters)
        #expect(disagreements == 0)
        #expect(whole.counters == expectedCounters)
        #expect(whole.telemetryCount == oneByOne.telemetryCount)
    }

    static func isSane(_ sighting: BeaconSighting) -> Bool {
        guard (-128...20).contains(sighting.rssi), sighting.time == 1 else { return false }
        if let power = sighting.measuredPower, !(-100 ... -20).contains(power) { return false }
        if let battery = sighting.telemetry?.batteryMillivolts, !(1...65535).contains(battery) { return false }
        if let celsius = sighting.telemetry?.temperatureCelsius, !(-128..<128).contains(celsius) { return false }
        guard TagIdentity(sighting.tag.description) == sighting.tag else { return false }
        switch sighting.tag {
        case .iBeacon, .altBeacon, .eddystone: return true
        case .address: return false  // no addresses are configured
        }
    }
}
