import WhereaboutsCore
import WhereaboutsSession
import WhereaboutsWire

/// The batteries of the map's named tags, published retained as plain text for Home Assistant's battery sensors:
/// - the voltage a tag reports in its Eddystone-TLM frames (which the agent sends on as a reading's `battery_mv`),
///   in millivolts on `…/tags/<tag>/battery`;
/// - the level a GATT job read from the tag's Battery Level characteristic (an agent's ``GATTJobResult``, which
///   echoes the job's tag), in percent on `…/tags/<tag>/battery_level`.
///
/// A voltage is published when first heard and then only when it moved by ``step`` millivolts or more: a cell's
/// voltage wanders by a few millivolts with temperature and load, and Home Assistant's recorder writes a row per
/// change. A level comes at most once a day per tag (the operator's timer), so each one is published.
struct TagBatteryPublisher: Sendable {
    /// The smallest change republished, millivolts.
    static let step = 20

    /// The longest GATT job result read, bytes: a result is a few hundred bytes at most (its longest members are a
    /// refusal's reason and three Device Information strings).
    static let maximumResultBytes = 4096

    private let topics: Topics
    private var map: FloorMap
    /// The voltage last published for each tag.
    private var published: [TagIdentity: Int] = [:]
    /// The level last published for each tag, percent.
    private var levels: [TagIdentity: Int] = [:]

    init(map: FloorMap, topics: Topics) {
        self.map = map
        self.topics = topics
    }

    /// Takes a new map: what was published stays on the broker, and a tag the map no longer names publishes no more,
    /// not even on a reconnection.
    mutating func replaceMap(_ newMap: FloorMap) {
        map = newMap
        published = published.filter { newMap.knownTag($0.key) != nil }
        levels = levels.filter { newMap.knownTag($0.key) != nil }
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
            actions.append(.publish(voltage(millivolts, of: reading.tag)))
        }
        return actions
    }

    /// What a GATT job result comes to: the level of a named tag for an `ok` result that read one, nothing for any
    /// other result (a failed job, an identity or provisioning job, a tag the map does not name). A payload that is
    /// not a valid result is ``RejectionReason/badGATTResult``.
    mutating func gattResult(_ payload: [UInt8]) -> Result<[Action], RejectionReason> {
        guard payload.count <= Self.maximumResultBytes, let text = String(validating: payload, as: UTF8.self),
            let result = try? GATTJobResult(payload: text)
        else { return .failure(.badGATTResult) }
        guard case .ok = result.status, let tag = result.tag, let percent = result.values?.battery,
            map.knownTag(tag) != nil
        else { return .success([]) }
        levels[tag] = percent
        return .success([.publish(level(percent, of: tag))])
    }

    /// Every (re)connection: each tag's voltage and level again.
    func connected() -> [Action] {
        published.sorted { $0.key < $1.key }.map { .publish(voltage($0.value, of: $0.key)) }
            + levels.sorted { $0.key < $1.key }.map { .publish(level($0.value, of: $0.key)) }
    }

    private func voltage(_ millivolts: Int, of tag: TagIdentity) -> Publication {
        Publication(
            topic: topics.tagBattery(tag: tag), payload: String(millivolts), qos: .atLeastOnce, retain: true,
            priority: .background)
    }

    private func level(_ percent: Int, of tag: TagIdentity) -> Publication {
        Publication(
            topic: topics.tagBatteryLevel(tag: tag), payload: String(percent), qos: .atLeastOnce, retain: true,
            priority: .background)
    }
}
