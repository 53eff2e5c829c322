/// An ATT/GATT client as a state machine that returns actions: one procedure at a time, one request outstanding
/// (Bluetooth Core Vol 3 Part F §3.3), ATT PDUs and the time in, PDUs to send and results out. No clock: `now` is
/// seconds on any monotonic scale.
///
/// While it waits, notifications and indications are passed on (indications confirmed), and requests the server
/// makes of us are answered "request not supported" (we serve no attributes). A request unanswered for
/// `transactionTimeout` (30 s, the specification's) fails the procedure and ends the bearer: nothing more may be
/// sent on it, so the caller disconnects. Every ATT error comes back as ``GATTError/attribute(_:request:handle:uuid:)``
/// naming the handle and, when discovery has seen it, the type.
public struct GATTClient: Sendable {
    /// What the adapter does next.
    public enum Action: Sendable, Hashable {
        /// Send this ATT PDU.
        case send([UInt8])
        /// The running procedure ended.
        case finished(Result<GATTResult, GATTError>)
        /// A Handle Value Notification.
        case notification(handle: UInt16, value: [UInt8])
        /// A Handle Value Indication (already confirmed in the actions before it).
        case indication(handle: UInt16, value: [UInt8])
    }

    /// The MTU in use: 23 until an exchange agrees on more.
    public internal(set) var mtu = 23
    /// How long a request may go unanswered, seconds.
    public let transactionTimeout: Double
    /// PDUs that were dropped: responses nobody asked for, and PDUs too short for their opcode.
    public private(set) var unexpectedPDUs = 0
    /// Whether a request timed out or the link was lost: the bearer takes no more requests.
    public private(set) var isClosed = false

    /// The longest attribute value (Vol 3 Part F §3.2.9).
    public static let maximumValueLength = 512
    /// How many services or characteristics one discovery keeps before calling the answer malformed.
    public static let maximumResults = 256

    var running: Running?
    var outstanding: (opcode: UInt8, handle: UInt16, sentAt: Double)?
    /// Types of the handles discovery has seen, to name attributes in errors; bounded by the discoveries' bounds.
    var names: [UInt16: AttributeUUID] = [:]

    enum Running: Sendable {
        case exchangeMTU(UInt16)
        case services(found: [GATTService])
        case characteristics(GATTService, found: [GATTCharacteristic])
        case read(UInt16, value: [UInt8])
        case readByType(AttributeUUID)
        case write(UInt16)
        case findConfiguration(GATTCharacteristic, indications: Bool)
        case writeConfiguration(GATTCharacteristic, configuration: UInt16)
    }

    public init(transactionTimeout: Double = 30) {
        self.transactionTimeout = transactionTimeout
    }

    /// Whether a procedure is running.
    public var isBusy: Bool { running != nil }

    /// Remembers an attribute's type so errors about it name it (discovery does this on its own).
    public mutating func name(_ handle: UInt16, _ uuid: AttributeUUID) {
        if names.count < 4 * Self.maximumResults { names[handle] = uuid }
    }

    /// Starts a procedure; it fails at once if one is running, the bearer is closed or its request cannot be made.
    public mutating func start(_ procedure: GATTProcedure, now: Double) -> [Action] {
        guard !isClosed else { return [.finished(.failure(.linkLost))] }
        guard running == nil else { return [.finished(.failure(.busy))] }
        switch procedure {
        case .exchangeMTU(let offered):
            let offer = min(max(offered, 23), 517)
            running = .exchangeMTU(offer)
            return request([0x02] + Bytes.le(offer), handle: 0, now: now)
        case .discoverPrimaryServices:
            running = .services(found: [])
            return readByGroupType(from: 0x0001, now: now)
        case .discoverCharacteristics(let service):
            running = .characteristics(service, found: [])
            return readByType(.characteristic, from: service.start, to: service.end, now: now)
        case .read(let handle):
            running = .read(handle, value: [])
            return request([0x0A] + Bytes.le(handle), handle: handle, now: now)
        case .readByType(let uuid, let start, let end):
            running = .readByType(uuid)
            return readByType(uuid, from: start, to: end, now: now)
        case .write(let handle, let value):
            guard value.count <= mtu - 3 else {
                return [
                    .finished(
                        .failure(.valueTooLong(handle: handle, uuid: names[handle], length: value.count, mtu: mtu)))
                ]
            }
            running = .write(handle)
            return request([0x12] + Bytes.le(handle) + value, handle: handle, now: now)
        case .subscribe(let characteristic, let indications):
            return subscribe(characteristic, indications: indications, now: now)
        }
    }

