public import CommandLineSupport
public import WhereaboutsSession
public import WhereaboutsWire

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// The file behind an ``OutboxJournal``: the service's unacknowledged publications, kept so that a restart (after a
/// crash, `kill -9`, a power cut) sends them again.
///
/// Writing: every change is appended at once with one `write(2)` per input, so a process that dies loses nothing
/// it had taken (the kernel holds the bytes). `fsync` is for power cuts: a publication taken while the broker is
/// unreachable is synced at once (it will wait there, maybe for hours), and what was in flight is synced when the
/// connection drops; a publication taken while connected is acknowledged within milliseconds and is not synced on
/// its own, and releases are never synced (a lost release only means a duplicate the other side drops). On a board's
/// SD card that is about one sync a second during an outage and none while the broker answers.
///
/// Bounded: when everything is released and the file passed ``truncateSize``, it is cut back to its header; when
/// released records outnumber the held ones (twice, plus ``compactionSlack``), the file is rewritten with only the
/// held ones (a temporary file, synced, renamed over it). So it holds at most three times the outbox's capacity
/// plus ``compactionSlack`` records.
///
/// Bad files are not fatal: a torn last record is cut off and a corrupt one skipped (each said in ``notes``), and a
/// file that is not a journal is moved aside to `PATH.unreadable` and a new one begun. A write that fails (a full
/// disk) is reported once, at start too (a restart on a full disk must not crash-loop); the service runs on from
/// memory, and the first change ``retryInterval`` after a failure rewrites the whole file from the outbox, which
/// repairs it once there is room.
public final class OutboxJournalFile {
    /// Released records tolerated beyond twice the held ones before a rewrite.
    public static let compactionSlack = 512
    /// Size past which a file holding nothing is cut back to its header, bytes.
    public static let truncateSize = 64 << 10

    /// The journal's path.
    public let path: String
    /// What the file held when opened, until ``restore(into:with:)`` hands it to the outbox.
    public private(set) var loaded: [OutboxJournal.Pending]
    /// How many publications ``restore(into:with:)`` queued again.
    public private(set) var restoredCount = 0
    /// Warnings about the file as found (damage repaired, a foreign file moved aside), one a line, naming it.
    public private(set) var notes: [String] = []
    /// The least time between two attempts to rewrite a failing journal, seconds: each one encodes everything held,
    /// which during a broker outage on a full disk may be hundreds of batches.
    public let retryInterval: Double

    private var descriptor: Int32 = -1
    /// Held records in the file not released.
    private var live: Set<Int> = []
    private var records = 0
    private var size = 0
    private var unsynced = false
    /// A write failed: the file's tail is unknown until the next full rewrite succeeds.
    private var failing = false
    /// When writing last failed or was last tried again, on the monotonic clock.
    private var lastAttempt = -Double.infinity

    /// Opens the journal at `path` (the directory is created if missing) and reads what it holds.
    ///
    /// - Throws: ``RuntimeError`` naming the path when the directory or the file cannot be made or read (no
    ///   permission, not a directory). A directory that cannot be made for want of space is not thrown: the journal
    ///   starts failing, and ``restore(into:with:)`` says so.
    public init(path: String, retryInterval: Double = 1) throws(RuntimeError) {
        self.path = path
        self.retryInterval = retryInterval
        loaded = []
        if let (error, code) = Self.makeDirectory(of: path) {
            guard code == ENOSPC || code == EDQUOT else { throw error }
            notes.append("\(error.message): the journal waits for room")
            return
        }
        let bytes = try Self.read(path)
        let contents = OutboxJournal.decode(bytes)
        if !contents.isJournal {
            let aside = path + ".unreadable"
            guard rename(path, aside) == 0 else {
                throw RuntimeError(
                    "\(path) is not an outbox journal, and cannot be moved aside: \(FileAccess.systemMessage())")
            }
            notes.append("\(path) is not an outbox journal: moved to \(aside), starting an empty one")
            return
        }
        for damage in contents.damage { notes.append("\(path): \(damage)") }
        loaded = contents.pending
    }

