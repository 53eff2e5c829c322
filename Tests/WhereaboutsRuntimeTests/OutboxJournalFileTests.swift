import CommandLineSupport
import Glibc
import Testing
import WhereaboutsCore
import WhereaboutsRuntime
import WhereaboutsSession
import WhereaboutsWire

/// Publishes one numbered batch per input on a journaled outbox (the agent's policy, small).
struct BatchPipeline: ServicePipeline {
    typealias Input = Int
    let topic: Topic
    let session: BrokerSession.Configuration

    init(capacity: Int) {
        guard let site = BeaconUUID("01020304-0506-0708-090a-0b0c0d0e0f10") else { preconditionFailure("bad UUID") }
        let topics = Topics(site: site)
        topic = topics.events
        session = .init(
            statusTopic: topics.locatorStatus, outbox: .untilAcknowledged(capacity: capacity, inFlightLimit: 8),
            journaled: true)
    }

    var subscriptions: [Subscription] { [] }
    func connected(at time: ServiceTime) -> [ServiceAction<Never>] { [] }
    func receive(topic: String, payload: [UInt8], at time: ServiceTime) -> [ServiceAction<Never>] { [] }
    func take(_ input: Int, at time: ServiceTime) -> [ServiceAction<Never>] {
        [.publish(Publication(topic: topic, payload: "{\"seq\":\(input)}", qos: .atLeastOnce, retain: false))]
    }
    func tick(at time: ServiceTime, outbox: Outbox) -> [ServiceAction<Never>] { [] }
    func stop(at time: ServiceTime) -> [ServiceAction<Never>] { [] }

    func restored(_ pending: OutboxJournal.Pending) -> Publication? {
        pending.topic == topic.name
            ? Publication(topic: topic, payload: pending.payload, qos: .atLeastOnce, retain: false) : nil
    }
}

/// A service run with its journal, driven by hand: inputs, the client's sends and acknowledgements.
struct JournaledService {
    var state: ServiceState<BatchPipeline>
    let journal: OutboxJournalFile
    var messageID = 0
    var reports: [OutboxJournalFile.Report] = []
    static let time = ServiceTime(now: 0, monotonic: 0)

    init(path: String, capacity: Int = 600, retryInterval: Double = 0) throws {
        state = ServiceState(pipeline: BatchPipeline(capacity: capacity))
        journal = try OutboxJournalFile(path: path, retryInterval: retryInterval)
        let pipeline = state.pipeline
        if let report = journal.restore(into: &state, with: { pipeline.restored($0) }) { reports.append(report) }
    }

    mutating func persist() {
        if let report = journal.record(
            state.takeOutboxChanges(), outbox: state.session.outbox, durable: !state.session.isConnected)
        {
            reports.append(report)
        }
    }

    mutating func take(_ seq: Int) {
        _ = state.take(seq, at: Self.time)
        send()
        persist()
    }

    mutating func connect() {
        _ = state.connected(at: Self.time)
        send()
        persist()
    }

    mutating func disconnect() {
        state.disconnected()
        journal.sync()
    }

    /// Acknowledges everything in flight, and what is sent next, until nothing is.
    mutating func acknowledgeAll() {
        while case let inFlight = state.session.outbox.held.compactMap(\.messageID), !inFlight.isEmpty {
            for id in inFlight { _ = state.acknowledged(messageID: id, success: true, at: Self.time) }
            send()
            persist()
        }
    }

    private mutating func send() {
        while let entry = state.nextToSend() {
            messageID += 1
            _ = state.sent(id: entry.id, result: .accepted(messageID: messageID), at: Self.time)
        }
    }

    var held: [String] {
        state.session.outbox.held.filter { !$0.isControl }.map(\.publication.payload)
    }
}

@Suite("Outbox journal file")
struct OutboxJournalFileTests {
    /// A fresh directory under /tmp.
    static func scratch() throws -> String {
        var template = Array("/tmp/whereabouts-journal-XXXXXX".utf8CString)
        let made = template.withUnsafeMutableBufferPointer { buffer in
            buffer.baseAddress.flatMap { mkdtemp($0) }.map { String(cString: $0) }
        }
        return try #require(made)
    }

