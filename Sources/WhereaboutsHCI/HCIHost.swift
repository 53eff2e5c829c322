import DetachedThread
@preconcurrency import Dispatch
import Glibc
import Synchronization
public import WhereaboutsAdvertising

/// The host side of HCI over any ``HCITransport``: the one controller logic the agent runs, over the kernel's raw
/// socket, an H4 stream or a btsnoop file.
///
/// Commands are matched to their Command Complete or Command Status, one at a time (callers wait their turn), each
/// with a timeout. LE scanning is extended where the controller's supported-commands bits have it and legacy
/// otherwise (and legacy after all if the controller then refuses the extended commands as unknown); it yields raw
/// events. An iBeacon can be advertised beside the scan. One reader thread of its own takes every packet off the
/// transport. When the transport ends while in use, the scan's stream ends and ``failure`` says the controller
/// went away, naming it.
public final class HCIHost: Sendable {
    /// The transport's name for the controller.
    public var name: String { transport.name }
    /// How long a command may wait for the controller's answer, milliseconds.
    public let commandTimeoutMilliseconds: Int

    private let transport: any HCITransport
    private let state = Mutex(State())
    private let droppedCount = Atomic<Int>(0)
    /// Connection events and ACL data, for the one task that drives connections (``GATTCentral``).
    private let links = LinkMailbox()

    private struct State {
        var pending: Pending?
        var serial = 0
        /// Whether a command holds the turn; `turns` wait for it in order.
        var busy = false
        var turns: [CheckedContinuation<Void, Never>] = []
        var scan: AsyncStream<[UInt8]>.Continuation?
        var supported: SupportedCommands?
        var extendedRefused = false
        var advertising = false
        var ended = false
        var failure: HCIError?
        var closing = false
    }

    private struct Pending {
        var serial: Int
        var opcode: UInt16
        var continuation: CheckedContinuation<Result<[UInt8], HCIError>, Never>
    }

    /// Starts reading from `transport`; call ``initialize()`` next.
    public init(transport: any HCITransport, commandTimeoutMilliseconds: Int = 2000) {
        self.transport = transport
        self.commandTimeoutMilliseconds = commandTimeoutMilliseconds
        let started = DetachedThread.start(name: "hci-read") { [self] in readLoop() }
        if started != 0 {
            end(failure: .systemCall("pthread_create", errno: started, message: "no thread to read \(transport.name)"))
            transport.close()
        }
    }

    /// Why the controller stopped, if it failed or went away.
    public var failure: HCIError? { state.withLock { $0.failure } }
    /// Whether scanning uses the extended commands (known after ``initialize()``; false again once the controller
    /// refused them).
    public var usesExtendedScanning: Bool {
        state.withLock { ($0.supported?.extendedScanning ?? false) && !$0.extendedRefused }
    }
    /// Events dropped because the consumer fell behind (the stream keeps the newest 1024).
    public var droppedEvents: Int { droppedCount.load(ordering: .relaxed) }

    /// Readies the controller and reads its supported commands.
    ///
    /// A controller of the host's own is reset and its event masks set to let LE events through; a shared one
    /// (``HCITransport/sharesController``: the kernel set it up, and bluetoothd uses it) is left as it is.
    public func initialize() async throws(HCIError) {
        if !transport.sharesController {
            // Statuses not required, as before: a controller that refuses a mask bit still reports adverts.
            _ = try await command(.reset)
            _ = try await command(.setEventMask)
            _ = try await command(.leSetEventMask)
        }
        let answer = try await command(.readLocalSupportedCommands)
        let supported = SupportedCommands(returnParameters: answer[...])
        state.withLock { $0.supported = supported }
    }

    /// Asks the controller who it is (after ``initialize()``): its address, versions, maker and LE features, and
    /// whether scanning would be extended. A part the controller refuses is nil; a transport that fails throws.
    public func identity() async throws(HCIError) -> ControllerIdentity {
        let version = LocalVersion(returnParameters: try await command(.readLocalVersionInformation)[...])
        let address = DeviceAddress(readBDAddressReturnParameters: try await command(.readBDAddress)[...])
        let features = LEFeatures(returnParameters: try await command(.leReadLocalSupportedFeatures)[...])
        return ControllerIdentity(
            name: name, address: address, version: version,
            manufacturerName: version.flatMap { BlueZ.companyName($0.manufacturer) }, leFeatures: features,
            extendedScanning: usesExtendedScanning)
    }

