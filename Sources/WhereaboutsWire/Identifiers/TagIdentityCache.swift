import Synchronization
import WhereaboutsCore

/// Tag identities parsed from the bytes of a batch, remembered: a site's agents name the same few thousand tags
/// again and again, and parsing the text is most of a reading's decoding cost.
///
/// Keyed by a hash of the bytes and checked against them, so a collision only costs a parse. Bounded: past
/// ``limit`` entries it starts afresh (a stream of ever new ids, hostile or not, cannot grow it). Invalid texts are
/// remembered too (as nil), so a bad tag repeated costs one parse.
final class TagIdentityCache: Sendable {
    /// The most identities remembered.
    static let limit = 65_536

    private struct Entry: Sendable {
        var bytes: [UInt8]
        var identity: TagIdentity?
    }

    private let entries = Mutex<[UInt64: Entry]>([:])

    /// The identity these bytes name, as ``TagIdentity/init(wire:)`` reads them.
    func identity(_ bytes: UnsafeBufferPointer<UInt8>) -> TagIdentity? {
        let hash = Self.hash(bytes)
        let found = entries.withLock { entries -> TagIdentity?? in
            // Compared under the lock, with one lookup; nothing is copied out of the mutex but the identity.
            guard let entry = entries[hash], entry.bytes.count == bytes.count else { return nil }
            let same = entry.bytes.withUnsafeBufferPointer { Self.same($0, bytes) }
            return same ? .some(entry.identity) : nil
        }
        if let found { return found }
        let identity = TagIdentity(wire: String(decoding: bytes, as: UTF8.self))
        entries.withLock { entries in
            if entries.count >= Self.limit { entries.removeAll(keepingCapacity: true) }
            entries[hash] = Entry(bytes: Array(bytes), identity: identity)
        }
        return identity
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