    static func bytes(_ path: String) throws -> [UInt8] {
        try FileAccess.read(path)
    }

    static func payloads(_ range: Range<Int>) -> [String] { range.map { "{\"seq\":\($0)}" } }

    @Test("what was unacknowledged when the process ended comes back, in order, and only that")
    func survivesTheProcess() throws {
        let path = try Self.scratch() + "/a1.outbox"
        do {
            var service = try JournaledService(path: path)
            #expect(service.journal.restoredCount == 0)
            service.connect()
            for seq in 0..<5 { service.take(seq) }
            service.acknowledgeAll()
            service.disconnect()
            for seq in 5..<12 { service.take(seq) }
            #expect(service.held == Self.payloads(5..<12))
            #expect(service.reports.isEmpty)
        }  // the journal closes: as a kill -9 would leave it (each change was one write)
        var service = try JournaledService(path: path)
        #expect(service.journal.restoredCount == 7)
        #expect(service.journal.notes.isEmpty)
        #expect(service.held == Self.payloads(5..<12))
        // The file was rewritten to hold just these.
        #expect(OutboxJournal.decode(try Self.bytes(path)).records.count == 7)
        // Sent first after the reconnect, before what this run takes.
        service.take(100)
        service.connect()
        service.acknowledgeAll()
        #expect(service.held.isEmpty)
        #expect(service.state.session.outbox.statistics.acknowledged == 8)
        let reopened = try OutboxJournalFile(path: path)
        #expect(reopened.loaded.isEmpty)
    }

    @Test("a stop while the broker is away gives up waiting, but what it held stays in the journal for the next start")
    func stopDuringOutage() throws {
        let path = try Self.scratch() + "/a1.outbox"
        do {
            var service = try JournaledService(path: path)
            for seq in 0..<4 { service.take(seq) }
            _ = service.state.signal(at: JournaledService.time)
            let late = ServiceTime(now: 100, monotonic: 100)
            let commands = service.state.tick(at: late)
            #expect(commands.contains(.disconnect))
            #expect(service.state.session.isClosing)
            service.persist()
        }
        let service = try JournaledService(path: path)
        #expect(service.held == Self.payloads(0..<4))
    }

    @Test("a torn last record is cut off and named; the records before it survive")
    func tornTail() throws {
        let path = try Self.scratch() + "/a1.outbox"
        do {
            var service = try JournaledService(path: path)
            for seq in 0..<3 { service.take(seq) }
        }
        // A crash in the middle of the fourth write.
        let whole = try Self.bytes(path)
        let fourth = OutboxJournal.encode(
            .held(id: 3, topic: "t", payload: "{\"seq\":3}", qos: .atLeastOnce, retain: false))
        try FileAccess.write(whole + fourth.prefix(fourth.count - 4), to: path)
        let service = try JournaledService(path: path)
        #expect(service.held == Self.payloads(0..<3))
        #expect(service.journal.notes.count == 1)
        #expect(service.journal.notes.first?.contains(path) == true)
        #expect(service.journal.notes.first?.contains("torn") == true)
        let repaired = OutboxJournal.decode(try Self.bytes(path))
        #expect(repaired.damage.isEmpty)
        #expect(repaired.pending.map(\.payload) == Self.payloads(0..<3))
    }

    @Test("a corrupt record in the middle is skipped and named; the others survive")
    func corruptRecord() throws {
        let path = try Self.scratch() + "/a1.outbox"
        do {
            var service = try JournaledService(path: path)
            for seq in 0..<4 { service.take(seq) }
        }
        var bytes = try Self.bytes(path)
        // The first record's length: its frame (10 bytes) and its body (the UInt32 after the marker).
        let header = OutboxJournal.header.count
        let recordLength = 10 + Int(bytes[header + 2]) + Int(bytes[header + 3]) << 8
        bytes[OutboxJournal.header.count + recordLength + 20] ^= 0x40  // inside the second record
        try FileAccess.write(bytes, to: path)
        let service = try JournaledService(path: path)
        #expect(service.held == ["{\"seq\":0}", "{\"seq\":2}", "{\"seq\":3}"])
        #expect(service.journal.notes.contains { $0.contains(path) && $0.contains("corrupt") })
    }

