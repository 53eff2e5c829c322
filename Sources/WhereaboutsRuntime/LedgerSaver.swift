public import CommandLineSupport
import Synchronization

/// Keeps the locator's batch ledger in its file: reads the one the last run saved and replays its journal, saves it
/// when the service asks (every few seconds while it changes) and once more at the stop, and appends the batches taken
/// in between to the journal.
///
/// Nothing here stops the locator: a missing file is a first start; an unusable directory or file is said (with its
/// path and why) and the ledger starts empty; a save that fails is logged once, and once more when saving works
/// again, while the locator runs on with the ledger in memory. Generic over the service's effect, which `ledger`
/// reads the bytes to save from, so the runtime needs no service of its own.
public final class LedgerSaver<Effect: Sendable & Hashable>: ServiceSource, Sendable {
    public typealias Input = Never

    /// The ledger's file; nil when there is no state directory.
    public let file: BatchLedgerFile?
    private let logger: Logger
    private let ledger: @Sendable (Effect) -> Write?
    private let failing = Mutex(false)

    /// What an effect asks of the file.
    public enum Write: Sendable {
        /// Replace the ledger with these bytes; the journal starts again.
        case save([UInt8])
        /// Append these lines to the journal.
        case journal([UInt8])
    }

    /// A saver of `file`; `ledger` says what an effect asks to write, nil for an effect that is not about the ledger.
    public init(file: BatchLedgerFile?, logger: Logger, ledger: @escaping @Sendable (Effect) -> Write?) {
        self.file = file
        self.logger = logger
        self.ledger = ledger
    }

    /// Whether the last save failed (and has been logged).
    public var isFailing: Bool { failing.withLock { $0 } }

    /// Produces nothing: the saver only takes effects.
    public func run(into feed: inout SourceFeed<Never>) async {}

    /// Saves the ledger an effect carries, or appends its lines to the journal.
    public func perform(_ effect: Effect) async {
        switch ledger(effect) {
        case .save(let bytes): save(bytes)
        case .journal(let lines): appendJournal(lines)
        case nil: break
        }
    }

    /// Appends lines to the journal; a failure is said as a failed save is.
    @discardableResult
    public func appendJournal(_ lines: [UInt8]) -> Bool {
        guard let file else { return false }
        do {
            try file.appendJournal(lines)
            return true
        } catch {
            failed(error)
            return false
        }
    }

    /// Replaces the file with `bytes` and empties the journal; says whether it worked.
    @discardableResult
    public func save(_ bytes: [UInt8]) -> Bool {
        guard let file else { return false }
        do {
            try file.save(bytes)
            file.clearJournal()
            let recovered = failing.withLock { failing in
                defer { failing = false }
                return failing
            }
            if recovered { logger.info("\(file.path): the batch ledger is saved again") }
            return true
        } catch {
            failed(error)
            return false
        }
    }

    private func failed(_ error: any Error) {
        let already = failing.withLock { failing in
            defer { failing = true }
            return failing
        }
        if !already {
            logger.error(
                "\(error): the batch ledger is not saved, so a batch the broker delivers again after a restart "
                    + "may be taken twice; retrying")
        }
    }

    /// Hands the journal the last run left (the batches it took after its last save) to `replay`, after
    /// ``restore(_:)``, which returns how many batches it took; says how many.
    public func replayJournal(_ replay: ([UInt8]) -> Int) {
        guard let file else { return }
        do {
            guard let bytes = try file.readJournal() else { return }
            let count = replay(bytes)
            logger.info("batch ledger journal \(file.journalPath): \(count) batches taken after the last save")
        } catch {
            logger.warning("\(error): the batches taken after the ledger's last save are not known")
        }
    }

    /// Hands the ledger the last run saved to `restore`, which takes its bytes and returns how many agents it holds.
    /// Says what happened; returns whether a ledger was taken.
    @discardableResult
    public func restore(_ restore: ([UInt8]) throws -> Int) -> Bool {
        guard let file else { return false }
        do {
            try file.prepareDirectory()
        } catch {
            logger.warning(
                "\(error): the batch ledger cannot be saved there until that is fixed (a batch the broker delivers "
                    + "again after a restart may be taken twice)")
        }
        let bytes: [UInt8]
        do {
            guard let read = try file.read() else {
                logger.info("batch ledger \(file.path): none yet, starting empty")
                return false
            }
            bytes = read
        } catch {
            logger.warning("\(error): starting with an empty batch ledger")
            return false
        }
        do {
            let agents = try restore(bytes)
            logger.info("batch ledger \(file.path): \(agents) agents from the last run")
            return true
        } catch {
            let aside = file.moveAside().map { "; moved to \($0)" } ?? ""
            logger.warning("\(file.path) is unusable: \(error)\(aside); starting with an empty batch ledger")
            return false
        }
    }
}
