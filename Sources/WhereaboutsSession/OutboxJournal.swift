public import WhereaboutsWire

/// The on-disk form of an ``Outbox``'s service publications: an append-only journal of records, each checked by a
/// CRC-32, so that a service restarted after a crash sends again what the broker had not acknowledged.
///
/// This type only encodes and decodes bytes; a shell owns the file (`OutboxJournalFile` in `WhereaboutsRuntime`).
///
/// The file is a header (``header``, 8 bytes) and then records:
///
/// ```
/// marker 0x57 0xB1 | body length (UInt32 LE) | CRC-32 of the length and the body (UInt32 LE) | body
/// body: kind (1 held, 2 released) | entry id (Int64 LE) | held only: qos, retain, topic length (UInt16 LE),
///       topic (UTF-8), payload (UTF-8, the rest)
/// ```
///
/// A record whose CRC does not match, or that does not fit, is damage: decoding skips to the next marker that starts
/// a record with a matching CRC (a bit flip costs that record, not the rest), and damage at the very end with no
/// record after it is a torn tail (a crash in the middle of a write). Decoding never fails: every byte is either in a
/// record or in a reported ``Damage``.
public enum OutboxJournal {
    /// The first 8 bytes of every journal: "WBOUTBX" and the format version 1.
    public static let header: [UInt8] = Array("WBOUTBX".utf8) + [1]
    /// The bytes that begin every record.
    public static let marker: [UInt8] = [0x57, 0xB1]
    /// The largest body a record may have (a corrupt length must not make a reader take the rest of the file).
    public static let maximumBody = 16 << 20
    /// Bytes of a record before its body: marker, length, CRC.
    static let frame = 10

    /// One record of the journal.
    public enum Record: Sendable, Equatable {
        /// The outbox took a publication as entry `id`.
        case held(id: Int, topic: String, payload: String, qos: QoS, retain: Bool)
        /// Entry `id` left the outbox: acknowledged, refused, or dropped when the outbox was full.
        case released(id: Int)
    }

    /// Bytes that could not be read as records.
    public struct Damage: Sendable, Equatable, CustomStringConvertible {
        /// What kind of damage.
        public enum Kind: Sendable, Equatable {
            /// The end of the file holds part of a record: a write was cut short.
            case tornTail
            /// Bytes in the middle that are no record (a flipped bit, a bad length); later records were read.
            case corrupt
        }

        /// Where the damage starts, bytes from the start of the file.
        public var offset: Int
        /// How many bytes were skipped.
        public var length: Int
        /// What kind.
        public var kind: Kind

        public init(offset: Int, length: Int, kind: Kind) {
            self.offset = offset
            self.length = length
            self.kind = kind
        }

        public var description: String {
            switch kind {
            case .tornTail: "a torn last record (\(length) bytes at offset \(offset)), cut off"
            case .corrupt: "\(length) unreadable bytes at offset \(offset) (a corrupt record), skipped"
            }
        }
    }

    /// A publication the journal still holds: taken and not released.
    public struct Pending: Sendable, Equatable {
        /// Its entry id in the run that wrote it.
        public var id: Int
        /// The topic name.
        public var topic: String
        /// The payload.
        public var payload: String
        /// MQTT quality of service.
        public var qos: QoS
        /// Whether it was retained.
        public var retain: Bool

        public init(id: Int, topic: String, payload: String, qos: QoS, retain: Bool) {
            self.id = id
            self.topic = topic
            self.payload = payload
            self.qos = qos
            self.retain = retain
        }
    }

    /// What a journal's bytes hold.
    public struct Contents: Sendable, Equatable {
        /// Whether the bytes begin with the journal's header (or are empty, or a torn header: a new file).
        public var isJournal: Bool
        /// The readable records, in file order.
        public var records: [Record]
        /// What could not be read, in file order.
        public var damage: [Damage]
        /// The length of the readable prefix: where a torn tail starts, or the whole length.
        public var validLength: Int

        public init(isJournal: Bool, records: [Record], damage: [Damage], validLength: Int) {
            self.isJournal = isJournal
            self.records = records
            self.damage = damage
            self.validLength = validLength
        }

        /// What was held and not released, in the order it was taken.
        public var pending: [Pending] {
            var order: [Int] = []
            var held: [Int: Pending] = [:]
            for record in records {
                switch record {
                case .held(let id, let topic, let payload, let qos, let retain):
                    if held[id] == nil { order.append(id) }
                    held[id] = Pending(id: id, topic: topic, payload: payload, qos: qos, retain: retain)
                case .released(let id):
                    held[id] = nil
                }
            }
            return order.compactMap { held[$0] }
        }
    }

    // MARK: - Encoding

