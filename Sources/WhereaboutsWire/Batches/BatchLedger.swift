/// The file form of a ``BatchDeduplicator``'s ledger, so that the batches one locator run took are known to the next.
///
/// Why: libmosquitto acknowledges a QoS 1 message before it hands it over, and a locator that stops before the
/// acknowledgement reaches the broker gets the batch again in its next run, with the same persistent session. Only
/// the ledger of the run that took it can tell.
///
/// This type only encodes and decodes bytes; the shell owns the file. Little-endian throughout:
///
/// ```
/// header "WBLEDGR" + version 1 (8 bytes) | agent count (UInt32)
/// per agent, least recently heard first:
///   id length (UInt8) | id (ASCII) | newest epoch (Int64) | highest seq (Int64) | missing (Int64)
///   run count (UInt32) | per run, oldest first: epoch (Int64) | first seq (Int64) | batches (UInt32)
/// CRC-32 of everything before it (UInt32)
/// ```
///
/// A run is batches of one epoch with consecutive seqs, as an agent sends them, so a ledger is a few dozen bytes an
/// agent in practice, and at most ``BatchDeduplicator/memory`` runs an agent whatever arrived.
///
/// Decoding is strict: anything but a ledger this encoder could have written (a bad checksum, a count beyond the
/// bytes or a deduplicator's memory, an invalid agent id, an agent or a batch listed twice, a run ahead of its
/// agent's newest epoch) is a ``BatchLedger/Error``, never a partial ledger: the caller starts with an empty one and
/// says why. Every count is checked against the bytes left before it is used, and the file against
/// ``maximumSize(maximumAgents:)`` before it is read.
public enum BatchLedger {
    /// The first 8 bytes of every ledger: "WBLEDGR" and the format version 1.
    public static let header: [UInt8] = Array("WBLEDGR".utf8) + [1]

    /// The largest ledger a deduplicator of `maximumAgents` agents can write, bytes: larger files are refused
    /// unread.
    public static func maximumSize(maximumAgents: Int = 1024) -> Int {
        let agent = 1 + 64 + 3 * 8 + 4 + BatchDeduplicator.memory * (8 + 8 + 4)
        return header.count + 4 + min(max(maximumAgents, 1), 1 << 20) * agent + 4
    }

    /// Why bytes are not a ledger.
    public enum Error: Swift.Error, Sendable, Equatable, CustomStringConvertible {
        /// The bytes do not begin with ``BatchLedger/header`` (another file, or another version of the format).
        case notALedger
        /// The bytes end before the ledger does.
        case truncated
        /// The checksum does not match: the file was damaged.
        case checksumMismatch
        /// The bytes are larger than any ledger (``BatchLedger/maximumSize(maximumAgents:)``).
        case tooLarge(Int)
        /// The ledger is well formed but says something no deduplicator could hold.
        case invalid(String)

        public var description: String {
            switch self {
            case .notALedger: "not a batch ledger (no WBLEDGR version 1 header)"
            case .truncated: "cut short"
            case .checksumMismatch: "damaged (its CRC-32 does not match)"
            case .tooLarge(let size): "\(size) bytes, larger than any ledger"
            case .invalid(let reason): "invalid: \(reason)"
            }
        }
    }

    // MARK: - Encoding

    /// The ledger's bytes.
    public static func encode(_ deduplicator: BatchDeduplicator) -> [UInt8] {
        encode(deduplicator.agentLedgers)
    }

    /// The bytes of a ledger listing `agents`, least recently heard first.
    public static func encode(_ agents: [BatchDeduplicator.AgentLedger]) -> [UInt8] {
        var bytes = header
        append(UInt64(agents.count), bytes: 4, to: &bytes)
        for agent in agents {
            let id = Array(agent.agent.rawValue.utf8)
            bytes.append(UInt8(clamping: id.count))
            bytes += id.prefix(Int(UInt8.max))
            append(agent.newestEpoch, to: &bytes)
            append(agent.highest, to: &bytes)
            append(agent.missing, to: &bytes)
            let runs = runs(of: agent.batches)
            append(UInt64(runs.count), bytes: 4, to: &bytes)
            for run in runs {
                append(run.first.epoch, to: &bytes)
                append(run.first.seq, to: &bytes)
                append(UInt64(run.count), bytes: 4, to: &bytes)
            }
        }
        var crc = CRC32()
        crc.update(bytes)
        append(UInt64(crc.value), bytes: 4, to: &bytes)
        return bytes
    }

