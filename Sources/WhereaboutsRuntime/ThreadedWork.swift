import DetachedThread
public import WhereaboutsCore

extension WorkRunner {
    /// Each piece on a thread of its own (the first on the caller's), made for the call and joined before it
    /// returns (``ForkJoin``): how the live locator, `whereabouts replay` and the bench run an update's estimates,
    /// split into `--workers` runs.
    public static let threads = WorkRunner(name: "threads") { count, body in ForkJoin.run(count, body) }
}