    /// The bytes of one record.
    public static func encode(_ record: Record) -> [UInt8] {
        var body: [UInt8] = []
        switch record {
        case .held(let id, let topic, let payload, let qos, let retain):
            let topicBytes = Array(topic.utf8.prefix(Int(UInt16.max)))
            body.reserveCapacity(13 + topicBytes.count + payload.utf8.count)
            body.append(1)
            appendLittleEndian(UInt64(bitPattern: Int64(id)), bytes: 8, to: &body)
            body.append(qos.rawValue)
            body.append(retain ? 1 : 0)
            appendLittleEndian(UInt64(topicBytes.count), bytes: 2, to: &body)
            body += topicBytes
            body += payload.utf8
        case .released(let id):
            body.append(2)
            appendLittleEndian(UInt64(bitPattern: Int64(id)), bytes: 8, to: &body)
        }
        var length: [UInt8] = []
        appendLittleEndian(UInt64(body.count), bytes: 4, to: &length)
        var crc = CRC32()
        crc.update(length)
        crc.update(body)
        var bytes = marker + length
        appendLittleEndian(UInt64(crc.value), bytes: 4, to: &bytes)
        return bytes + body
    }

    /// A whole journal holding `pending` (a compaction): the header, then one held record each.
    public static func file(holding pending: [Pending]) -> [UInt8] {
        var bytes = header
        for entry in pending {
            bytes += encode(
                .held(id: entry.id, topic: entry.topic, payload: entry.payload, qos: entry.qos, retain: entry.retain))
        }
        return bytes
    }

    // MARK: - Decoding

    /// Reads a journal's bytes; never fails (see ``Contents``).
    public static func decode(_ bytes: [UInt8]) -> Contents {
        // An empty file, or one cut inside its header, is a journal that never got a record.
        if bytes.count < header.count {
            let isTornHeader = bytes.elementsEqual(header.prefix(bytes.count))
            return Contents(
                isJournal: isTornHeader, records: [],
                damage: bytes.isEmpty || !isTornHeader ? [] : [Damage(offset: 0, length: bytes.count, kind: .tornTail)],
                validLength: 0)
        }
        guard bytes[0..<header.count].elementsEqual(header) else {
            return Contents(isJournal: false, records: [], damage: [], validLength: 0)
        }
        var contents = Contents(isJournal: true, records: [], damage: [], validLength: bytes.count)
        var offset = header.count
        while offset < bytes.count {
            if let (record, end) = record(in: bytes, at: offset) {
                contents.records.append(record)
                offset = end
                continue
            }
            // Damage: find the next marker that starts a good record.
            var next = offset + 1
            var found: Int?
            while next + frame <= bytes.count {
                if bytes[next] == marker[0], bytes[next + 1] == marker[1], record(in: bytes, at: next) != nil {
                    found = next
                    break
                }
                next += 1
            }
            if let found {
                contents.damage.append(Damage(offset: offset, length: found - offset, kind: .corrupt))
                offset = found
            } else {
                contents.damage.append(Damage(offset: offset, length: bytes.count - offset, kind: .tornTail))
                contents.validLength = offset
                break
            }
        }
        return contents
    }

    /// The record at `offset` and where it ends, if one with a matching CRC is there.
    private static func record(in bytes: [UInt8], at offset: Int) -> (Record, Int)? {
        guard offset + frame <= bytes.count, bytes[offset] == marker[0], bytes[offset + 1] == marker[1] else {
            return nil
        }
        let length = Int(littleEndian(bytes, at: offset + 2, bytes: 4))
        let start = offset + frame
        guard length >= 9, length <= maximumBody, length <= bytes.count - start else { return nil }
        var crc = CRC32()
        crc.update(bytes[(offset + 2)..<(offset + 6)])
        crc.update(bytes[start..<(start + length)])
        guard crc.value == UInt32(littleEndian(bytes, at: offset + 6, bytes: 4)) else { return nil }
        let body = bytes[start..<(start + length)]
        let id = Int(Int64(bitPattern: littleEndian(bytes, at: start + 1, bytes: 8)))
        switch body[start] {
        case 1:
            guard length >= 13 else { return nil }
            // Read as leniently as `retain`: any level but 0 was always sent at least once.
            let qos: QoS = body[start + 9] == 0 ? .atMostOnce : .atLeastOnce
            let retain = body[start + 10] != 0
            let topicLength = Int(littleEndian(bytes, at: start + 11, bytes: 2))
            guard 13 + topicLength <= length else { return nil }
            let topicStart = start + 13
            let topic = String(decoding: bytes[topicStart..<(topicStart + topicLength)], as: UTF8.self)
            let payload = String(decoding: bytes[(topicStart + topicLength)..<(start + length)], as: UTF8.self)
            return (.held(id: id, topic: topic, payload: payload, qos: qos, retain: retain), start + length)
        case 2:
            guard length == 9 else { return nil }
            return (.released(id: id), start + length)
        default:
            return nil
        }
    }

    private static func appendLittleEndian(_ value: UInt64, bytes count: Int, to bytes: inout [UInt8]) {
        for index in 0..<count { bytes.append(UInt8(truncatingIfNeeded: value >> (8 * UInt64(index)))) }
    }

    private static func littleEndian(_ bytes: [UInt8], at offset: Int, bytes count: Int) -> UInt64 {
        var value: UInt64 = 0
        for index in 0..<count { value |= UInt64(bytes[offset + index]) << (8 * UInt64(index)) }
        return value
    }
}