    /// Consecutive seqs of one epoch, in order.
    private static func runs(of batches: [BatchDeduplicator.BatchKey]) -> [(
        first: BatchDeduplicator.BatchKey, count: Int
    )] {
        var runs: [(first: BatchDeduplicator.BatchKey, count: Int)] = []
        for key in batches {
            if let last = runs.last, last.first.epoch == key.epoch, last.count < Int(UInt32.max),
                case let next = last.first.seq.addingReportingOverflow(last.count), !next.overflow,
                next.partialValue == key.seq
            {
                runs[runs.count - 1].count += 1
            } else {
                runs.append((key, 1))
            }
        }
        return runs
    }

    // MARK: - The journal

    /// The journal's lines for batches taken: one `AGENT EPOCH SEQ SENT` line each. The shell appends them to the
    /// file beside the ledger as they are taken and empties it at each save of the ledger, so that a `kill -9` loses
    /// none of what the ledger knew: the ledger saved every few seconds alone made the next run count the batches
    /// taken since as missing (214 where 4 were lost).
    public static func journalLines(_ admissions: [BatchDeduplicator.Admission]) -> [UInt8] {
        var text = ""
        for admission in admissions {
            text += "\(admission.agent.rawValue) \(admission.epoch) \(admission.seq) \(admission.sent)\n"
        }
        return Array(text.utf8)
    }

    /// The batches a journal lists, in order. A line that is not whole (the last one, cut by a crash while it was
    /// written) or not valid ends the journal there; nothing after it is read.
    public static func journal(_ bytes: [UInt8]) -> [BatchDeduplicator.Admission] {
        var admissions: [BatchDeduplicator.Admission] = []
        var start = bytes.startIndex
        while let end = bytes[start...].firstIndex(of: UInt8(ascii: "\n")) {
            let fields = bytes[start..<end].split(separator: UInt8(ascii: " "), omittingEmptySubsequences: false)
            start = end + 1
            guard fields.count == 4, let agent = AgentID(String(decoding: fields[0], as: UTF8.self)),
                let epoch = Int(String(decoding: fields[1], as: UTF8.self)),
                let seq = Int(String(decoding: fields[2], as: UTF8.self)),
                let sent = Double(String(decoding: fields[3], as: UTF8.self)), sent.isFinite,
                (0...BatchDecoder.maximumSequence).contains(epoch), (0...BatchDecoder.maximumSequence).contains(seq)
            else { break }
            admissions.append(BatchDeduplicator.Admission(agent: agent, epoch: epoch, seq: seq, sent: sent))
        }
        return admissions
    }

    // MARK: - Decoding

    /// Reads a ledger into a deduplicator with the given bounds.
    ///
    /// - Throws: ``BatchLedger/Error`` when the bytes are not a whole, valid ledger (nothing of them is used).
    public static func decode(
        _ bytes: [UInt8], maximumAgents: Int = 1024, clockSkew: Double = 5
    ) throws(Error) -> BatchDeduplicator {
        BatchDeduplicator(
            restoring: try agents(in: bytes, maximumAgents: maximumAgents), maximumAgents: maximumAgents,
            clockSkew: clockSkew)
    }

