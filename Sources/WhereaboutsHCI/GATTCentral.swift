import Synchronization
public import WhereaboutsAdvertising
public import WhereaboutsGATT

/// A GATT central over an ``HCIHost``: connects to advertisers, runs GATT procedures on them, receives their
/// notifications and disconnects, beside any scan the host runs.
///
/// The state lives in the pure machines (``LinkLayer`` for links, credits, L2CAP and signalling; one
/// ``GATTClient`` per connection); this only moves bytes between them and the controller. There is no thread of
/// its own: each call drives the machines until its answer comes, so one task at a time uses a central. Time for
/// the ATT timeout comes from the continuous clock.
public final class GATTCentral: Sendable {
    /// The host whose controller it drives.
    public let host: HCIHost
    private let state: Mutex<State>
    private let origin = ContinuousClock.now

    private struct State {
        var link: LinkLayer
        var clients: [UInt16: GATTClient] = [:]
        var results: [UInt16: Result<GATTResult, GATTError>] = [:]
        var notifications: [UInt16: [AttributeValue]] = [:]
        var completions: [ConnectionComplete] = []
        /// Connections to other devices that completed while an attempt waited (``completion(to:within:)``).
        var strays: [UInt16] = []
        var disconnections: [UInt16: UInt8] = [:]
    }

    /// How many notifications (and indications) wait per connection; the oldest goes past this.
    public static let notificationLimit = 64

    /// How long an ATT request may go unanswered, seconds (the specification's 30; tests shorten it).
    public let transactionTimeout: Double

    /// Reads the controller's LE buffers (or its shared ones, when it has no LE buffers of its own).
    public init(host: HCIHost, transactionTimeout: Double = 30) async throws(HCIError) {
        self.host = host
        self.transactionTimeout = transactionTimeout
        var buffers = ACLBufferSize(leReturnParameters: try await host.command(.leReadBufferSize))
        if buffers == nil { buffers = ACLBufferSize(sharedReturnParameters: try await host.command(.readBufferSize)) }
        guard let buffers else { throw .commandFailed(opcode: HCICommand.readBufferSize.opcode, status: 0xFF) }
        state = Mutex(State(link: LinkLayer(buffers: buffers)))
    }

    /// The controller's ACL buffers.
    public var buffers: ACLBufferSize { state.withLock { $0.link.writer.buffers } }
    /// What the link layer dropped of what came in.
    public var counters: LinkCounters { state.withLock { $0.link.counters } }
    /// ACL packets this central dropped going out, because the queue waiting for the controller's credits was full.
    public var droppedPackets: Int { state.withLock { $0.link.writer.droppedPackets } }

    /// Connects to an advertiser; fails with ``GATTCentralError/connectionFailed(status:peer:)`` when the controller
    /// reports a failure (0x3E: not established, as to an advertiser that takes no connections), or
    /// ``GATTCentralError/connectTimedOut(peer:)`` when nothing came in `timeout` (the attempt is then cancelled).
    public func connect(
        to peer: DeviceAddress, type: AddressType, timing: LinkTiming = LinkTiming(),
        timeout: Duration = .seconds(10)
    ) async throws(GATTCentralError) -> ConnectionComplete {
        state.withLock { $0.completions.removeAll() }
        let command: HCICommand =
            host.usesExtendedScanning
            ? .leExtendedCreateConnection(to: peer, type: type, timing)
            : .leCreateConnection(to: peer, type: type, timing)
        do { try await host.require(command) } catch { throw .controller(error) }
        if let complete = await completion(to: peer, within: timeout) {
            guard complete.status == 0 else { throw .connectionFailed(status: complete.status, peer: peer) }
            return complete
        }
        // Cancelled, the controller ends the attempt with a Connection Complete of status 0x02 (or the connection
        // that made it just in time, which is then closed).
        _ = try? await host.command(.leCreateConnectionCancel)
        if let late = await completion(to: peer, within: .seconds(2)), late.status == 0 {
            await disconnect(late.handle)
        }
        throw .connectTimedOut(peer: peer)
    }

    /// The attempt's Connection Complete: a failure, or a connection to `peer`. The host's link events outlive a
    /// central (each GATT job makes its own), so a connection to another device made by an earlier attempt after its
    /// cancel may still be queued: it is closed, not taken for this one.
    private func completion(to peer: DeviceAddress, within limit: Duration) async -> ConnectionComplete? {
        let found = await pump(for: limit) { state -> ConnectionComplete? in
            while !state.completions.isEmpty {
                let complete = state.completions.removeFirst()
                if complete.status != 0 || complete.peerAddress == peer { return complete }
                state.strays.append(complete.handle)
            }
            return nil
        }
        let strays = state.withLock { state in
            defer { state.strays = [] }
            return state.strays
        }
        for handle in strays { await disconnect(handle) }
        return found
    }

    /// Runs one GATT procedure on a connection and returns its result.
    public func perform(_ procedure: GATTProcedure, on handle: UInt16) async throws(GATTCentralError) -> GATTResult {
        let now = seconds()
        let actions = state.withLock { state -> [GATTClient.Action] in
            state.results[handle] = nil
            guard state.link.connections[handle] != nil else { return [.finished(.failure(.linkLost))] }
            return state.clients[handle, default: GATTClient(transactionTimeout: transactionTimeout)].start(
                procedure, now: now)
        }
        await perform(actions, on: handle)
        // The client's own timeout ends every procedure; the pump's limit is only a backstop.
        let result = await pump(
            for: .seconds(transactionTimeout + 10), until: { $0.results.removeValue(forKey: handle) })
        switch result {
        case .success(let value)?: return value
        case .failure(let error)?: throw .gatt(error)
        case nil: throw .gatt(.linkLost)
        }
    }

