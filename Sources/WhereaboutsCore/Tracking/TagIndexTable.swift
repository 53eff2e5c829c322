/// Where the tracker holds each tag's state: a tag's identity to its index, in slots of 8 bytes.
///
/// Every reading the locator takes looks its tag up here. A `[TagIdentity: Int]` keeps 24-byte keys and the indexes
/// in two arrays; at 10,000 tags that is over 500 KB, and `perf annotate` put 78 % of its lookup on loading the key,
/// a cache miss per reading. Here a slot holds 32 bits of the identity's hash and the index, so a lookup reads
/// one 8-byte slot (256 KB of slots at 10,000 tags, which mostly stay in the cache), and the identity is confirmed from the
/// tag's own state, which the reading is about to update anyway.
///
/// The hash is the standard library's, seeded per process, as `Dictionary`'s is: identities come from the air, and a
/// sender must not be able to pick ones that all land in one run of slots. Open addressing with linear probing, at
/// most half full, so it never fills. Tags are only ever added one by one; the tracker rebuilds the table when it
/// removes any.
struct TagIndexTable: Sendable {
    /// 0 for an empty slot; otherwise the hash's top 32 bits, then the index plus one.
    private var slots: [UInt64]
    /// How many indexes it holds.
    private(set) var count = 0

    /// Empty, with room for `capacity` tags before it grows.
    init(capacity: Int = 0) {
        slots = Array(repeating: 0, count: Self.slotCount(for: capacity))
    }

    /// Maps each identity to its position in the sequence; the identities must be distinct.
    init(_ identities: some Collection<TagIdentity>) {
        self.init(capacity: identities.count)
        for (index, identity) in identities.enumerated() { insert(identity, at: index) }
    }

    /// The index of `tag`, if held. `isTag` says whether the tag held at an index is this one: two tags may share
    /// the 32 bits of hash that a slot keeps.
    @inline(__always)
    func index(of tag: TagIdentity, confirming isTag: (Int) -> Bool) -> Int? {
        index(from: firstProbe(fingerprint: Self.fingerprint(of: tag)), confirming: isTag)
    }

    /// Where the lookup of a tag with this fingerprint starts: the slot it looks at first, read, with its position.
    /// A lookup's first step, apart so that a batch's first steps can be taken together
    /// (``TagTracker/places(of:agentIndex:into:)``): at 10,000 tags the slot's load misses the cache, and the
    /// processor overlaps the misses of independent loads, not of a chain of steps.
    @inline(__always)
    func firstProbe(fingerprint: UInt64) -> Probe {
        let position = Int(truncatingIfNeeded: fingerprint) & (slots.count - 1)
        return Probe(fingerprint: fingerprint, position: position, slot: slots[position])
    }

    /// The index that the probe (``firstProbe(fingerprint:)``) leads to, if its tag is held: as ``index(of:confirming:)``.
    @inline(__always)
    func index(from probe: Probe, confirming isTag: (Int) -> Bool) -> Int? {
        let mask = slots.count - 1
        var position = probe.position
        var slot = probe.slot
        while true {
            if slot == 0 { return nil }
            if slot >> 32 == probe.fingerprint {
                let index = Int(truncatingIfNeeded: slot & 0xFFFF_FFFF) - 1
                if isTag(index) { return index }
            }
            position = (position + 1) & mask
            slot = slots[position]
        }
    }

    /// A lookup's first step (``firstProbe(fingerprint:)``).
    struct Probe {
        fileprivate let fingerprint: UInt64
        fileprivate let position: Int
        fileprivate let slot: UInt64
    }

    /// Adds `tag` at `index`; the tag must not be held already.
    mutating func insert(_ tag: TagIdentity, at index: Int) {
        precondition(index >= 0 && index < 0xFFFF_FFFF, "a tag index past 32 bits")
        if 2 * (count + 1) > slots.count {
            // Each slot keeps all the hash bits its position comes from (at most 32), so it moves without its tag.
            let old = slots
            slots = Array(repeating: 0, count: old.count * 2)
            for slot in old where slot != 0 { place(slot) }
        }
        place(Self.fingerprint(of: tag) << 32 | UInt64(index + 1))
        count += 1
    }

    /// Puts a slot's content in the first free slot from its home.
    private mutating func place(_ content: UInt64) {
        let mask = slots.count - 1
        var position = Int(truncatingIfNeeded: content >> 32) & mask
        while slots[position] != 0 { position = (position + 1) & mask }
        slots[position] = content
    }

    /// The 32 bits of the tag's hash that a slot keeps, and that say where it goes (a lookup looks for them:
    /// ``firstProbe(fingerprint:)``).
    @inline(__always)
    static func fingerprint(of tag: TagIdentity) -> UInt64 {
        let hash = UInt64(UInt(bitPattern: tag.hashValue))
        // Both halves, so that all 64 bits count.
        return (hash >> 32) ^ (hash & 0xFFFF_FFFF)
    }

    /// Slots for `capacity` tags at most half full: a power of two, at least 16.
    private static func slotCount(for capacity: Int) -> Int {
        var count = 16
        while count < 2 * capacity { count *= 2 }
        return count
    }
}
