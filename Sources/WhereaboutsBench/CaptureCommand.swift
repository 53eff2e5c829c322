import CommandLineSupport
import WhereaboutsAdvertising
import WhereaboutsCore
import WhereaboutsJSON
import WhereaboutsSettings

/// `whereabouts-bench capture`: writes a btsnoop capture of iBeacon adverts at a fixed rate, for the agent's
/// memory and CPU figure (`whereabouts-agent --source btsnoop:FILE --replay-speed 1`).
///
/// Each advert is its own LE Advertising Report event, as a controller sends them during a passive scan: `tags`
/// iBeacons under the site UUID take turns, evenly spaced in time, with seeded RSSIs. Monitor format, as
/// `btmon -w` writes.
enum CaptureCommand {
    static let table: [Setting] = [.value("out"), .value("tags"), .value("seed"), .value("rate"), .value("seconds")]

    static func run(_ settings: Settings) throws -> ExitStatus {
        guard let path = settings.value("out") else { throw UsageError("--out FILE is required") }
        let rate = try settings.number("rate") ?? 1000
        let seconds = try settings.number("seconds") ?? 30
        let tagCount = try settings.integer("tags") ?? 200
        let seed = UInt64(try settings.integer("seed") ?? 7)
        guard rate > 0, seconds > 0, (1...60_000).contains(tagCount) else {
            throw UsageError("--rate and --seconds must be positive, --tags 1 to 60000")
        }
        guard let site = BeaconUUID(BenchMap.siteUUID) else { throw RuntimeError("bad site UUID") }
        var generator = SplitMix64(seed: seed)
        let advertisingData = (0..<tagCount).map { index in
            IBeaconAdvertisement(uuid: site, major: 1000, minor: UInt16(index), measuredPower: -59).advertisingData
        }
        let writer = BtsnoopWriter(datalink: .monitor)
        var file = writer.header()
        let count = Int(rate * seconds)
        let start = 1_767_225_600.0
        for index in 0..<count {
            let tag = index % tagCount
            let data = advertisingData[tag]
            // A random static address per tag (top two bits set).
            guard let address = DeviceAddress(value: 0xC01D_5B00_0000 | UInt64(tag & 0xFFFF)),
                let event = AdvertisingReportEvent.legacy(
                    address: address, addressType: .randomDevice, data: data,
                    rssi: Int8(-50 - Int(generator.next() % 40)))
            else { throw RuntimeError("cannot build the advertising report of tag \(tag)") }
            file += writer.record(BtsnoopPacket(time: start + Double(index) / rate, event: event))
        }
        try FileAccess.write(file, to: path)
        Measure.emit([
            ("figure", .string("capture")), ("events", .number(Double(count))), ("rate", .number(rate)),
            ("seconds", .number(seconds)), ("bytes", .number(Double(file.count))),
        ])
        return .success
    }
}
