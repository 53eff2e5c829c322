/// Turns refusals (connections given up or refused, requests refused, timeouts) into log lines at a bounded rate:
/// the first at once, then at most one line per interval that sums up everything since the last, so that a flood of
/// thousands a second costs one line every few seconds and nothing is left uncounted.
struct RefusalLog {
    /// Seconds between lines, at least.
    let interval: Double
    private var counts: [String: Int] = [:]
    private var nextLine = -Double.infinity
    private var since: Double?

    init(interval: Double) {
        self.interval = max(interval, 0)
    }

    /// Counts `count` refusals of a kind ("idle or slow connections given up when full", ...); returns a line when
    /// one is due.
    mutating func record(_ kind: String, count: Int = 1, now: Double) -> String? {
        guard count > 0 else { return nil }
        counts[kind, default: 0] += count
        if since == nil { since = now }
        return line(now: now)
    }

    /// The line summing up what was counted, if there is any and the interval has passed since the last line (or
    /// `final`, when the server stops: what is left is logged once, not lost).
    mutating func line(now: Double, final: Bool = false) -> String? {
        guard !counts.isEmpty, now >= nextLine || final, let since else { return nil }
        let parts = counts.sorted { $0.value != $1.value ? $0.value > $1.value : $0.key < $1.key }
            .map { "\($0.value) \($0.key)" }
        counts.removeAll()
        self.since = nil
        nextLine = now + interval
        let seconds = max(Int((now - since).rounded(.up)), 1)
        return "http: refused or given up in the last \(seconds) s: " + parts.joined(separator: ", ")
    }
}
