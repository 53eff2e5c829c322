@preconcurrency import Dispatch
import Synchronization
public import WhereaboutsAdvertising

/// One Bluetooth controller opened for raw HCI: LE scanning that yields raw events, and iBeacon advertising.
///
/// Commands and reads run on the controller's own serial dispatch queue, never on Swift's cooperative pool, and
/// never at the same time (`hci_send_req` reads the same socket). Scanning keeps duplicates, since every advert is
/// a reading. Stopping, a consumer that stops listening, and `close()` all disable scanning and restore the
/// socket filter, so the controller is left as it was found.
public final class HCIController: Sendable {
    /// The controller's name, such as `hci0`.
    public let name: String
    /// The kernel's device id for it.
    public let deviceID: Int32
    /// How long a command may wait for the controller's answer.
    public let commandTimeoutMilliseconds: Int32

    private let descriptor: Int32
    private let queue: DispatchQueue
    private let state = Mutex(State())
    private let droppedCount = Atomic<Int>(0)

    private struct State {
        var closed = false
        var descriptorOpen = true
        var advertising = false
        var scan: Scan?
        var failure: HCIError?
    }

    private struct Scan {
        var source: any DispatchSourceRead
        var savedFilter: HCISocketFilter
        var continuation: AsyncStream<[UInt8]>.Continuation
    }

    private init(name: String, deviceID: Int32, descriptor: Int32, commandTimeoutMilliseconds: Int32) {
        self.name = name
        self.deviceID = deviceID
        self.descriptor = descriptor
        self.commandTimeoutMilliseconds = commandTimeoutMilliseconds
        self.queue = DispatchQueue(label: "whereabouts.hci.\(name)")
    }

    deinit {
        // A safety net only: `close()` also stops scanning and advertising; here the socket is just released.
        let open = state.withLock { $0.descriptorOpen }
        if open { BlueZ.close(descriptor) }
    }

    /// Opens a controller by name (`hci0`); throws an error naming what is missing when it cannot.
    public static func open(_ name: String = "hci0", commandTimeoutMilliseconds: Int32 = 1000) throws(HCIError)
        -> HCIController
    {
        let deviceID: Int32
        switch BlueZ.deviceID(named: name) {
        case .success(let id): deviceID = id
        case .failure(let error): throw error.hciError("hci_devid", controller: name)
        }
        switch BlueZ.open(deviceID: deviceID) {
        case .success(let descriptor):
            return HCIController(
                name: name,
                deviceID: deviceID,
                descriptor: descriptor,
                commandTimeoutMilliseconds: commandTimeoutMilliseconds
            )
        case .failure(let error): throw error.hciError("hci_open_dev", controller: name)
        }
    }

    /// Events the stream had to drop because its consumer fell behind (it keeps the newest 1024).
    public var droppedEvents: Int { droppedCount.load(ordering: .relaxed) }

    /// Why the last event stream ended early, if a read failed.
    public var failure: HCIError? { state.withLock { $0.failure } }

    /// Starts LE scanning and returns the raw HCI events (H4 framing: type byte 0x04 first), each copied.
    ///
    /// The stream ends when `stopScanning()` or `close()` is called or a read fails (see `failure`); when its
    /// consumer stops listening, scanning is stopped too.
    public func startScanning(_ parameters: LEScanParameters) async throws(HCIError) -> AsyncStream<[UInt8]> {
        try await onQueue { () throws(HCIError) in try self.beginScanning(parameters) }
    }

    /// Disables scanning, restores the socket filter and ends the event stream.
    public func stopScanning() async {
        await onQueue { () -> Void in self.endScanning() }
    }

    /// Advertises an iBeacon: non-connectable, on all three channels, at the given interval.
    public func startAdvertising(
        _ advertisement: IBeaconAdvertisement,
        parameters: LEAdvertisingParameters
    ) async throws(HCIError) {
        try await onQueue { () throws(HCIError) in try self.beginAdvertising(advertisement, parameters) }
    }

    /// Stops advertising.
    public func stopAdvertising() async throws(HCIError) {
        try await onQueue { () throws(HCIError) in
            try self.checkOpen()
            try self.send(.leSetAdvertisingEnable(false))
            self.state.withLock { $0.advertising = false }
        }
    }

    /// Stops scanning and advertising, then closes the socket. Blocks until the controller has answered; call
    /// it on the way out, not from the controller's own callbacks.
    public func close() {
        queue.sync {
            let cancelling = endScanning()
            let (wasOpen, wasAdvertising) = state.withLock { state in
                defer {
                    state.closed = true
                    state.advertising = false
                }
                return (!state.closed, state.advertising)
            }
            guard wasOpen else { return }
            if wasAdvertising {
                _ = BlueZ.send(
                    .leSetAdvertisingEnable(false),
                    on: descriptor,
                    timeoutMilliseconds: commandTimeoutMilliseconds
                )
            }
            // Dispatch may still watch the descriptor until the source's cancel handler runs; that closes it then.
            if !cancelling { closeDescriptor() }
        }
    }

    // MARK: - On the queue

