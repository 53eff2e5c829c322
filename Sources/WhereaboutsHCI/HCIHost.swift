@preconcurrency import Dispatch
import Glibc
import Synchronization
public import WhereaboutsAdvertising

/// The host side of HCI over any ``HCITransport``: commands matched to their Command Complete or Command Status,
/// LE scanning (extended where the controller's supported-commands bits have it, legacy otherwise) that yields raw
/// events, and iBeacon advertising beside the scan.
///
/// One reader thread (a dispatch work item) takes every packet off the transport; commands are sent one at a time
/// and wait for their answer, with a timeout. When the transport ends while in use, the scan's stream ends and
/// ``failure`` says the controller went away, naming it.
public final class HCIHost: Sendable {
    /// The transport's name for the controller.
    public var name: String { transport.name }
    /// How long a command may wait for the controller's answer, milliseconds.
    public let commandTimeoutMilliseconds: Int

    private let transport: any HCITransport
    private let state = Mutex(State())
    private let droppedCount = Atomic<Int>(0)

    private struct State {
        var pending: (opcode: UInt16, continuation: CheckedContinuation<Result<[UInt8], HCIError>, Never>)?
        var scan: AsyncStream<[UInt8]>.Continuation?
        var supported: SupportedCommands?
        var ended = false
        var failure: HCIError?
        var closing = false
    }

    /// Starts reading from `transport`; call ``initialize()`` next.
    public init(transport: any HCITransport, commandTimeoutMilliseconds: Int = 2000) {
        self.transport = transport
        self.commandTimeoutMilliseconds = commandTimeoutMilliseconds
        DispatchQueue.global().async { [self] in readLoop() }
    }

    /// Why the controller stopped, if it failed or went away.
    public var failure: HCIError? { state.withLock { $0.failure } }
    /// Whether the controller has the extended scanning commands (known after ``initialize()``).
    public var usesExtendedScanning: Bool { state.withLock { $0.supported?.extendedScanning ?? false } }
    /// Events dropped because the consumer fell behind (the stream keeps the newest 1024).
    public var droppedEvents: Int { droppedCount.load(ordering: .relaxed) }

    /// Resets the controller, unmasks LE events, and reads its supported commands.
    public func initialize() async throws(HCIError) {
        _ = try await command(.reset)
        _ = try await command(.setEventMask)
        _ = try await command(.leSetEventMask)
        let answer = try await command(.readLocalSupportedCommands)
        let supported = SupportedCommands(returnParameters: answer[...])
        state.withLock { $0.supported = supported }
    }

    /// Starts scanning (stopping a scan left on first) and returns the raw events, H4-framed.
    public func startScanning(_ parameters: LEScanParameters) async throws(HCIError) -> AsyncStream<[UInt8]> {
        let extended = usesExtendedScanning
        _ = try? await command(extended ? .leSetExtendedScanEnable(false) : .leSetScanEnable(false))
        try await require(extended ? .leSetExtendedScanParameters(parameters) : .leSetScanParameters(parameters))
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
        _ = try? await command(.leSetAdvertisingEnable(false))
        try await require(.leSetAdvertisingParameters(parameters))
        try await require(data)
        try await require(.leSetAdvertisingEnable(true))
    }

    /// Stops advertising.
    public func stopAdvertising() async throws(HCIError) {
        try await require(.leSetAdvertisingEnable(false))
    }

    /// Ends the transport; the scan stream ends without a failure.
    public func close() {
        state.withLock { $0.closing = true }
        transport.close()
    }

    // MARK: - Commands

    /// Sends a command and requires status 0 in its answer.
    private func require(_ command: HCICommand) async throws(HCIError) {
        let answer = try await self.command(command)
        if let status = answer.first, status != 0 { throw .commandFailed(opcode: command.opcode, status: status) }
    }

    /// Sends a command and returns its answer's return parameters (status first), one command at a time.
    func command(_ command: HCICommand) async throws(HCIError) -> [UInt8] {
        let opcode = command.opcode
        let result: Result<[UInt8], HCIError> = await withCheckedContinuation { continuation in
            let refusal: HCIError? = state.withLock { state in
                if state.ended { return state.failure ?? .controllerVanished(transport.name) }
                if state.pending != nil {
                    return .systemCall("command", errno: EBUSY, message: "a command is already waiting")
                }
                state.pending = (opcode, continuation)
                return nil
            }
            if let refusal {
                continuation.resume(returning: .failure(refusal))
                return
            }
            do throws(HCIError) {
                try transport.write(command.packet)
            } catch {
                finish(opcode, .failure(error))
                return
            }
            DispatchQueue.global().asyncAfter(deadline: .now() + .milliseconds(commandTimeoutMilliseconds)) {
                [self] in
                finish(opcode, .failure(.commandTimedOut(controller: transport.name, opcode: opcode)))
            }
        }
        return try result.get()
    }

    /// Resumes the pending command `opcode`, if it is still the one pending.
    private func finish(_ opcode: UInt16, _ result: Result<[UInt8], HCIError>) {
        let continuation = state.withLock { state -> CheckedContinuation<Result<[UInt8], HCIError>, Never>? in
            guard let pending = state.pending, pending.opcode == opcode else { return nil }
            state.pending = nil
            return pending.continuation
        }
        continuation?.resume(returning: result)
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
        guard packet.count >= 3, packet[0] == 0x04 else { return }
        switch packet[1] {
        case 0x0E where packet.count >= 6:  // Command Complete: ncmd, opcode, return parameters
            finish(UInt16(packet[4]) | UInt16(packet[5]) << 8, .success(Array(packet[6...])))
        case 0x0F where packet.count >= 7:  // Command Status: status, ncmd, opcode
            finish(UInt16(packet[5]) | UInt16(packet[6]) << 8, .success([packet[3]]))
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
    }
}
