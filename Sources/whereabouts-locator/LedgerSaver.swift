import CommandLineSupport
import Synchronization
import WhereaboutsLocator
import WhereaboutsRuntime

/// Saves the batch ledger when the service asks (``LocatorEffect/saveLedger(_:)``, every few seconds while it
/// changes) and once more at the stop. A save that fails is logged once, and once more when saving works again: the
/// locator runs on with the ledger in memory.
final class LedgerSaver: ServiceSource, Sendable {
    typealias Input = Never
    typealias Effect = LocatorEffect

    /// The ledger's file; nil when there is no state directory.
    let file: BatchLedgerFile?
    private let logger: Logger
    private let failing = Mutex(false)

    init(file: BatchLedgerFile?, logger: Logger) {
        self.file = file
        self.logger = logger
    }

    func run(into feed: inout SourceFeed<Never>) async {}

    func perform(_ effect: LocatorEffect) async {
        switch effect {
        case .saveLedger(let bytes): save(bytes)
        }
    }

    /// Replaces the file with `bytes`; says whether it worked.
    @discardableResult
    func save(_ bytes: [UInt8]) -> Bool {
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
}