    /// The agents a ledger lists, least recently heard first, checked.
    public static func agents(in bytes: [UInt8], maximumAgents: Int = 1024) throws(Error) -> [BatchDeduplicator
        .AgentLedger]
    {
        guard bytes.count <= maximumSize(maximumAgents: maximumAgents) else { throw .tooLarge(bytes.count) }
        guard bytes.count >= header.count, bytes[0..<header.count].elementsEqual(header) else {
            // A file cut inside its header is a torn ledger, anything else another file.
            throw !bytes.isEmpty && header.starts(with: bytes) ? .truncated : .notALedger
        }
        guard bytes.count >= header.count + 8 else { throw .truncated }
        let end = bytes.count - 4
        var crc = CRC32()
        crc.update(bytes[..<end])
        var stored: UInt32 = 0
        for index in 0..<4 { stored |= UInt32(bytes[end + index]) << (8 * UInt32(index)) }
        guard crc.value == stored else { throw .checksumMismatch }
        var reader = Reader(bytes: bytes[..<end], offset: header.count)
        // A reader with fewer agents keeps the most recently heard (the restore's bound), but no file lists more than
        // a default deduplicator holds: hundreds of thousands of agents, each with a full run of batches, fit in the
        // size bound and would take gigabytes to read before the restore cut them down.
        let agentCount = try reader.integer(bytes: 4)
        let agentLimit = max(maximumAgents, 1024)
        guard agentCount <= agentLimit else {
            throw .invalid("\(agentCount) agents, more than the \(agentLimit) a ledger remembers")
        }
        // Epochs and seqs as the batch decoder takes them, and a missing count that cannot overflow a sum over
        // every agent: a value outside would trap the deduplicator's arithmetic on the next batch, at every start.
        let numbers = 0...BatchDecoder.maximumSequence
        let missingLimit = 1 << 40
        var agents: [BatchDeduplicator.AgentLedger] = []
        var seenAgents: Set<AgentID> = []
        for _ in 0..<agentCount {
            let idLength = try reader.integer(bytes: 1)
            let idText = String(decoding: try reader.take(idLength), as: UTF8.self)
            guard let agent = AgentID(idText) else { throw .invalid("\"\(idText)\" is not an agent id") }
            guard seenAgents.insert(agent).inserted else { throw .invalid("agent \(agent) listed twice") }
            let newestEpoch = try reader.signed()
            let highest = try reader.signed()
            let missing = try reader.signed()
            guard numbers.contains(newestEpoch), numbers.contains(highest) else {
                throw .invalid("agent \(agent): epoch \(newestEpoch) or seq \(highest) out of range")
            }
            guard (0...missingLimit).contains(missing) else {
                throw .invalid("agent \(agent): \(missing) batches missing")
            }
            let runCount = try reader.integer(bytes: 4)
            guard runCount <= BatchDeduplicator.memory else {
                throw .invalid("agent \(agent): \(runCount) runs of batches, more than a ledger remembers")
            }
            var batches: [BatchDeduplicator.BatchKey] = []
            var seen: Set<BatchDeduplicator.BatchKey> = []
            for _ in 0..<runCount {
                let epoch = try reader.signed()
                let first = try reader.signed()
                let count = try reader.integer(bytes: 4)
                guard count >= 1, batches.count + count <= BatchDeduplicator.memory else {
                    throw .invalid("agent \(agent): a run of \(count) batches")
                }
                guard epoch <= newestEpoch else {
                    throw .invalid("agent \(agent): a batch of epoch \(epoch), after its newest \(newestEpoch)")
                }
                guard numbers.contains(epoch), numbers.contains(first), first + count - 1 <= numbers.upperBound else {
                    throw .invalid("agent \(agent): epoch \(epoch) or seqs from \(first) out of range")
                }
                for seq in first..<(first + count) {
                    let key = BatchDeduplicator.BatchKey(epoch: epoch, seq: seq)
                    guard seen.insert(key).inserted else {
                        throw .invalid("agent \(agent): batch \(epoch)/\(seq) listed twice")
                    }
                    batches.append(key)
                }
            }
            agents.append(
                BatchDeduplicator.AgentLedger(
                    agent: agent, newestEpoch: newestEpoch, highest: highest, missing: missing, batches: batches))
        }
        guard reader.offset == end else { throw .invalid("\(end - reader.offset) bytes after the last agent") }
        return agents
    }

    /// Reads little-endian integers off the front of the bytes, checking every length first.
    private struct Reader {
        let bytes: ArraySlice<UInt8>
        var offset: Int

        /// An unsigned integer of `count` bytes (at most 4), as an Int.
        mutating func integer(bytes count: Int) throws(Error) -> Int {
            Int(try next(count))
        }

        /// An Int64.
        mutating func signed() throws(Error) -> Int {
            Int(Int64(bitPattern: try next(8)))
        }

        mutating func take(_ count: Int) throws(Error) -> ArraySlice<UInt8> {
            guard count <= bytes.endIndex - offset else { throw .truncated }
            defer { offset += count }
            return bytes[offset..<(offset + count)]
        }

        private mutating func next(_ count: Int) throws(Error) -> UInt64 {
            guard count <= bytes.endIndex - offset else { throw .truncated }
            var value: UInt64 = 0
            for index in 0..<count { value |= UInt64(bytes[offset + index]) << (8 * UInt64(index)) }
            offset += count
            return value
        }
    }

    private static func append(_ value: Int, to bytes: inout [UInt8]) {
        append(UInt64(bitPattern: Int64(value)), bytes: 8, to: &bytes)
    }

    private static func append(_ value: UInt64, bytes count: Int, to bytes: inout [UInt8]) {
        for index in 0..<count { bytes.append(UInt8(truncatingIfNeeded: value >> (8 * UInt64(index)))) }
    }
}