    /// Starts scanning (stopping a scan left on first) and returns the raw events, H4-framed.
    public func startScanning(_ parameters: LEScanParameters) async throws(HCIError) -> AsyncStream<[UInt8]> {
        var extended = usesExtendedScanning
        // Another scanner (bluetoothd) may have left scanning on; parameters cannot change while it is.
        _ = try? await command(extended ? .leSetExtendedScanEnable(false) : .leSetScanEnable(false))
        if extended {
            do throws(HCIError) {
                try await require(.leSetExtendedScanParameters(parameters))
            } catch .commandFailed(_, status: 0x01) {
                // Unknown HCI Command: the bits promised what the controller does not have.
                state.withLock { $0.extendedRefused = true }
                extended = false
            }
        }
        if !extended { try await require(.leSetScanParameters(parameters)) }
        let (stream, continuation) = AsyncStream.makeStream(of: [UInt8].self, bufferingPolicy: .bufferingNewest(1024))
        let previous = state.withLock { state in
            defer {
                state.scan = continuation
                state.failure = nil
            }
            return state.scan
        }
        previous?.finish()
        do {
            try await require(extended ? .leSetExtendedScanEnable(true) : .leSetScanEnable(true))
        } catch {
            state.withLock { $0.scan = nil }
            continuation.finish()
            throw error
        }
        return stream
    }

    /// Stops scanning and ends the stream.
    public func stopScanning() async {
        let extended = usesExtendedScanning
        _ = try? await command(extended ? .leSetExtendedScanEnable(false) : .leSetScanEnable(false))
        state.withLock { state in
            defer { state.scan = nil }
            return state.scan
        }?.finish()
    }

    /// Advertises an iBeacon (legacy advertising, non-connectable), beside any scan.
    public func startAdvertising(_ advertisement: IBeaconAdvertisement, parameters: LEAdvertisingParameters)
        async throws(HCIError)
    {
        guard let data = HCICommand.leSetAdvertisingData(advertisement.advertisingData) else {
            throw .commandFailed(opcode: 0x2008, status: 0x12)
        }
        // Parameters cannot change while advertising is on.
        _ = try? await command(.leSetAdvertisingEnable(false))
        try await require(.leSetAdvertisingParameters(parameters))
        try await require(data)
        try await require(.leSetAdvertisingEnable(true))
        state.withLock { $0.advertising = true }
    }

    /// Stops advertising.
    public func stopAdvertising() async throws(HCIError) {
        try await require(.leSetAdvertisingEnable(false))
        state.withLock { $0.advertising = false }
    }

    /// Stops advertising and scanning, then closes: a shared controller is left as it was found. Each command may
    /// wait for the controller up to the command timeout; one that went away ends this at once.
    public func shutDown() async {
        let (scanning, advertising, ended) = state.withLock { ($0.scan != nil, $0.advertising, $0.ended) }
        if !ended {
            if advertising { _ = try? await stopAdvertising() }
            if scanning { await stopScanning() }
        }
        close()
    }

    /// Ends the transport at once; the scan stream ends without a failure.
    public func close() {
        state.withLock { $0.closing = true }
        transport.close()
    }

    // MARK: - Connections

    /// Writes one H4 ACL data packet (type 0x02); the caller keeps to the controller's credits (``LinkLayer``).
    public func writeData(_ packet: [UInt8]) throws(HCIError) {
        guard packet.first == 0x02 else { throw .systemCall("write", errno: EINVAL, message: "not an ACL packet") }
        try transport.write(packet)
    }

    /// The next connection event (connection and disconnection complete, completed packets, connection update) or
    /// ACL packet, H4-framed; nil after `timeoutMilliseconds`, or once the controller has gone (see ``failure``).
    /// One task at a time reads these; up to 512 wait, the oldest dropped past that.
    public func nextLinkPacket(timeoutMilliseconds: Int) async -> [UInt8]? {
        await links.next(timeoutMilliseconds: timeoutMilliseconds)
    }

    /// Whether the transport has ended (no more link packets will come).
    public var hasEnded: Bool { state.withLock { $0.ended } }

    // MARK: - Commands

    /// Sends a command and requires status 0 in its answer.
    public func require(_ command: HCICommand) async throws(HCIError) {
        let answer = try await self.command(command)
        if let status = answer.first, status != 0 { throw .commandFailed(opcode: command.opcode, status: status) }
    }

