import WhereaboutsCore
import WhereaboutsSession
import WhereaboutsWire

/// The battery voltage the map's named tags report (an Eddystone-TLM frame from the tag's address, which the agent
/// sends on as a reading's `battery_mv`), published retained as plain text (millivolts) on `…/tags/<tag>/battery`
/// for Home Assistant's battery sensor.
///
/// Published when first heard and then only when it moved by ``step`` millivolts or more: a cell's voltage wanders by
/// a few millivolts with temperature and load, and Home Assistant's recorder writes a row per change.
struct TagBatteryPublisher: Sendable {
    /// The smallest change republished, millivolts.
    static let step = 20

    private let topics: Topics
    private var map: FloorMap
    /// The voltage last published for each tag.
    private var published: [TagIdentity: Int] = [:]

    init(map: FloorMap, topics: Topics) {
        self.map = map
        self.topics = topics
    }

    /// Takes a new map: what was published stays, and a tag the map no longer names publishes no more.
    mutating func replaceMap(_ newMap: FloorMap) {
        map = newMap
    }

    /// The publications due for the accepted readings of one batch: one per named tag whose voltage is new, of the
    /// tags `publishes` says are this locator's to speak for (on a split site, the share owning the tag's floor).
    mutating func batch(_ outcomes: [ReadingOutcome], publishes: (TagIdentity) -> Bool) -> [Action] {
        var actions: [Action] = []
        for case .accepted(let reading) in outcomes {
            guard let millivolts = reading.batteryMillivolts, map.knownTag(reading.tag) != nil, publishes(reading.tag)
            else { continue }
            if let last = published[reading.tag], abs(last - millivolts) < Self.step { continue }
            published[reading.tag] = millivolts
            actions.append(
                .publish(
                    Publication(
                        topic: topics.tagBattery(tag: reading.tag), payload: String(millivolts), qos: .atLeastOnce,
                        retain: true, priority: .background)))
        }
        return actions
    }

    /// Every (re)connection: each tag's voltage again.
    func connected() -> [Action] {
        published.sorted { $0.key < $1.key }.map { tag, millivolts in
            .publish(
                Publication(
                    topic: topics.tagBattery(tag: tag), payload: String(millivolts), qos: .atLeastOnce, retain: true,
                    priority: .background))
        }
    }
}
