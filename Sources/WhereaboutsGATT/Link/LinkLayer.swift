public import WhereaboutsAdvertising

/// The host's connection side as a state machine that returns actions: H4 packets from the controller in
/// (connection events and ACL data), packets to write, commands to send and what happened out.
///
/// It follows the connections the controller reports, spends and takes back ACL credits (``ACLWriter``),
/// reassembles L2CAP frames (``L2CAPReassembler``), hands the ATT channel (CID 4) to the caller and answers the
/// signalling channel (CID 5, ``SignalingChannel``) and the link layer's parameter requests (LE Remote Connection
/// Parameter Request). Anything malformed is dropped and counted in ``counters``.
/// No I/O and no clock: the adapter writes what it is told to.
public struct LinkLayer: Sendable {
    /// The ATT channel's id on LE.
    public static let attributeChannel: UInt16 = 0x0004

    /// The connections the controller reported open, by handle.
    public private(set) var connections: [UInt16: ConnectionComplete] = [:]
    /// What was dropped, by reason.
    public private(set) var counters = LinkCounters()
    /// The ACL credits and queue.
    public private(set) var writer: ACLWriter

    private var reassembler: L2CAPReassembler

    /// Makes a link layer for a controller with these buffers (from LE Read Buffer Size).
    public init(buffers: ACLBufferSize, maximumPayloadLength: Int = 1024) {
        writer = ACLWriter(buffers: buffers)
        reassembler = L2CAPReassembler(maximumPayloadLength: maximumPayloadLength)
    }

    /// What the adapter does next.
    public enum Action: Sendable, Hashable {
        /// Write this H4 packet (ACL data) to the controller.
        case write([UInt8])
        /// Send this HCI command (its answer needs no handling here).
        case command(HCICommand)
        /// A connection opened.
        case connected(ConnectionComplete)
        /// A connection attempt failed with this status (0x3E: could not be established; 0x02: cancelled).
        case connectionFailed(ConnectionComplete)
        /// A connection closed, with the controller's reason (0x13 remote user, 0x16 local host, 0x08 timeout).
        case disconnected(handle: UInt16, reason: UInt8)
        /// An ATT PDU arrived on a connection.
        case attribute(handle: UInt16, pdu: [UInt8])
        /// A connection's timing changed.
        case parametersChanged(handle: UInt16, ConnectionParameters)
    }

    /// Takes one H4 packet from the controller. Packets that are neither ACL data nor link events return nothing.
    public mutating func ingest(_ packet: [UInt8]) -> [Action] {
        guard let type = packet.first else { return [] }
        switch type {
        case 0x02: return ingestData(packet)
        case 0x04: return ingestEvent(packet)
        default: return []
        }
    }

    /// Sends an ATT PDU on a connection; nothing if the connection is not open.
    public mutating func sendAttribute(_ pdu: [UInt8], on handle: UInt16) -> [Action] {
        send(pdu, channel: Self.attributeChannel, on: handle)
    }

    /// Sends an L2CAP payload on a fixed channel; nothing if the connection is not open.
    public mutating func send(_ payload: [UInt8], channel: UInt16, on handle: UInt16) -> [Action] {
        guard connections[handle] != nil, payload.count <= Int(UInt16.max) else { return [] }
        let frame = Bytes.le(UInt16(payload.count)) + Bytes.le(channel) + payload
        return writer.send(frame: frame, on: handle).map { .write($0) }
    }

    private mutating func ingestEvent(_ packet: [UInt8]) -> [Action] {
        guard let event = LinkEvent(packet: packet) else {
            // A link event by its code that does not add up is malformed; any other event is not ours.
            if LinkEventKind(packet: packet) != nil { counters.malformedEvents += 1 }
            return []
        }
        switch event {
        case .connectionComplete(let complete):
            guard complete.status == 0 else { return [.connectionFailed(complete)] }
            connections[complete.handle] = complete
            return [.connected(complete)]
        case .disconnectionComplete(let status, let handle, let reason):
            guard status == 0, connections.removeValue(forKey: handle) != nil else { return [] }
            reassembler.disconnected(handle)
            return writer.disconnected(handle).map { .write($0) } + [.disconnected(handle: handle, reason: reason)]
        case .completedPackets(let counts):
            return writer.completed(counts).map { .write($0) }
        case .connectionUpdateComplete(let status, let handle, let parameters):
            guard status == 0, connections[handle] != nil else { return [] }
            connections[handle]?.parameters = parameters
            return [.parametersChanged(handle: handle, parameters)]
        case .remoteParameterRequest(let handle, let request):
            // The same rule as on the signalling channel: valid values are accepted, others refused.
            guard connections[handle] != nil else { return [] }
            return [
                .command(
                    request.isValid
                        ? .leRemoteParameterRequestReply(handle: handle, request)
                        : .leRemoteParameterRequestNegativeReply(handle: handle))
            ]
        }
    }

    private mutating func ingestData(_ packet: [UInt8]) -> [Action] {
        // Type, handle and flags (2), length (2), data.
        guard packet.count >= 5, Int(Bytes.uint16(packet[...], 3)) == packet.count - 5 else {
            counters.malformedACL += 1
            return []
        }
        let header = Bytes.uint16(packet[...], 1)
        let handle = header & 0x0FFF
        guard let connection = connections[handle] else {
            counters.unknownHandles += 1
            return []
        }
        let boundary = UInt8(truncatingIfNeeded: header >> 12) & 0b11
        guard
            let frame = reassembler.ingest(handle: handle, boundary: boundary, data: packet[5...], counters: &counters)
        else { return [] }
        switch frame.channel {
        case Self.attributeChannel:
            return [.attribute(handle: handle, pdu: frame.payload)]
        case SignalingChannel.channel:
            let answer = SignalingChannel.answer(frame.payload, role: connection.role)
            if answer.malformed { counters.malformedSignaling += 1 }
            var actions: [Action] = []
            if let reply = answer.reply { actions += send(reply, channel: SignalingChannel.channel, on: handle) }
            if let update = answer.update { actions.append(.command(.leConnectionUpdate(handle: handle, update))) }
            return actions
        default:
            counters.unknownChannels += 1
            return []
        }
    }
}