    /// Sends a command and returns its answer's return parameters (status first; a Command Status gives the status
    /// alone); waits for its turn first.
    public func command(_ command: HCICommand) async throws(HCIError) -> [UInt8] {
        await takeTurn()
        defer { passTurn() }
        let opcode = command.opcode
        let result: Result<[UInt8], HCIError> = await withCheckedContinuation { continuation in
            let started: Result<Int, HCIError> = state.withLock { state in
                if state.ended {
                    return .failure(state.failure ?? (state.closing ? .closed : .controllerVanished(transport.name)))
                }
                state.serial += 1
                state.pending = Pending(serial: state.serial, opcode: opcode, continuation: continuation)
                return .success(state.serial)
            }
            let serial: Int
            switch started {
            case .success(let number): serial = number
            case .failure(let refusal):
                continuation.resume(returning: .failure(refusal))
                return
            }
            do throws(HCIError) {
                try transport.write(command.packet)
            } catch {
                finish(serial: serial, .failure(error))
                return
            }
            DispatchQueue.global().asyncAfter(deadline: .now() + .milliseconds(commandTimeoutMilliseconds)) {
                [self] in
                finish(serial: serial, .failure(.commandTimedOut(controller: transport.name, opcode: opcode)))
            }
        }
        return try result.get()
    }

    /// Waits until no other command is waiting for its answer.
    private func takeTurn() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let now = state.withLock { state in
                if !state.busy {
                    state.busy = true
                    return true
                }
                state.turns.append(continuation)
                return false
            }
            if now { continuation.resume() }
        }
    }

    /// Hands the turn to the next command waiting, if any.
    private func passTurn() {
        let next = state.withLock { state -> CheckedContinuation<Void, Never>? in
            if state.turns.isEmpty {
                state.busy = false
                return nil
            }
            return state.turns.removeFirst()
        }
        next?.resume()
    }

    /// Resumes the command `serial`, if it is still the one pending.
    private func finish(serial: Int, _ result: Result<[UInt8], HCIError>) {
        let continuation = state.withLock { state -> CheckedContinuation<Result<[UInt8], HCIError>, Never>? in
            guard let pending = state.pending, pending.serial == serial else { return nil }
            state.pending = nil
            return pending.continuation
        }
        continuation?.resume(returning: result)
    }

    /// Resumes the pending command if it is `opcode` (the controller's answer to it).
    private func answer(_ opcode: UInt16, _ parameters: [UInt8]) {
        let continuation = state.withLock { state -> CheckedContinuation<Result<[UInt8], HCIError>, Never>? in
            guard let pending = state.pending, pending.opcode == opcode else { return nil }
            state.pending = nil
            return pending.continuation
        }
        continuation?.resume(returning: .success(parameters))
    }

    // MARK: - Reading

    private func readLoop() {
        while true {
            let packet: [UInt8]?
            do throws(HCIError) {
                packet = try transport.read()
            } catch {
                end(failure: error)
                return
            }
            guard let packet else {
                end(failure: .controllerVanished(transport.name))
                return
            }
            handle(packet)
        }
    }

    private func handle(_ packet: [UInt8]) {
        if packet.first == 0x02 {
            links.deliver(packet)
            return
        }
        guard packet.count >= 3, packet[0] == 0x04 else { return }
        if LinkEventKind(packet: packet) != nil {
            // About connections (some LE Meta events too, so before the scan takes those): the central's.
            links.deliver(packet)
            return
        }
        switch packet[1] {
        case 0x0E where packet.count >= 6:  // Command Complete: ncmd, opcode, return parameters
            answer(UInt16(packet[4]) | UInt16(packet[5]) << 8, Array(packet[6...]))
        case 0x0F where packet.count >= 7:  // Command Status: status, ncmd, opcode
            answer(UInt16(packet[5]) | UInt16(packet[6]) << 8, [packet[3]])
        case 0x3E:
            if let scan = state.withLock({ $0.scan }), case .dropped = scan.yield(packet) {
                droppedCount.add(1, ordering: .relaxed)
            }
        default:
            break
        }
    }

    private func end(failure: HCIError) {
        let (scan, pending) = state.withLock { state in
            defer {
                state.ended = true
                if !state.closing { state.failure = failure }
                state.scan = nil
                state.pending = nil
            }
            return (state.scan, state.pending)
        }
        scan?.finish()
        pending?.continuation.resume(returning: .failure(failure))
        links.end()
    }
}
