import Synchronization
public import WhereaboutsAdvertising
public import WhereaboutsGATT
public import WhereaboutsHCI

/// A GATT server peripheral of our own on an emulated controller: it advertises connectable (ADV_IND) with the
/// Battery and Device Information services, takes a connection, and answers ATT through ``AttributeServer`` over
/// the same link layer the central uses (``LinkLayer``, in the peripheral role).
///
/// Test-only, and so here rather than in the agent: the agent transmits non-connectable iBeacons, and a scanner that
/// took connections would offer an ATT server to anyone passing; that waits until a feature needs it.
public final class GATTPeripheral: Sendable {
    public let host: HCIHost
    /// The controller's public address, which it advertises with.
    public let address: DeviceAddress
    private let state: Mutex<State>

    private struct State {
        var link: LinkLayer
        var server: AttributeServer
        var handle: UInt16?
        var stopped = false
        /// L2CAP frames to send just before the next ATT response.
        var junk: [(channel: UInt16, payload: [UInt8])] = []
    }

    /// Sets the controller up (its buffers, the advertising data) and starts advertising connectable: `advertising`
    /// when given (an iBeacon's, so that an agent files the peripheral under a tag), else flags, services and `name`.
    public init(
        host: HCIHost, server: AttributeServer, name: String = "WB tag", advertising: [UInt8]? = nil
    ) async throws {
        self.host = host
        guard let address = try await host.identity().address else { throw PeripheralError("no BD_ADDR") }
        self.address = address
        let buffers =
            ACLBufferSize(leReturnParameters: try await host.command(.leReadBufferSize))
            ?? ACLBufferSize(packetLength: 27, packetCount: 1)
        state = Mutex(State(link: LinkLayer(buffers: buffers), server: server))
        // Flags (LE general discoverable, no BR/EDR), 16-bit services 0x180F and 0x180A, the short name.
        let data: [UInt8] =
            advertising
            ?? [0x02, 0x01, 0x06, 0x05, 0x03, 0x0F, 0x18, 0x0A, 0x18, UInt8(name.utf8.count + 1), 0x08]
            + Array(name.utf8)
        guard let setData = HCICommand.leSetAdvertisingData(data) else { throw PeripheralError("name too long") }
        try await host.require(.leSetConnectableAdvertisingParameters())
        try await host.require(setData)
        try await host.require(.leSetAdvertisingEnable(true))
    }

    /// The connection's handle, once a central connected.
    public var connection: UInt16? { state.withLock { $0.handle } }
    /// The server's state (values written, subscriptions).
    public var server: AttributeServer { state.withLock { $0.server } }

    /// Answers the central until ``stop()`` or until the controller goes away.
    public func serve() async {
        while !state.withLock({ $0.stopped }) && !host.hasEnded {
            guard let packet = await host.nextLinkPacket(timeoutMilliseconds: 100) else { continue }
            let (writes, commands) = state.withLock { state -> ([[UInt8]], [HCICommand]) in
                var writes: [[UInt8]] = []
                var commands: [HCICommand] = []
                for action in state.link.ingest(packet) {
                    switch action {
                    case .write(let bytes): writes.append(bytes)
                    case .command(let command): commands.append(command)
                    case .connected(let complete): state.handle = complete.handle
                    case .disconnected:
                        // As tags do: advertise again, to be found and connected to again.
                        state.handle = nil
                        commands.append(.leSetAdvertisingEnable(true))
                    case .attribute(let handle, let pdu):
                        guard let response = state.server.respond(to: pdu) else { continue }
                        let junk = state.junk
                        state.junk = []
                        let frames = junk.flatMap { state.link.send($0.payload, channel: $0.channel, on: handle) }
                        for write in frames + state.link.sendAttribute(response, on: handle) {
                            if case .write(let bytes) = write { writes.append(bytes) }
                        }
                    case .connectionFailed, .parametersChanged: break
                    }
                }
                return (writes, commands)
            }
            for command in commands { _ = try? await host.command(command) }
            for bytes in writes { try? host.writeData(bytes) }
        }
    }

    /// Changes the battery level, notifying the central if it subscribed.
    public func setBatteryLevel(_ level: UInt8) {
        let writes = state.withLock { state -> [[UInt8]] in
            guard let notification = state.server.setBattery(level), let handle = state.handle else { return [] }
            return state.link.sendAttribute(notification, on: handle).compactMap {
                if case .write(let bytes) = $0 { bytes } else { nil }
            }
        }
        for bytes in writes { try? host.writeData(bytes) }
    }

    /// The connection as the peripheral's link layer knows it (its timing changes with LE Connection Update Complete).
    public var link: ConnectionComplete? {
        state.withLock { state in state.handle.flatMap { state.link.connections[$0] } }
    }

    /// Asks the central for other connection parameters on the signalling channel (Connection Parameter Update
    /// Request, identifier 1), as tags do to save power.
    public func requestConnectionParameters(_ request: ConnectionParameterRequest) {
        var payload: [UInt8] = [0x12, 0x01, 0x08, 0x00]
        for value in [request.minimumInterval, request.maximumInterval, request.latency, request.supervisionTimeout] {
            payload += [UInt8(value & 0xFF), UInt8(value >> 8)]
        }
        let writes = state.withLock { state -> [[UInt8]] in
            guard let handle = state.handle else { return [] }
            return state.link.send(payload, channel: SignalingChannel.channel, on: handle).compactMap {
                if case .write(let bytes) = $0 { bytes } else { nil }
            }
        }
        for bytes in writes { try? host.writeData(bytes) }
    }

    /// Sends these L2CAP frames just before the next ATT response, as a faulty tag might: the central, waiting for
    /// the response, takes them first.
    public func sendBeforeNextResponse(_ frames: [(channel: UInt16, payload: [UInt8])]) {
        state.withLock { $0.junk += frames }
    }

    /// Turns advertising off and on: btvirt reports an advertiser to scanners once, when it enables advertising.
    public func readvertise() async throws {
        try await host.require(.leSetAdvertisingEnable(false))
        try await host.require(.leSetAdvertisingEnable(true))
    }

    /// Opens an emulated controller and resets it: a host on a new controller of the emulator at `path`, initialised.
    ///
    /// On a loaded machine btvirt now and then ends a controller's connection just after it starts (the agent
    /// emulator tests saw it 17 ms in, btvirt running and its log empty; d4bbf8a). An agent then exits for systemd
    /// to start it again; this opens the controller again, at most twice more, and says so.
    public static func initializedHost(at path: String) async throws -> HCIHost {
        var attempt = 1
        while true {
            let host = HCIHost(transport: try H4StreamTransport(path: path))
            let failure: HCIError
            do {
                try await host.initialize()
                return host
            } catch {
                failure = error
            }
            host.close()
            guard case .controllerVanished(let name) = failure, attempt < 3 else { throw failure }
            print("btvirt ended controller \(name) at start (attempt \(attempt)); opening it again")
            attempt += 1
        }
    }

    /// Ends ``serve()``.
    public func stop() { state.withLock { $0.stopped = true } }
}

/// Why the test peripheral could not start.
public struct PeripheralError: Error, CustomStringConvertible {
    public var description: String
    public init(_ description: String) { self.description = description }
}