    /// Checks the transaction timeout.
    public mutating func tick(now: Double) -> [Action] {
        guard let outstanding, now - outstanding.sentAt >= transactionTimeout else { return [] }
        self.outstanding = nil
        running = nil
        isClosed = true
        return [.finished(.failure(.timedOut(request: outstanding.opcode)))]
    }

    /// When the running request times out, if one is outstanding.
    public var deadline: Double? { outstanding.map { $0.sentAt + transactionTimeout } }

    /// The link closed: a running procedure fails and the bearer takes no more.
    public mutating func linkLost() -> [Action] {
        isClosed = true
        outstanding = nil
        guard running != nil else { return [] }
        running = nil
        return [.finished(.failure(.linkLost))]
    }

    /// Takes one ATT PDU from the server.
    public mutating func receive(_ pdu: [UInt8], now: Double) -> [Action] {
        guard let opcode = pdu.first, !isClosed else { return [] }
        switch opcode {
        case 0x1B, 0x1D:  // Handle Value Notification, Indication: handle, value
            guard pdu.count >= 3 else {
                unexpectedPDUs += 1
                return []
            }
            let (handle, value) = (Bytes.uint16(pdu[...], 1), Array(pdu[3...]))
            if opcode == 0x1B { return [.notification(handle: handle, value: value)] }
            return [.send([0x1E]), .indication(handle: handle, value: value)]
        case 0x02, 0x04, 0x06, 0x08, 0x0A, 0x0C, 0x0E, 0x10, 0x12, 0x16, 0x18, 0x20:
            // A request of the server's: we hold no attributes. Error Response: opcode, handle 0, code.
            return [.send([0x01, opcode, 0x00, 0x00, ATTErrorCode.requestNotSupported.rawValue])]
        case 0x01:
            guard pdu.count == 5, let outstanding, pdu[1] == outstanding.opcode else {
                unexpectedPDUs += 1
                return []
            }
            self.outstanding = nil
            let handle = Bytes.uint16(pdu[...], 2)
            return failed(ATTErrorCode(rawValue: pdu[4]), handle: handle == 0 ? outstanding.handle : handle, now: now)
        default:
            // Commands (bit 6) need no answer; any other PDU must be the response to the outstanding request.
            guard opcode & 0x40 == 0, let outstanding, opcode == outstanding.opcode + 1 else {
                if opcode & 0x40 == 0 { unexpectedPDUs += 1 }
                return []
            }
            self.outstanding = nil
            return responded(pdu, now: now)
        }
    }

    // MARK: - Requests

    mutating func request(_ pdu: [UInt8], handle: UInt16, now: Double) -> [Action] {
        outstanding = (pdu[0], handle, now)
        return [.send(pdu)]
    }

    mutating func readByGroupType(from start: UInt16, now: Double) -> [Action] {
        request(
            [0x10] + Bytes.le(start) + Bytes.le(0xFFFF) + AttributeUUID.primaryService.wire, handle: start, now: now)
    }

    mutating func readByType(_ uuid: AttributeUUID, from start: UInt16, to end: UInt16, now: Double) -> [Action] {
        request([0x08] + Bytes.le(start) + Bytes.le(end) + uuid.wire, handle: start, now: now)
    }

    mutating func subscribe(_ characteristic: GATTCharacteristic, indications: Bool, now: Double) -> [Action] {
        name(characteristic.valueHandle, characteristic.uuid)
        let needed: CharacteristicProperties = indications ? .indicate : .notify
        guard characteristic.properties.contains(needed) else {
            let what = indications ? "indications" : "notifications"
            return [
                .finished(
                    .failure(
                        .notSupportedByCharacteristic(
                            handle: characteristic.valueHandle, uuid: characteristic.uuid, what)))
            ]
        }
        guard characteristic.valueHandle < characteristic.end else {
            return [
                .finished(
                    .failure(.noClientConfiguration(handle: characteristic.valueHandle, uuid: characteristic.uuid)))
            ]
        }
        running = .findConfiguration(characteristic, indications: indications)
        return findInformation(characteristic.valueHandle + 1, characteristic.end, now: now)
    }

    mutating func findInformation(_ start: UInt16, _ end: UInt16, now: Double) -> [Action] {
        request([0x04] + Bytes.le(start) + Bytes.le(end), handle: start, now: now)
    }

    /// Ends the running procedure.
    mutating func finish(_ result: Result<GATTResult, GATTError>) -> [Action] {
        running = nil
        outstanding = nil
        return [.finished(result)]
    }
}
