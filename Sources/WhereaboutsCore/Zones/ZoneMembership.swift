/// Which zone each tag is in, who is in each zone, and whether that can be known.
///
/// Each tag's zone is decided by its own ``ZoneHysteresis`` on its zone probabilities; every change of zone moves the tag between the
/// zones' member sets and becomes a ``ZoneTransition``. A zone whose covering agents are all offline is
/// ``ZoneState/unknown``: its members stay, and the tags in it are neither inside nor outside.
struct ZoneMembership: Sendable {
    /// The zones, in map order.
    let zones: [Zone]
    private let configuration: ZoneHysteresis.Configuration
    /// The zones' keys packed (floor, minor) and sorted, with the index of each zone: a binary search finds a
    /// zone's index in a few compares, where a dictionary hashed each key with SipHash.
    private let sortedKeys: [UInt32]
    private let indexOfSortedKey: [Int]
    private var members: [ZoneMembers]
    private var states: [ZoneState]
    /// When each zone last became known (its agents heard again after all were down); -infinity while unknown.
    private var knownSince: [Double]
    private var changedZones: Set<Int> = []
    /// Each tag's zone decision and how likely its last estimate made the zone it is in: one entry, so that
    /// placing a tag hashes its identity twice (read, write back), not four times.
    private var tagStates: [TagIdentity: TagZoneState] = [:]
    private var everSeen: Set<TagIdentity> = []
    /// The zones an estimate's evidence reaches, by index (kept between estimates, not reallocated).
    private var nearby: [Int] = []
    /// The zones' shapes, for zone probabilities from a position.
    let geometry: ZoneGeometry

    /// Every zone of the map empty and unknown.
    init(map: FloorMap, configuration: ZoneHysteresis.Configuration) {
        zones = map.zones
        self.configuration = configuration
        geometry = ZoneGeometry(map: map)
        // The first zone with a key wins, as the map's validation allows no second.
        let sorted = map.zones.indices.map { (key: Self.packed(map.zones[$0].key), index: $0) }.sorted { $0 < $1 }
        let unique = sorted.enumerated().filter { $0.offset == 0 || sorted[$0.offset - 1].key != $0.element.key }
        sortedKeys = unique.map(\.element.key)
        indexOfSortedKey = unique.map(\.element.index)
        members = Array(repeating: ZoneMembers(), count: map.zones.count)
        states = Array(repeating: .unknown, count: map.zones.count)
        knownSince = Array(repeating: -.infinity, count: map.zones.count)
    }

    // MARK: - Changes

    /// Where a tag is after an estimate.
    struct Placement {
        /// The zone it is in, if any …
        var zone: ZoneKey?
        /// … and how likely the estimate makes that zone (or no zone).
        var probability: Double
        /// When a change challenging that zone may be decided, if one is: the first estimate from then on decides
        /// it, if the challenge still holds.
        var decisionDue: Double?
    }

    /// Notes that the engine holds a tag: from now on it is outside the zones it is not in, never unknown.
    mutating func seen(_ tag: TagIdentity) {
        everSeen.insert(tag)
    }

    /// Takes a tag's position on a floor (the trilateration path) and the zone probabilities made from it; returns
    /// the zone it is in afterwards and how likely that is.
    ///
    /// A tag whose zone is on another floor has changed floor: it leaves that zone and enters the one holding the
    /// position at once (``ZoneHysteresis/changeFloor(position:zones:among:)``); otherwise the tag's hysteresis
    /// decides, on the position, unless the zone is `held` (another floor contests the tag's: no change is decided).
    mutating func place(
        _ tag: TagIdentity,
        floor: UInt16,
        position: Point,
        evidence: ZoneEvidence,
        held: Bool = false,
        time: Double,
        transitions: inout [ZoneTransition]
    ) -> Placement {
        var state = tagStates[tag] ?? TagZoneState()
        defer { tagStates[tag] = state }
        // The zone holding the position is among those the evidence reaches; the one the tag is in is needed too,
        // for how far out of it the position is. (Not the whole floor: 200 rooms each time cost a tenth of a
        // 10,000-tag locator.)
        nearby.removeAll(keepingCapacity: true)
        for key in evidence.zones {
            if let index = zoneIndex(of: key) { nearby.append(index) }
        }
        if let current = state.hysteresis.current, current.floor != floor {
            // Changed floor: out of the old floor's zone and into the new one's at once.
            let change = state.hysteresis.changeFloor(position: position, zones: zones, among: nearby)
            move(tag, from: change.from, to: change.to, time: time, transitions: &transitions)
        } else if !held {
            if let current = state.hysteresis.current, !evidence.zones.contains(current),
                let index = zoneIndex(of: current)
            {
                nearby.append(index)
            }
            if let change = state.hysteresis.update(
                position: position,
                zones: zones,
                among: nearby,
                time: time,
                configuration: configuration
            ) {
                move(tag, from: change.from, to: change.to, time: time, transitions: &transitions)
            }
        }
        state.probability = evidence.probability(of: state.hysteresis.current)
        return Placement(
            zone: state.hysteresis.current, probability: state.probability,
            decisionDue: decisionDue(state.hysteresis))
    }

