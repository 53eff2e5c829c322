public import WhereaboutsCore
public import WhereaboutsJSON
public import WhereaboutsSurvey

/// The live survey behind the editor's survey routes (``EditorSurveyRoutes``): the shell's recorder, its broker
/// connection and the thread that runs the report. The routes are pure; this is where the state lives.
///
/// Every call returns at once: the server calls the routes on its own thread, one request at a time, and a report
/// takes seconds, so ``finish()`` only starts it and ``status()`` says when it is ready.
public protocol SurveyDesk: Sendable {
    /// Starts the survey with `tag` (the first time: on the map file as it is now, in a new directory), or goes on
    /// with another tag.
    func start(tag: TagIdentity) throws(SurveyDeskError) -> SurveyProgress
    /// The operator stands at a reference point.
    func standAt(floor: UInt16, x: Double, y: Double) throws(SurveyDeskError) -> SurveyProgress
    /// The operator walks a route.
    func walk(floor: UInt16, route: [Point], speed: Double) throws(SurveyDeskError) -> SurveyProgress
    /// Closes the point or walk under way and starts the report off the caller's thread.
    func finish() throws(SurveyDeskError) -> SurveyProgress
    /// Where the survey stands.
    func status() -> SurveyDeskStatus
    /// The last report made, when one is ready.
    func report() -> SurveyDeskReport?
}

/// Why the desk refused an action: the HTTP status and the reason in words.
public struct SurveyDeskError: Error, Sendable, Equatable, CustomStringConvertible {
    public var status: Int
    public var message: String

    public init(status: Int, _ message: String) {
        self.status = status
        self.message = message
    }

    /// The session's refusal of an operator's action: a survey not started yet is a conflict (409), a point off the
    /// floor or a bad route bad input (422).
    public init(_ error: SurveyError) {
        switch error {
        case .notStarted: self.init(status: 409, error.description)
        case .invalidMap: self.init(status: 409, error.description)
        default: self.init(status: 422, error.description)
        }
    }

    public var description: String { message }
}

/// The report's state.
public enum SurveyReportState: Sendable, Equatable {
    /// Not asked for yet.
    case none
    /// Running (off the server's thread).
    case running
    /// Ready; made over the survey's first `places` points and walks.
    case ready(places: Int)

    var name: String {
        switch self {
        case .none: "none"
        case .running: "running"
        case .ready: "ready"
        }
    }
}

/// Where the survey stands, for `GET /edit/api/survey/status`.
public struct SurveyDeskStatus: Sendable {
    /// Whether the broker has accepted the connection.
    public var connected: Bool
    /// The broker's address, for the page to name.
    public var broker: String
    /// The survey's directory, once started.
    public var directory: String?
    /// The progress, once started.
    public var progress: SurveyProgress?
    /// The positions surveyed so far (distinct truth positions), for the page to mark.
    public var surveyed: [(floor: UInt16, x: Double, y: Double)]
    /// The report's state.
    public var report: SurveyReportState
    /// Tags heard lately (``SurveyTagsHeard/json(now:within:)``).
    public var heard: JSONValue
    /// Seconds a reference point is held.
    public var dwell: Double
    /// A failure that stopped the recording (a file that cannot be written), if any.
    public var failure: String?

    public init(
        connected: Bool, broker: String, directory: String? = nil, progress: SurveyProgress? = nil,
        surveyed: [(floor: UInt16, x: Double, y: Double)] = [], report: SurveyReportState = .none,
        heard: JSONValue = [], dwell: Double = 30, failure: String? = nil
    ) {
        self.connected = connected
        self.broker = broker
        self.directory = directory
        self.progress = progress
        self.surveyed = surveyed
        self.report = report
        self.heard = heard
        self.dwell = dwell
        self.failure = failure
    }
}

/// A report that is ready, with what a save needs to know.
public struct SurveyDeskReport: Sendable {
    /// The report.
    public var report: SurveyReport
    /// The map file's revision (``EditorSite/revision(_:)``) when the survey started: the calibrated map was made
    /// from that text, so a save is refused when the file changed since (it would undo those changes).
    public var mapRevision: String
    /// Points and walks the report covers.
    public var places: Int

    public init(report: SurveyReport, mapRevision: String, places: Int) {
        self.report = report
        self.mapRevision = mapRevision
        self.places = places
    }
}