    @Test("while the broker answers, the file is cut back whenever it passes its size and holds nothing")
    func boundedWhileConnected() throws {
        let path = try Self.scratch() + "/a1.outbox"
        var service = try JournaledService(path: path)
        service.connect()
        var largest = 0
        for seq in 0..<5_000 {
            service.take(seq)
            service.acknowledgeAll()
            largest = max(largest, try Self.bytes(path).count)
        }
        #expect(largest <= OutboxJournalFile.truncateSize + 200)
        #expect(try Self.bytes(path).count <= OutboxJournalFile.truncateSize + 200)
        #expect(service.reports.isEmpty)
    }

    @Test(
        "through a long outage the outbox keeps its capacity, the oldest dropped and counted, and the file stays bounded"
    )
    func boundedThroughAnOutage() throws {
        let path = try Self.scratch() + "/a1.outbox"
        let capacity = 50
        do {
            var service = try JournaledService(path: path, capacity: capacity)
            var largestRecords = 0
            for seq in 0..<1_200 {
                service.take(seq)
                if seq % 100 == 0 {
                    largestRecords = max(largestRecords, OutboxJournal.decode(try Self.bytes(path)).records.count)
                }
            }
            #expect(service.state.session.outbox.statistics.dropped == 1_200 - capacity)
            #expect(largestRecords <= 3 * capacity + OutboxJournalFile.compactionSlack + 2)
            #expect(largestRecords > capacity)  // it did grow, and was compacted
        }
        let service = try JournaledService(path: path, capacity: capacity)
        #expect(service.held == Self.payloads((1_200 - capacity)..<1_200))
    }

    @Test("a restart with a smaller outbox keeps the newest it can hold and says how many were dropped")
    func smallerCapacity() throws {
        let path = try Self.scratch() + "/a1.outbox"
        do {
            var service = try JournaledService(path: path, capacity: 10)
            for seq in 0..<10 { service.take(seq) }
        }
        let service = try JournaledService(path: path, capacity: 4)
        #expect(service.held == Self.payloads(6..<10))
        #expect(service.state.session.outbox.statistics.dropped == 6)
        #expect(service.journal.notes.contains { $0.contains("6 oldest") && $0.contains(path) })
        #expect(OutboxJournal.decode(try Self.bytes(path)).pending.count == 4)
    }

    @Test("a file that is not a journal is moved aside, not overwritten, and a new journal begun")
    func foreignFile() throws {
        let directory = try Self.scratch()
        let path = directory + "/a1.outbox"
        try FileAccess.write(Array("WHEREABOUTS_ID=hall-1\n".utf8), to: path)
        var service = try JournaledService(path: path)
        #expect(service.held.isEmpty)
        #expect(service.journal.notes.contains { $0.contains(path) && $0.contains("not an outbox journal") })
        #expect(try Self.bytes(path + ".unreadable") == Array("WHEREABOUTS_ID=hall-1\n".utf8))
        service.take(1)
        #expect(OutboxJournal.decode(try Self.bytes(path)).pending.map(\.payload) == Self.payloads(1..<2))
    }