    /// Takes a tag's zone probabilities on a floor; returns the zone it is in afterwards and how likely that is. A
    /// tag whose zone is on another floor has changed floor (``ZoneHysteresis/changeFloor(evidence:configuration:)``);
    /// a `held` zone (another floor contests the tag's) sees no change decided.
    mutating func place(
        _ tag: TagIdentity,
        floor: UInt16,
        evidence: ZoneEvidence,
        held: Bool = false,
        time: Double,
        transitions: inout [ZoneTransition]
    ) -> Placement {
        var state = tagStates[tag] ?? TagZoneState()
        defer { tagStates[tag] = state }
        if let current = state.hysteresis.current, current.floor != floor {
            // Changed floor: out of the old floor's zone and into the new one's at once.
            let change = state.hysteresis.changeFloor(evidence: evidence, configuration: configuration)
            move(tag, from: change.from, to: change.to, time: time, transitions: &transitions)
        } else if !held,
            let change = state.hysteresis.update(evidence: evidence, time: time, configuration: configuration)
        {
            move(tag, from: change.from, to: change.to, time: time, transitions: &transitions)
        }
        state.probability = evidence.probability(of: state.hysteresis.current)
        return Placement(
            zone: state.hysteresis.current, probability: state.probability,
            decisionDue: decisionDue(state.hysteresis))
    }

    /// When a change challenging the tag's zone may be decided, if one is (``Placement/decisionDue``).
    func decisionDue(of tag: TagIdentity) -> Double? {
        tagStates[tag].flatMap { decisionDue($0.hysteresis) }
    }

    /// None for a tag whose first place is still being decided: nothing waits on it (occupancy is held back while a
    /// locator warms up, and a tag first heard enters its zone a dwell later either way), so its regular estimates
    /// decide it. A locator starting with 10,000 tags otherwise estimated every tag with every batch for a second.
    private func decisionDue(_ hysteresis: ZoneHysteresis) -> Double? {
        guard hysteresis.settled else { return nil }
        return hysteresis.decisionDue(configuration: configuration)
    }

    /// Takes a tag out of its zone at once (it timed out).
    mutating func leave(_ tag: TagIdentity, time: Double, transitions: inout [ZoneTransition]) {
        guard let left = tagStates[tag]?.hysteresis.leave() else { return }
        move(tag, from: left, to: nil, time: time, transitions: &transitions)
    }

    /// Drops what is kept of tags the engine no longer holds (they are in no zone): their state is unknown again
    /// until they are seen again.
    mutating func forget<Tags: Sequence<TagIdentity>>(_ tags: Tags) {
        for tag in tags {
            tagStates[tag] = nil
            everSeen.remove(tag)
        }
    }

    /// Marks each zone known or unknown by whether an online agent covers it.
    mutating func refreshStates(liveness: AgentLiveness, now: Double) {
        for zoneIndex in zones.indices {
            let state: ZoneState = liveness.covers(zone: zoneIndex, now: now) ? .known : .unknown
            if states[zoneIndex] != state {
                states[zoneIndex] = state
                knownSince[zoneIndex] = state == .known ? now : -.infinity
                changedZones.insert(zoneIndex)
            }
        }
    }

    /// The occupancy of every zone whose members or state changed since the last call, in map order.
    mutating func takeChanges() -> [Occupancy] {
        defer { changedZones.removeAll(keepingCapacity: true) }
        return changedZones.sorted().map(occupancy)
    }

