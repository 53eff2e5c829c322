/// Something the locator service asks of its shell besides publishing, recording and logging.
public enum LocatorEffect: Sendable, Hashable {
    /// Replace the saved batch ledger with these bytes (``LocatorPipeline/ledger``): the service's periodic save,
    /// so that a crash loses at most ``LocatorService/ledgerInterval`` seconds of it.
    case saveLedger([UInt8])
}