    @Test("a state directory that cannot be made, or a journal that is not a file, is an error naming it")
    func unusablePaths() throws {
        let directory = try Self.scratch()
        try FileAccess.write(Array("x".utf8), to: directory + "/file")
        #expect {
            _ = try OutboxJournalFile(path: directory + "/file/state/a1.outbox")
        } throws: { error in
            "\(error)".contains(directory + "/file/state") && "\(error)".contains("Not a directory")
        }
        #expect(mkdir(directory + "/a1.outbox", 0o700) == 0)
        #expect {
            _ = try OutboxJournalFile(path: directory + "/a1.outbox")
        } throws: { error in
            "\(error)".contains(directory + "/a1.outbox") && "\(error)".contains("not a regular file")
        }
    }

    @Test(
        "a state directory without permission is an error naming the journal",
        .enabled(if: geteuid() != 0, "root reads and writes through any permission"))
    func noPermission() throws {
        let directory = try Self.scratch()
        #expect(chmod(directory, 0o500) == 0)
        defer { chmod(directory, 0o700) }
        #expect {
            _ = try JournaledService(path: directory + "/a1.outbox")
        } throws: { error in
            "\(error)".contains(directory + "/a1.outbox") && "\(error)".contains("Permission denied")
        }
    }

    @Test("a journal that cannot be written is reported once; the service runs on, and the file is rewritten later")
    func writeFailureRecovers() throws {
        let path = try Self.scratch() + "/a1.outbox"
        var service = try JournaledService(path: path, capacity: 10)
        // A directory where the compaction writes its temporary file: every rewrite fails, as on a full disk.
        #expect(mkdir(path + ".tmp", 0o700) == 0)
        var seq = 0
        while service.reports.isEmpty, seq < 2_000 {
            service.take(seq)
            seq += 1
        }
        #expect(service.reports.count == 1)
        #expect(service.reports.first?.isFailure == true)
        #expect(service.reports.first?.message.contains(path + ".tmp") == true)
        for _ in 0..<20 {
            service.take(seq)
            seq += 1
        }
        #expect(service.reports.count == 1, "a failing journal is reported once, not at every batch")
        #expect(service.held == Self.payloads((seq - 10)..<seq), "the outbox runs on in memory")
        #expect(rmdir(path + ".tmp") == 0)
        service.take(seq)
        seq += 1
        #expect(service.reports.count == 2)
        #expect(service.reports.last?.isFailure == false)
        #expect(OutboxJournal.decode(try Self.bytes(path)).pending.map(\.payload) == Self.payloads((seq - 10)..<seq))
    }

    @Test("a restart whose journal cannot be rewritten goes on from memory with what it held, and journals later")
    func restartOnFailingJournal() throws {
        let path = try Self.scratch() + "/a1.outbox"
        do {
            var service = try JournaledService(path: path)
            for seq in 0..<5 { service.take(seq) }
        }
        // Every rewrite now fails, as on a full disk: before, the restart threw (and the agent exited 1).
        #expect(mkdir(path + ".tmp", 0o700) == 0)
        var service = try JournaledService(path: path)
        #expect(service.reports.count == 1)
        #expect(service.reports.first?.isFailure == true)
        #expect(service.reports.first?.message.contains("the outbox runs on in memory") == true)
        #expect(!service.journal.isWritable)
        #expect(service.held == Self.payloads(0..<5), "what the last run left is queued all the same")
        service.take(5)
        #expect(service.reports.count == 1, "still failing: said once")
        service.connect()
        service.acknowledgeAll()
        #expect(service.held.isEmpty)
        // The file still holds the last run's batches: a crash now would send them again, and duplicates are dropped.
        #expect(OutboxJournal.decode(try Self.bytes(path)).pending.map(\.payload) == Self.payloads(0..<5))
        #expect(rmdir(path + ".tmp") == 0)
        service.disconnect()
        service.take(6)
        #expect(service.reports.count == 2)
        #expect(service.reports.last?.isFailure == false)
        #expect(service.journal.isWritable)
        #expect(OutboxJournal.decode(try Self.bytes(path)).pending.map(\.payload) == Self.payloads(6..<7))
    }

    @Test("a failing journal is tried again at most once a retry interval, however many changes come")
    func retryInterval() throws {
        let path = try Self.scratch() + "/a1.outbox"
        #expect(mkdir(path + ".tmp", 0o700) == 0)
        var service = try JournaledService(path: path, retryInterval: 3600)
        #expect(service.reports.map(\.isFailure) == [true])
        #expect(rmdir(path + ".tmp") == 0)
        for seq in 0..<50 { service.take(seq) }
        #expect(service.reports.count == 1, "not tried again within the hour")
        #expect(!service.journal.isWritable)
        #expect(service.held == Self.payloads(0..<50))
    }
}