    private mutating func move(
        _ tag: TagIdentity,
        from: ZoneKey?,
        to: ZoneKey?,
        time: Double,
        transitions: inout [ZoneTransition]
    ) {
        if let from, let index = zoneIndex(of: from) {
            members[index].remove(tag)
            changedZones.insert(index)
            transitions.append(ZoneTransition(time: time, tag: tag, zone: from, kind: .exit))
        }
        if let to, let index = zoneIndex(of: to) {
            members[index].insert(tag)
            changedZones.insert(index)
            transitions.append(ZoneTransition(time: time, tag: tag, zone: to, kind: .enter))
        }
    }

    // MARK: - Queries

    /// The zone a tag is in, if any.
    func zone(of tag: TagIdentity) -> ZoneKey? {
        tagStates[tag]?.hysteresis.current
    }

    /// Whether a zone's covering agents are all down, so that who is in it cannot be known.
    func isUnknown(_ zone: ZoneKey) -> Bool {
        zoneIndex(of: zone).map { states[$0] == .unknown } ?? false
    }

    /// Since when a zone's agents have been heard without a break that left it unknown; nil while it is unknown.
    func knownSince(_ zone: ZoneKey) -> Double? {
        zoneIndex(of: zone).flatMap { states[$0] == .known ? knownSince[$0] : nil }
    }

    /// Whether a zone's occupancy can be known now, without listing who is in it.
    func state(of zone: ZoneKey) -> ZoneState? {
        zoneIndex(of: zone).map { states[$0] }
    }

    /// Who is in a zone, and whether that can be known.
    func occupancy(of zone: ZoneKey) -> Occupancy? {
        zoneIndex(of: zone).map(occupancy)
    }

    /// The occupancy of every zone, in map order.
    var all: [Occupancy] { zones.indices.map(occupancy) }

    /// A tag's state for a zone: inside, outside, or unknown (never seen, or the zone's agents are down).
    func state(of tag: TagIdentity, in zone: ZoneKey) -> RegionState {
        guard let zoneIndex = zoneIndex(of: zone), states[zoneIndex] == .known else { return .unknown }
        guard everSeen.contains(tag) else { return .unknown }
        return tagStates[tag]?.hysteresis.current == zone ? .inside : .outside
    }

    private func occupancy(_ index: Int) -> Occupancy {
        let tags = members[index].tags
        return Occupancy(
            zone: zones[index].key, state: states[index], tags: tags,
            probabilities: tags.map { tagStates[$0]?.probability ?? 0 })
    }

    /// The index in ``zones`` of the zone with this key, if the map has one.
    private func zoneIndex(of key: ZoneKey) -> Int? {
        let packed = Self.packed(key)
        var low = 0
        var high = sortedKeys.count
        while low < high {
            let middle = (low + high) / 2
            if sortedKeys[middle] < packed { low = middle + 1 } else { high = middle }
        }
        return low < sortedKeys.count && sortedKeys[low] == packed ? indexOfSortedKey[low] : nil
    }

    private static func packed(_ key: ZoneKey) -> UInt32 { UInt32(key.floor) << 16 | UInt32(key.minor) }
}

/// A tag's zone decision, and how likely its last estimate made the zone it is in (or no zone).
private struct TagZoneState: Sendable {
    var hysteresis = ZoneHysteresis()
    var probability = 0.0
}

/// The zones, floor outlines and obstacles of a map, for the zone probabilities of a position: read-only, so the
/// workers of an update share it.
struct ZoneGeometry: Sendable {
    private let layoutByFloor: [UInt16: FloorZones]

    init(map: FloorMap) {
        let obstaclesByFloor = Dictionary(grouping: map.obstacles, by: \.floor).mapValues { $0.map(\.polygon) }
        layoutByFloor = Dictionary(
            map.floors.map { floor in
                (
                    floor.major,
                    FloorZones(
                        zones: map.zones(onFloor: floor.major), outline: floor.outline,
                        obstacles: obstaclesByFloor[floor.major] ?? [])
                )
            },
            uniquingKeysWith: { a, _ in a })
    }

    /// The probability mass per zone of a floor for a position known to `accuracy` metres RMS (the trilateration
    /// path): a Gaussian over the free floor, integrated over each zone (``ZoneEvidence``).
    func evidence(floor: UInt16, position: Point, accuracy: Double) -> ZoneEvidence {
        guard let layout = layoutByFloor[floor] else {
            return ZoneEvidence(position: position, accuracy: accuracy, zones: [], outline: Polygon([]))
        }
        return ZoneEvidence(position: position, accuracy: accuracy, floor: layout)
    }
}
