import Synchronization
import WhereaboutsCore

/// Tag identities read from the bytes of a batch. The beacon kinds, nearly every tag, are read straight from their
/// bytes (``TagIdentity/beacon(_:)``, a few dozen nanoseconds); the other kinds, whose parse goes through strings,
/// are parsed once and remembered: a site's agents name the same tags again and again.
///
/// Keyed by a hash of the bytes and checked against them, so a collision only costs a parse. Bounded: past
/// ``limit`` entries (or ``byteLimit`` bytes of text) it starts afresh, so a stream of ever new ids, hostile or not,
/// cannot grow it. Invalid texts are remembered too (as nil), so a bad tag repeated costs one parse.
///
/// An open-addressed table of 16-byte slots (the hash and where the entry is) over flat arrays of identities and of
/// the texts' bytes, rather than a `Dictionary` of entries that each held an array: at 10,000 tags every lookup
/// missed the cache, and the dictionary added a SipHash of the key, the entry's own array and its reference count.
final class TagIdentityCache: Sendable {
    /// The most identities remembered.
    static let limit = 65_536
    /// The most bytes of text remembered (ids are about 50 bytes; this is 64 a piece at the limit).
    static let byteLimit = 4 << 20

    private let table: Mutex<Table>

    /// A cache of at most `limit` identities (a test's small limit shows what the bound does).
    init(limit: Int = TagIdentityCache.limit) {
        table = Mutex(Table(limit: max(limit, 1)))
    }

    /// The identity these bytes name, as ``TagIdentity/init(wire:)`` reads them.
    func identity(_ bytes: UnsafeBufferPointer<UInt8>) -> TagIdentity? {
        // The beacon kinds are read straight from their bytes: faster than a lookup, whose table at 10,000 tags is
        // out of the cache (the live locator's decoding spent a third of its time in it). What that reading
        // accepts is short ASCII of `[A-Za-z0-9-]`, so the wire's own checks hold, and what it refuses the wire
        // refuses.
        if let beacon = TagIdentity.beacon(bytes) { return beacon }
        let hash = Self.hash(bytes)
        if let found = table.withLock({ $0.find(bytes, hash: hash) }) { return found }
        let identity = TagIdentity(wire: String(decoding: bytes, as: UTF8.self))
        table.withLock { $0.insert(bytes, hash: hash, identity: identity) }
        return identity
    }

    /// How many identities are remembered now.
    var count: Int { table.withLock { $0.identities.count } }

    private struct Table: Sendable {
        /// Where an entry is: its hash, and its index plus one (0 for an empty slot).
        struct Slot: Sendable {
            var hash: UInt64 = 0
            var entry: UInt32 = 0
        }

        let limit: Int
        /// A power of two, kept at least twice the entries, so that probes stay short.
        var slots = [Slot](repeating: Slot(), count: 1024)
        var identities: [TagIdentity?] = []
        /// Each entry's text: where it starts in ``text``; it ends where the next starts (or at the end).
        var starts: [Int] = []
        var text: [UInt8] = []

        init(limit: Int) { self.limit = limit }

        /// The slot holding `hash`, or the empty one where it would go. A slot holds one hash at most (texts with
        /// the same hash replace each other, as a collision only costs a parse), and the first slot tried comes from
        /// the process's seeded hasher: our hash of the text is not secret, and a radio or an agent that chose texts
        /// whose hashes start at one slot would otherwise make every lookup walk all of them.
        func slot(of hash: UInt64) -> Int {
            let mask = slots.count - 1
            var index = hash.hashValue & mask
            while slots[index].entry != 0, slots[index].hash != hash { index = (index + 1) & mask }
            return index
        }

        /// The remembered identity of these bytes: .some(nil) for a text remembered as invalid, nil when not there.
        func find(_ bytes: UnsafeBufferPointer<UInt8>, hash: UInt64) -> TagIdentity?? {
            let entry = Int(slots[slot(of: hash)].entry) - 1
            guard entry >= 0 else { return nil }
            let start = starts[entry]
            let end = entry + 1 < starts.count ? starts[entry + 1] : text.count
            guard end - start == bytes.count else { return nil }
            let same = text.withUnsafeBufferPointer {
                TagIdentityCache.same(UnsafeBufferPointer(rebasing: $0[start..<end]), bytes)
            }
            return same ? .some(identities[entry]) : nil
        }

        mutating func insert(_ bytes: UnsafeBufferPointer<UInt8>, hash: UInt64, identity: TagIdentity?) {
            // Two threads may parse the same new text at once; the second finds the first's entry.
            if find(bytes, hash: hash) != nil { return }
            if identities.count >= limit || text.count + bytes.count > TagIdentityCache.byteLimit {
                identities.removeAll(keepingCapacity: true)
                starts.removeAll(keepingCapacity: true)
                text.removeAll(keepingCapacity: true)
                for index in slots.indices { slots[index] = Slot() }
            }
            if 2 * (identities.count + 1) > slots.count {
                // Doubled, and every hash placed again.
                let old = slots
                slots = [Slot](repeating: Slot(), count: old.count * 2)
                for slot in old where slot.entry != 0 { slots[self.slot(of: slot.hash)] = slot }
            }
            identities.append(identity)
            starts.append(text.count)
            text.append(contentsOf: bytes)
            slots[slot(of: hash)] = Slot(hash: hash, entry: UInt32(identities.count))
        }
    }

    /// Whether two byte runs of the same length are equal, compared eight bytes at a time.
    static func same(_ first: UnsafeBufferPointer<UInt8>, _ second: UnsafeBufferPointer<UInt8>) -> Bool {
        let first = UnsafeRawBufferPointer(first)
        let second = UnsafeRawBufferPointer(second)
        var offset = 0
        while offset + 8 <= first.count {
            guard
                first.loadUnaligned(fromByteOffset: offset, as: UInt64.self)
                    == second.loadUnaligned(fromByteOffset: offset, as: UInt64.self)
            else { return false }
            offset += 8
        }
        while offset < first.count {
            guard first[offset] == second[offset] else { return false }
            offset += 1
        }
        return true
    }

    /// A 64-bit hash of the bytes, eight at a time (a tag id is 50-odd bytes): a multiply-xorshift per word, the
    /// length mixed in. Collisions only cost a parse, since entries are checked against their bytes.
    static func hash(_ bytes: UnsafeBufferPointer<UInt8>) -> UInt64 {
        var hash = 0x9E37_79B9_7F4A_7C15 ^ UInt64(bytes.count)
        let raw = UnsafeRawBufferPointer(bytes)
        var offset = 0
        while offset + 8 <= raw.count {
            hash = (hash ^ raw.loadUnaligned(fromByteOffset: offset, as: UInt64.self)) &* 0xBF58_476D_1CE4_E5B9
            hash ^= hash >> 31
            offset += 8
        }
        var tail: UInt64 = 0
        while offset < raw.count {
            tail = tail << 8 | UInt64(raw[offset])
            offset += 1
        }
        hash = (hash ^ tail) &* 0x94D0_49BB_1331_11EB
        return hash ^ (hash >> 29)
    }
}
