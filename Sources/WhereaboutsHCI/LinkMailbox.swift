@preconcurrency import Dispatch
import Synchronization

/// Hands connection events and ACL packets from the host's reader thread to the one task that drives connections.
///
/// The reader only appends and returns (a bounded queue: the oldest goes past 512); the driving task waits for the
/// next packet with a timeout, so it can keep its own deadlines (the ATT transaction timeout) without a clock here.
final class LinkMailbox: Sendable {
    private let state = Mutex(State())
    static let limit = 512

    private struct State {
        var queue: [[UInt8]] = []
        var waiter: (serial: Int, continuation: CheckedContinuation<[UInt8]?, Never>)?
        var serial = 0
        var ended = false
    }

    /// From the reader thread: one packet.
    func deliver(_ packet: [UInt8]) {
        let waiter = state.withLock { state -> CheckedContinuation<[UInt8]?, Never>? in
            guard !state.ended else { return nil }
            if let waiter = state.waiter {
                state.waiter = nil
                return waiter.continuation
            }
            if state.queue.count >= Self.limit { state.queue.removeFirst() }
            state.queue.append(packet)
            return nil
        }
        waiter?.resume(returning: packet)
    }

    /// The transport ended: a waiting task gets nil, and so does every later one once the queue is empty.
    func end() {
        let waiter = state.withLock { state in
            state.ended = true
            defer { state.waiter = nil }
            return state.waiter?.continuation
        }
        waiter?.resume(returning: nil)
    }

    /// The next packet, or nil after the timeout or at the end.
    func next(timeoutMilliseconds: Int) async -> [UInt8]? {
        await withCheckedContinuation { (continuation: CheckedContinuation<[UInt8]?, Never>) in
            enum Now {
                case packet([UInt8]?)
                case wait(Int, previous: CheckedContinuation<[UInt8]?, Never>?)
            }
            let now = state.withLock { state -> Now in
                if !state.queue.isEmpty { return .packet(state.queue.removeFirst()) }
                if state.ended || timeoutMilliseconds <= 0 { return .packet(nil) }
                state.serial += 1
                // One reader at a time: a waiter left behind (its task gave up) is released.
                let previous = state.waiter?.continuation
                state.waiter = (state.serial, continuation)
                return .wait(state.serial, previous: previous)
            }
            switch now {
            case .packet(let packet):
                continuation.resume(returning: packet)
            case .wait(let serial, let previous):
                previous?.resume(returning: nil)
                DispatchQueue.global().asyncAfter(deadline: .now() + .milliseconds(timeoutMilliseconds)) { [self] in
                    let expired = state.withLock { state -> CheckedContinuation<[UInt8]?, Never>? in
                        guard let waiter = state.waiter, waiter.serial == serial else { return nil }
                        state.waiter = nil
                        return waiter.continuation
                    }
                    expired?.resume(returning: nil)
                }
            }
        }
    }
}
