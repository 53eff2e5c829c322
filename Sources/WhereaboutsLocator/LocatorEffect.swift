import WhereaboutsSession
import WhereaboutsWire

/// Something the locator service asks of its shell besides publishing, recording and logging.
public enum LocatorEffect: Sendable, Hashable {
    /// Replace the saved batch ledger with these bytes (``LocatorPipeline/ledger``), the service's periodic save, and
    /// empty the journal: the ledger holds what it listed.
    case saveLedger([UInt8])
    /// Append these lines to the ledger's journal (``LocatorPipeline/takeLedgerJournal()``): the batches one input
    /// took, so that a crash loses none of the ledger.
    case journalLedger([UInt8])
    /// Hand these figures to the metrics endpoint (``LocatorService/snapshotInterval``), which serves the last it was
    /// handed.
    case metrics(LocatorMetricsSnapshot)
}

/// What the locator's pipeline and its parts return: the service's own actions.
typealias Action = ServiceAction<LocatorEffect>

extension ServiceAction {
    /// The topic a publication goes to; empty for other actions (for ordering actions deterministically).
    var topicName: String {
        if case .publish(let publication) = self { return publication.topic.name }
        return ""
    }
}
