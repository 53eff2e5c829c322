public import CommandLineSupport
import Synchronization

/// Keeps the locator's batch ledger in its file: reads the one the last run saved, saves it when the service asks
/// (every few seconds while it changes) and once more at the stop.
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
    private let ledger: @Sendable (Effect) -> [UInt8]?
    private let failing = Mutex(false)

    /// A saver of `file`; `ledger` gives the bytes an effect asks to save, nil for an effect that is not a save.
    public init(file: BatchLedgerFile?, logger: Logger, ledger: @escaping @Sendable (Effect) -> [UInt8]?) {
        self.file = file
        self.logger = logger
        self.ledger = ledger
    }

    /// Whether the last save failed (and has been logged).
    public var isFailing: Bool { failing.withLock { $0 } }

    /// Produces nothing: the saver only takes effects.
    public func run(into feed: inout SourceFeed<Never>) async {}

    /// Saves the ledger an effect carries.
    public func perform(_ effect: Effect) async {
        if let bytes = ledger(effect) { save(bytes) }
    }

    /// Replaces the file with `bytes`; says whether it worked.
    @discardableResult
    public func save(_ bytes: [UInt8]) -> Bool {
        guard let file else { return false }
        do {
            try file.save(bytes)
            let recovered = failing.withLock { failing in
                defer { failing = false }
                return failing
            }
            if recovered { logger.info("\(file.path): the batch ledger is saved again") }
            return true
        } catch {
            let already = failing.withLock { failing in
                defer { failing = true }
                return failing
            }
            if !already {
                logger.error(
                    "\(error): the batch ledger is not saved, so a batch the broker delivers again after a restart "
                        + "may be taken twice; retrying")
            }
            return false
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
