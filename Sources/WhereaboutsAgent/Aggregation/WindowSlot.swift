/// A batching window aligned to the wall clock: window `index` covers `[index·length, (index+1)·length)` in
/// Unix seconds.
///
/// Because the boundaries are multiples of the length in Unix time rather than offsets from each agent's start,
/// every agent with the same window length (and a synchronised clock) closes its windows at the same instants,
/// and the locator compares like with like.
public struct WindowSlot: Sendable, Hashable, Comparable {
    /// The window's number: its start divided by its length.
    public var index: Int64
    /// The window length, seconds.
    public var length: Double

    /// The window that holds `time` (Unix seconds).
    public init(containing time: Double, length: Double) {
        self.length = length
        let quotient = (time / length).rounded(.down)
        // Times from the radio path are finite and near now; anything absurd lands in window 0 rather than trapping.
        index = quotient.isFinite && abs(quotient) < 9e15 ? Int64(quotient) : 0
    }

    /// A window by number.
    public init(index: Int64, length: Double) {
        self.index = index
        self.length = length
    }

    /// When the window starts, Unix seconds.
    public var start: Double { Double(index) * length }
    /// When the window ends (exclusive), Unix seconds.
    public var end: Double { Double(index + 1) * length }
    /// The window after this one.
    public var next: WindowSlot { WindowSlot(index: index + 1, length: length) }

    public static func < (lhs: WindowSlot, rhs: WindowSlot) -> Bool { lhs.index < rhs.index }
}
