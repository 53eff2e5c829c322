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
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in bytes { hash = (hash ^ UInt64(byte)) &* 0x0100_0000_01b3 }
        if let found = entries.withLock({ $0[hash] }), found.bytes.elementsEqual(bytes) { return found.identity }
        let identity = TagIdentity(wire: String(decoding: bytes, as: UTF8.self))
        entries.withLock { entries in
            if entries.count >= Self.limit { entries.removeAll(keepingCapacity: true) }
            entries[hash] = Entry(bytes: Array(bytes), identity: identity)
        }
        return identity
    }
}