    deinit {
        if descriptor >= 0 { close(descriptor) }
    }

    /// Queues what the file held in the service's outbox (through `publication`, which may refuse an entry: said in
    /// ``notes``), then rewrites the file to hold exactly what the outbox now holds, and opens it for appending.
    ///
    /// Returns a failure report when the file cannot be rewritten (a full disk): what it held is queued all the same,
    /// the service runs from memory, and a later change tries again (``record(_:outbox:durable:)``). The file is
    /// left as it was, so a crash before then sends its batches once more (the other side drops duplicates).
    @discardableResult
    public func restore<Pipeline: ServicePipeline>(
        into state: inout ServiceState<Pipeline>, with publication: (OutboxJournal.Pending) -> Publication?
    ) -> Report? {
        var restored: [Publication] = []
        var foreign = 0
        for pending in loaded {
            if let value = publication(pending) { restored.append(value) } else { foreign += 1 }
        }
        loaded = []
        restoredCount = restored.count
        if foreign > 0 {
            notes.append("\(path): \(foreign) messages for another topic (the id or site changed) left out")
        }
        let droppedBefore = state.session.outbox.statistics.dropped
        state.restore(restored)
        let dropped = state.session.outbox.statistics.dropped - droppedBefore
        if dropped > 0 { notes.append("\(path): \(dropped) oldest messages dropped: more than the outbox holds") }
        _ = state.takeOutboxChanges()
        do {
            try rewrite(holding: state.session.outbox)
            return nil
        } catch {
            startFailing()
            return Report(isFailure: true, message: Self.failureMessage(error))
        }
    }

    /// Whether the journal keeps the outbox on disk now: false while writing fails.
    public var isWritable: Bool { !failing }

    /// What a ``record(_:outbox:durable:)`` has to say, for the log.
    public struct Report: Sendable, Equatable {
        /// Whether writing failed (else it works again after failing).
        public var isFailure: Bool
        /// The line, naming the file.
        public var message: String
    }

    /// Appends the outbox's changes; syncs them when `durable` (the broker is unreachable). Compacts as needed.
    /// Reports when writing starts or stops failing; nil otherwise.
    public func record(_ changes: [Outbox.Change], outbox: Outbox, durable: Bool) -> Report? {
        // A failing journal retries with the next change, not at every tick; it may never have opened its file.
        guard descriptor >= 0 || failing, !changes.isEmpty else { return nil }
        if failing {
            let now = WallClock.monotonic()
            guard now - lastAttempt >= retryInterval else { return nil }
            lastAttempt = now
            do {
                try rewrite(holding: outbox)
                failing = false
                return Report(
                    isFailure: false, message: "\(path): writable again, rewritten with the \(live.count) messages held"
                )
            } catch {
                return nil
            }
        }
        var bytes: [UInt8] = []
        var holds = false
        for change in changes {
            switch change {
            case .held(let entry):
                let publication = entry.publication
                bytes += OutboxJournal.encode(
                    .held(
                        id: entry.id, topic: publication.topic.name, payload: publication.payload,
                        qos: publication.qos, retain: publication.retain))
                live.insert(entry.id)
                holds = true
            case .released(let id):
                guard live.remove(id) != nil else { continue }
                bytes += OutboxJournal.encode(.released(id: id))
            }
            records += 1
        }
        do {
            try append(bytes)
            if holds { unsynced = true }
            if durable { sync() }
            try compactIfNeeded(outbox)
            return nil
        } catch {
            startFailing()
            return Report(isFailure: true, message: Self.failureMessage(error))
        }
    }

    private func startFailing() {
        failing = true
        lastAttempt = WallClock.monotonic()
    }

    private static func failureMessage(_ error: RuntimeError) -> String {
        "\(error); the outbox runs on in memory and the journal is rewritten once it can be"
    }

    /// Forces what was appended to the disk (the connection dropped: what was in flight will wait).
    public func sync() {
        guard unsynced, descriptor >= 0 else { return }
        _ = fsync(descriptor)
        unsynced = false
    }

    // MARK: - Writing