    /// The next notification or indication on a connection, waiting up to `timeout`; nil if none came.
    public func nextNotification(on handle: UInt16, timeout: Duration) async -> AttributeValue? {
        await pump(for: timeout) { state in
            guard var waiting = state.notifications[handle], !waiting.isEmpty else { return nil }
            defer { state.notifications[handle] = waiting }
            return waiting.removeFirst()
        }
    }

    /// A connection as the link layer knows it now (its timing follows LE Connection Update Complete); nil once closed.
    public func connection(_ handle: UInt16) -> ConnectionComplete? { state.withLock { $0.link.connections[handle] } }

    /// Closes a connection (reason 0x13) and waits up to 5 s for the controller to confirm; returns the reason the
    /// controller gave, or nil if it did not confirm.
    @discardableResult
    public func disconnect(_ handle: UInt16) async -> UInt8? {
        guard state.withLock({ $0.link.connections[handle] != nil }) else { return nil }
        _ = try? await host.command(.disconnect(handle: handle))
        return await pump(for: .seconds(5), until: { $0.disconnections.removeValue(forKey: handle) })
    }

    // MARK: - Driving the machines

    private func seconds() -> Double {
        let elapsed = ContinuousClock.now - origin
        return Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) * 1e-18
    }

    /// Feeds link packets to the machines until `done` gives a value or `limit` passes; ticks the ATT timeouts.
    private func pump<T: Sendable>(for limit: Duration, until done: (inout State) -> T?) async -> T? {
        let end = ContinuousClock.now + limit
        while true {
            if let value = state.withLock({ done(&$0) }) { return value }
            let now = ContinuousClock.now
            guard now < end else { return nil }
            if host.hasEnded {
                lose()
                if let value = state.withLock({ done(&$0) }) { return value }
                return nil
            }
            let wait = min(end - now, .milliseconds(200))
            let milliseconds = max(
                1, Int(wait.components.seconds * 1000 + wait.components.attoseconds / 1_000_000_000_000_000))
            if let packet = await host.nextLinkPacket(timeoutMilliseconds: milliseconds) {
                await ingest(packet)
            }
            let ticked = state.withLock { state in
                let now = seconds()
                return state.clients.keys.map { handle in (handle, state.clients[handle]?.tick(now: now) ?? []) }
            }
            for (handle, actions) in ticked where !actions.isEmpty { await perform(actions, on: handle) }
        }
    }

    private func ingest(_ packet: [UInt8]) async {
        let actions = state.withLock { $0.link.ingest(packet) }
        await perform(actions)
    }

    private func perform(_ actions: [LinkLayer.Action]) async {
        for action in actions {
            switch action {
            case .write(let packet):
                try? host.writeData(packet)
            case .command(let command):
                _ = try? await host.command(command)
            case .connected(let complete), .connectionFailed(let complete):
                state.withLock { state in
                    state.completions.append(complete)
                    if complete.status == 0 {
                        state.clients[complete.handle] = GATTClient(transactionTimeout: transactionTimeout)
                    }
                }
            case .disconnected(let handle, let reason):
                let lost = state.withLock { state -> [GATTClient.Action] in
                    state.disconnections[handle] = reason
                    state.notifications[handle] = nil
                    guard var client = state.clients.removeValue(forKey: handle) else { return [] }
                    return client.linkLost()
                }
                record(lost, on: handle)
            case .attribute(let handle, let pdu):
                let now = seconds()
                let answer = state.withLock { $0.clients[handle]?.receive(pdu, now: now) ?? [] }
                await perform(answer, on: handle)
            case .parametersChanged:
                break
            }
        }
    }

    /// Sends what a client asks to, and keeps its results and notifications.
    private func perform(_ actions: [GATTClient.Action], on handle: UInt16) async {
        for action in actions {
            guard case .send(let pdu) = action else { continue }
            let writes = state.withLock { $0.link.sendAttribute(pdu, on: handle) }
            await perform(writes)
        }
        record(actions, on: handle)
    }

    private func record(_ actions: [GATTClient.Action], on handle: UInt16) {
        state.withLock { state in
            for action in actions {
                switch action {
                case .finished(let result): state.results[handle] = result
                case .notification(let attribute, let value), .indication(let attribute, let value):
                    var waiting = state.notifications[handle, default: []]
                    if waiting.count >= Self.notificationLimit { waiting.removeFirst() }
                    waiting.append(AttributeValue(handle: attribute, value: value))
                    state.notifications[handle] = waiting
                case .send: break
                }
            }
        }
    }

    /// The controller went away: every connection is lost.
    private func lose() {
        let lost = state.withLock { state in
            let clients = state.clients
            state.clients.removeAll()
            return clients.map { handle, client in
                var client = client
                return (handle, client.linkLost())
            }
        }
        for (handle, actions) in lost { record(actions, on: handle) }
    }
}

/// Why a central's call failed.
public enum GATTCentralError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The controller refused a command or went away.
    case controller(HCIError)
    /// The controller reported the connection failed, with this HCI status (0x3E: failed to be established).
    case connectionFailed(status: UInt8, peer: DeviceAddress)
    /// No connection came within the time allowed; the attempt was cancelled.
    case connectTimedOut(peer: DeviceAddress)
    /// A GATT procedure failed (an ATT error names the attribute).
    case gatt(GATTError)

    public var description: String {
        switch self {
        case .controller(let error): "\(error)"
        case .connectionFailed(let status, let peer):
            "could not connect to \(peer): HCI status 0x\(String(status, radix: 16, uppercase: true))"
                + (status == 0x3E ? " (connection failed to be established; does it take connections?)" : "")
        case .connectTimedOut(let peer): "no connection to \(peer) in time (is it advertising, and in range?)"
        case .gatt(let error): "\(error)"
        }
    }
}
