import CommandLineSupport
import Glibc
import WhereaboutsCore
import WhereaboutsJSON
import WhereaboutsSettings

/// `whereabouts-bench tags`: the engine's memory under a flood of new tag identities (issue 12, item 5).
///
/// One agent hears `--ids` distinct tags of the site, each once, ten thousand a second of reading time, with an
/// engine update after each second, as a locator fed by one hostile agent account would. The map's named tag is
/// heard every second throughout, when the map names one (the bench map does not). Prints the resident set and the engine's tag count at 100,000 and at the end.
enum TagFloodBench {
    static let table: [Setting] = [.value("ids"), .value("agents"), .value("maximum-tags"), .value("positioning")]

    static func run(_ settings: Settings) throws -> ExitStatus {
        let ids = try settings.integer("ids") ?? 1_000_000
        let agents = try settings.integer("agents") ?? 50
        let positioningName = settings.value("positioning") ?? "grid"
        guard let positioning = LocatorEngine.Configuration.Positioning(rawValue: positioningName) else {
            throw UsageError("--positioning grid or trilateration")
        }
        guard ids >= 100_000, agents >= 3 else { throw UsageError("--ids ≥ 100000, --agents ≥ 3") }
        let map = try BenchMap(agents: agents).map
        var configuration = LocatorEngine.Configuration()
        configuration.positioning = positioning
        if let limit = try settings.integer("maximum-tags") { configuration.maximumTags = limit }
        var engine = LocatorEngine(map: map, configuration: configuration)
        let site = map.site.uuid
        let named = map.knownTags.first?.identity
        let perSecond = 10_000
        let start = 1_767_225_600.0
        var fields: [(key: String, value: JSONValue)] = [
            ("figure", .string("tag-flood")), ("positioning", .string(positioning.rawValue)),
            ("maximum_tags", .number(Double(configuration.maximumTags))),
        ]
        var index = 0
        var second = 0
        while index < ids {
            let now = start + Double(second)
            if let named {
                engine.ingest(Reading(tag: named, time: now, rssi: -60), agentIndex: 0, now: now)
            }
            for _ in 0..<min(perSecond, ids - index) {
                // Site tags the map does not name: majors from 1,000 up, every minor.
                let tag = TagIdentity.iBeacon(
                    uuid: site, major: UInt16(1_000 + index >> 16), minor: UInt16(truncatingIfNeeded: index))
                engine.ingest(Reading(tag: tag, time: now, rssi: -70), agentIndex: index % agents, now: now)
                index += 1
            }
            _ = engine.update(now: now)
            second += 1
            if index == 100_000 || index == ids {
                let usage = ProcessSample(pid: getpid())
                fields.append(("rss_kb_at_\(index)", .number(Double(usage?.residentKB ?? -1))))
                fields.append(("tags_at_\(index)", .number(Double(engine.trackedTagCount))))
            }
        }
        fields.append(("evicted", .number(Double(engine.evictedTagCount))))
        if let named { fields.append(("named_tag_held", .bool(engine.isMoving(named) != nil))) }
        Measure.emit(fields)
        return .success
    }
}