    private func append(_ bytes: [UInt8]) throws(RuntimeError) {
        guard !bytes.isEmpty else { return }
        let failed = bytes.withUnsafeBytes { buffer -> Bool in
            var offset = 0
            while offset < buffer.count {
                let written = write(descriptor, buffer.baseAddress.map { $0 + offset }, buffer.count - offset)
                if written < 0 {
                    if errno == EINTR { continue }
                    return true
                }
                offset += written
            }
            return false
        }
        if failed { throw RuntimeError("cannot write \(path): \(FileAccess.systemMessage())") }
        size += bytes.count
    }

    private func compactIfNeeded(_ outbox: Outbox) throws(RuntimeError) {
        if live.isEmpty, size > Self.truncateSize {
            // Everything was released: nothing to keep, and cutting back needs no second file.
            guard ftruncate(descriptor, off_t(OutboxJournal.header.count)) == 0 else {
                throw RuntimeError("cannot truncate \(path): \(FileAccess.systemMessage())")
            }
            size = OutboxJournal.header.count
            records = 0
        } else if records - live.count > 2 * live.count + Self.compactionSlack {
            try rewrite(holding: outbox)
        }
    }

    /// Replaces the file by one holding the outbox's journaled entries: written to `PATH.tmp`, synced, renamed over
    /// the journal, the directory synced; then opened for appending.
    private func rewrite(holding outbox: Outbox) throws(RuntimeError) {
        let pending = outbox.held.filter { !$0.isControl && !$0.publication.retain }.map { entry in
            OutboxJournal.Pending(
                id: entry.id, topic: entry.publication.topic.name, payload: entry.publication.payload,
                qos: entry.publication.qos, retain: entry.publication.retain)
        }
        let bytes = OutboxJournal.file(holding: pending)
        let temporary = path + ".tmp"
        var file = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        if file < 0, errno == ENOENT {
            // The directory could not be made at start (no room then): make it now.
            if let (error, _) = Self.makeDirectory(of: path) { throw error }
            file = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        }
        guard file >= 0 else { throw RuntimeError("cannot create \(temporary): \(FileAccess.systemMessage())") }
        let previous = descriptor
        descriptor = file
        do throws(RuntimeError) {
            try append(bytes)
        } catch {
            close(file)
            descriptor = previous
            unlink(temporary)
            throw error
        }
        guard fsync(file) == 0, rename(temporary, path) == 0 else {
            let message = FileAccess.systemMessage()
            close(file)
            descriptor = previous
            unlink(temporary)
            throw RuntimeError("cannot replace \(path): \(message)")
        }
        if previous >= 0 { close(previous) }
        Self.syncDirectory(of: path)
        // O_APPEND from here on: reopen the renamed file.
        close(file)
        descriptor = open(path, O_WRONLY | O_APPEND | O_CLOEXEC)
        guard descriptor >= 0 else { throw RuntimeError("cannot open \(path): \(FileAccess.systemMessage())") }
        live = Set(pending.map { $0.id })
        records = pending.count
        size = bytes.count
        unsynced = false
    }

    // MARK: - Files

    /// Makes the journal's directory unless it exists; the error and its `errno` when it cannot.
    private static func makeDirectory(of path: String) -> (RuntimeError, Int32)? {
        let directory = directory(of: path)
        guard mkdir(directory, 0o700) != 0 else { return nil }
        let code = errno
        guard code != EEXIST else { return nil }
        return (
            RuntimeError("cannot create the state directory \(directory): \(String(cString: strerror(code)))"), code
        )
    }

    private static func directory(of path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return "." }
        return slash == path.startIndex ? "/" : String(path[..<slash])
    }

    private static func syncDirectory(of path: String) {
        let directory = open(Self.directory(of: path), O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard directory >= 0 else { return }
        _ = fsync(directory)
        close(directory)
    }

    /// The file's bytes; none when it does not exist.
    private static func read(_ path: String) throws(RuntimeError) -> [UInt8] {
        try FileAccess.readStateFile(path, limit: Int.max) ?? []
    }
}