    private func beginScanning(_ parameters: LEScanParameters) throws(HCIError) -> AsyncStream<[UInt8]> {
        try checkOpen()
        guard state.withLock({ $0.scan == nil }) else { throw .alreadyScanning }
        let savedFilter: HCISocketFilter
        switch BlueZ.filter(of: descriptor) {
        case .success(let filter): savedFilter = filter
        case .failure(let error): throw error.hciError("getsockopt(HCI_FILTER)", controller: name)
        }
        // Another scanner (bluetoothd) may have left scanning on; parameters cannot change while it is.
        _ = BlueZ.send(.leSetScanEnable(false), on: descriptor, timeoutMilliseconds: commandTimeoutMilliseconds)
        try send(.leSetScanParameters(parameters))
        if case .failure(let error) = BlueZ.setFilter(BlueZ.leMetaEventFilter(), on: descriptor) {
            throw error.hciError("setsockopt(HCI_FILTER)", controller: name)
        }
        do {
            try send(.leSetScanEnable(true, filterDuplicates: false))
        } catch {
            _ = BlueZ.setFilter(savedFilter, on: descriptor)
            throw error
        }

        let (stream, continuation) = AsyncStream.makeStream(of: [UInt8].self, bufferingPolicy: .bufferingNewest(1024))
        let source = DispatchSource.makeReadSource(fileDescriptor: descriptor, queue: queue)
        source.setEventHandler { [weak self] in self?.readReady() }
        // Holds the controller until dispatch lets go of the descriptor.
        source.setCancelHandler {
            if self.state.withLock({ $0.closed }) { self.closeDescriptor() }
        }
        continuation.onTermination = { [weak self] _ in
            guard let self else { return }
            self.queue.async { self.endScanning() }
        }
        state.withLock { state in
            state.failure = nil
            state.scan = Scan(source: source, savedFilter: savedFilter, continuation: continuation)
        }
        source.resume()
        return stream
    }

    private func readReady() {
        guard let continuation = state.withLock({ $0.scan?.continuation }) else { return }
        switch BlueZ.read(descriptor) {
        case .packet(let packet):
            if case .dropped = continuation.yield(packet) { droppedCount.add(1, ordering: .relaxed) }
        case .again:
            break
        case .failed(let code):
            state.withLock { $0.failure = Errno(code: code).hciError("read", controller: name) }
            endScanning()
        }
    }

    /// Ends scanning if it is on; whether it was.
    @discardableResult
    private func endScanning() -> Bool {
        guard
            let scan = state.withLock({ state -> Scan? in
                defer { state.scan = nil }
                return state.scan
            })
        else { return false }
        // Cancelled on its own queue, the source's handler cannot run again, so the commands below own the socket.
        scan.source.cancel()
        _ = BlueZ.send(.leSetScanEnable(false), on: descriptor, timeoutMilliseconds: commandTimeoutMilliseconds)
        _ = BlueZ.setFilter(scan.savedFilter, on: descriptor)
        scan.continuation.finish()
        return true
    }

    private func closeDescriptor() {
        let open = state.withLock { state in
            defer { state.descriptorOpen = false }
            return state.descriptorOpen
        }
        if open { BlueZ.close(descriptor) }
    }

    private func beginAdvertising(
        _ advertisement: IBeaconAdvertisement,
        _ parameters: LEAdvertisingParameters
    ) throws(HCIError) {
        try checkOpen()
        guard let data = HCICommand.leSetAdvertisingData(advertisement.advertisingData) else {
            // 30 bytes by construction; kept as a check, not a crash.
            throw .commandFailed(opcode: 0x2008, status: 0x12)
        }
        // Parameters cannot change while advertising is on.
        _ = BlueZ.send(.leSetAdvertisingEnable(false), on: descriptor, timeoutMilliseconds: commandTimeoutMilliseconds)
        try send(.leSetAdvertisingParameters(parameters))
        try send(data)
        try send(.leSetAdvertisingEnable(true))
        state.withLock { $0.advertising = true }
    }

    private func checkOpen() throws(HCIError) {
        if state.withLock({ $0.closed }) { throw .closed }
    }

    /// Sends a command and requires status 0.
    private func send(_ command: HCICommand) throws(HCIError) {
        switch BlueZ.send(command, on: descriptor, timeoutMilliseconds: commandTimeoutMilliseconds) {
        case .success(0): return
        case .success(let status): throw .commandFailed(opcode: command.opcode, status: status)
        case .failure(let error): throw error.hciError("hci_send_req", controller: name)
        }
    }

    /// Runs work on the controller's queue and waits for it without holding a cooperative thread.
    private func onQueue<T: Sendable>(_ work: @escaping @Sendable () throws(HCIError) -> T) async throws(HCIError) -> T
    {
        let result: Result<T, HCIError> = await withCheckedContinuation { continuation in
            queue.async { continuation.resume(returning: Result { () throws(HCIError) in try work() }) }
        }
        return try result.get()
    }

    private func onQueue(_ work: @escaping @Sendable () -> Void) async {
        await withCheckedContinuation { continuation in
            queue.async {
                work()
                continuation.resume()
            }
        }
    }
}
