/// Runs a number of independent pieces of work and returns when every one is done.
///
/// The engine hands out the pieces (an update's estimates, split into ``LocatorEngine/Configuration/workers``
/// runs of tags); who runs them, and on how many threads, is the caller's choice. Core starts no threads: the
/// default runs the pieces one after another on the caller's thread, and the runtime (`WhereaboutsRuntime`) supplies
/// one that runs them side by side.
public struct WorkRunner: Sendable, Hashable {
    /// Calls `body(0)` … `body(count - 1)`, in any order and on any threads, and returns once all have returned.
    public typealias Run = @Sendable (_ count: Int, _ body: @Sendable (Int) -> Void) -> Void

    /// What the runner is called; runners of the same name run work the same way (configurations compare by it).
    public let name: String
    private let body: Run

    /// A runner called `name` that runs the pieces with `run`.
    public init(name: String, run: @escaping Run) {
        self.name = name
        body = run
    }

    /// The pieces one after another, in order, on the caller's thread: what the engine does unless told otherwise.
    public static let serial = WorkRunner(name: "serial") { count, body in
        for index in 0..<count { body(index) }
    }

    /// Runs `body(0)` … `body(count - 1)` and returns when all are done.
    public func run(_ count: Int, _ body: @Sendable (Int) -> Void) {
        self.body(count, body)
    }

    public static func == (lhs: WorkRunner, rhs: WorkRunner) -> Bool { lhs.name == rhs.name }

    public func hash(into hasher: inout Hasher) { hasher.combine(name) }
}
