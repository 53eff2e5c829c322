import Testing
import WhereaboutsAdvertising
import WhereaboutsCore
import WhereaboutsGATT

/// The host's connection side on bytes written from the specification (Core Vol 4 Part E §5.4.2, §7.7; Vol 3
/// Part A §3, §4).
@Suite("Link layer: connections, ACL credits, L2CAP and signalling")
struct LinkLayerTests {
    /// LE Connection Complete: handle 0x0040, central, random peer 11:22:33:44:55:66, interval 0x28, timeout 0x190.
    static let connectionComplete: [UInt8] = [
        0x04, 0x3E, 0x13, 0x01, 0x00, 0x40, 0x00, 0x00, 0x01, 0x66, 0x55, 0x44, 0x33, 0x22, 0x11, 0x28, 0x00, 0x00,
        0x00, 0x90, 0x01, 0x00,
    ]

    static func connected(buffers: ACLBufferSize = ACLBufferSize(packetLength: 27, packetCount: 2)) -> LinkLayer {
        var link = LinkLayer(buffers: buffers)
        _ = link.ingest(connectionComplete)
        return link
    }

    /// An H4 ACL packet from the controller: handle 0x0040, boundary flag, data.
    static func acl(_ boundary: UInt8, _ data: [UInt8], handle: UInt16 = 0x0040) -> [UInt8] {
        let header = handle | UInt16(boundary) << 12
        return [0x02, UInt8(header & 0xFF), UInt8(header >> 8), UInt8(data.count), 0x00] + data
    }

    @Test("LE Connection Complete opens a connection with its handle, role, peer and timing")
    func connectionCompleteParsed() throws {
        var link = LinkLayer(buffers: ACLBufferSize(packetLength: 27, packetCount: 2))
        let actions = link.ingest(Self.connectionComplete)
        let complete = try #require(link.connections[0x0040])
        #expect(actions == [.connected(complete)])
        #expect(complete.role == .central)
        #expect(complete.peerAddress.description == "11:22:33:44:55:66")
        #expect(complete.peerAddressType == .randomDevice)
        #expect(complete.parameters == ConnectionParameters(interval: 0x28, latency: 0, supervisionTimeout: 0x190))
        #expect(!complete.enhanced)
    }

    @Test("LE Enhanced Connection Complete skips the resolvable addresses to reach the timing")
    func enhancedConnectionComplete() throws {
        let packet: [UInt8] =
            [0x04, 0x3E, 0x1F, 0x0A, 0x00, 0x41, 0x00, 0x01, 0x00, 1, 2, 3, 4, 5, 6]
            + [UInt8](repeating: 0xEE, count: 12) + [0x18, 0x00, 0x02, 0x00, 0xC8, 0x00, 0x00]
        var link = LinkLayer(buffers: ACLBufferSize(packetLength: 27, packetCount: 2))
        _ = link.ingest(packet)
        let complete = try #require(link.connections[0x0041])
        #expect(complete.role == .peripheral && complete.enhanced)
        #expect(complete.peerAddress.description == "06:05:04:03:02:01")
        #expect(complete.parameters == ConnectionParameters(interval: 0x18, latency: 2, supervisionTimeout: 0xC8))
    }

    @Test("a connection that fails (0x3E, not established) is reported and not opened")
    func connectionFailed() {
        var packet = Self.connectionComplete
        packet[4] = 0x3E
        var link = LinkLayer(buffers: ACLBufferSize(packetLength: 27, packetCount: 2))
        let actions = link.ingest(packet)
        guard case .connectionFailed(let complete) = actions.first else {
            Issue.record("expected a failure, got \(actions)")
            return
        }
        #expect(complete.status == 0x3E)
        #expect(link.connections.isEmpty)
    }

    @Test("link events whose lengths do not add up are dropped and counted")
    func malformedEvents() {
        var link = LinkLayer(buffers: ACLBufferSize(packetLength: 27, packetCount: 2))
        var short = Self.connectionComplete
        short.removeLast()
        #expect(link.ingest(short).isEmpty)
        // Two handles announced, one sent.
        #expect(link.ingest([0x04, 0x13, 0x05, 0x02, 0x40, 0x00, 0x01, 0x00]).isEmpty)
        #expect(link.ingest([0x04, 0x05, 0x03, 0x00, 0x40, 0x00]).isEmpty)
        #expect(link.counters.malformedEvents == 3)
        #expect(link.connections.isEmpty)
    }

    @Test("a frame longer than a packet is cut; packets beyond the credits wait for Number of Completed Packets")
    func creditsAndFragments() {
        var link = Self.connected()
        let payload = [UInt8](0..<56)  // 60-byte frame: 27 + 27 + 6
        let sent = link.sendAttribute(payload, on: 0x0040)
        let frame: [UInt8] = [56, 0, 4, 0] + payload
        #expect(
            sent == [
                .write([0x02, 0x40, 0x00, 27, 0] + frame[0..<27]), .write([0x02, 0x40, 0x10, 27, 0] + frame[27..<54]),
            ])
        #expect(link.writer.credits == 0 && link.writer.queued == 1)
        let more = link.ingest([0x04, 0x13, 0x05, 0x01, 0x40, 0x00, 0x01, 0x00])
        #expect(more == [.write([0x02, 0x40, 0x10, 6, 0] + frame[54...])])
        // A controller that counts more than was sent gives no extra credits.
        _ = link.ingest([0x04, 0x13, 0x05, 0x01, 0x40, 0x00, 0x09, 0x00])
        #expect(link.writer.credits == 2)
    }

    @Test("a disconnection gives back the link's credits and drops its waiting packets")
    func disconnectionReturnsCredits() {
        var link = Self.connected()
        _ = link.sendAttribute([UInt8](repeating: 7, count: 80), on: 0x0040)
        #expect(link.writer.credits == 0 && link.writer.queued > 0)
        let actions = link.ingest([0x04, 0x05, 0x04, 0x00, 0x40, 0x00, 0x13])
        #expect(actions == [.disconnected(handle: 0x0040, reason: 0x13)])
        #expect(link.writer.credits == 2 && link.writer.queued == 0)
        #expect(link.sendAttribute([1], on: 0x0040).isEmpty, "nothing is sent on a closed link")
    }

    @Test("packets beyond the credits and the queue's 64 are dropped and counted (GATTCentral reports the count)")
    func queueOverflowCounted() {
        var link = Self.connected()
        let written = (0..<70).flatMap { _ in link.sendAttribute([0x0A, 0x03, 0x00], on: 0x0040) }
        #expect(written.count == 2, "one packet per credit")
        #expect(link.writer.queued == 64)
        #expect(link.writer.droppedPackets == 4)
    }

    @Test("L2CAP frames are reassembled from a start and continuations and handed to ATT on CID 4")
    func reassembly() {
        var link = Self.connected()
        #expect(link.ingest(Self.acl(0b10, [5, 0, 4, 0, 0x1B, 0x03])).isEmpty)
        #expect(link.ingest(Self.acl(0b01, [0x00, 0x2A])).isEmpty)
        #expect(
            link.ingest(Self.acl(0b01, [0x50])) == [.attribute(handle: 0x0040, pdu: [0x1B, 0x03, 0x00, 0x2A, 0x50])])
        #expect(link.counters.total == 0)
    }

    @Test("malformed fragments are dropped and counted by reason, and the next good frame still arrives")
    func malformedFragments() {
        var link = Self.connected()
        _ = link.ingest(Self.acl(0b01, [1, 2, 3]))  // continuation with nothing open
        _ = link.ingest(Self.acl(0b10, [9, 0, 4, 0, 1]))  // open, then interrupted by a new start
        _ = link.ingest(Self.acl(0b10, [2, 0, 4, 0, 1, 2, 3]))  // one byte more than its frame
        _ = link.ingest(Self.acl(0b10, [0xFF, 0xFF, 4, 0]))  // 65535 bytes announced
        _ = link.ingest(Self.acl(0b11, [1, 0, 4, 0, 1]))  // a flag LE does not use
        _ = link.ingest(Self.acl(0b10, [1, 0, 4, 0, 1], handle: 0x0099))  // no such connection
        _ = link.ingest([0x02, 0x40, 0x20, 0x09, 0x00, 1, 0, 4, 0])  // ACL length says 9, 4 bytes follow
        _ = link.ingest(Self.acl(0b10, [1, 0, 0x40, 0, 1]))  // a dynamic channel we never opened
        let counters = link.counters
        #expect(counters.orphanContinuations == 1)
        #expect(counters.interruptedFrames == 1)
        #expect(counters.overlongFragments == 1)
        #expect(counters.oversizedFrames == 1)
        #expect(counters.malformedACL == 2)
        #expect(counters.unknownHandles == 1)
        #expect(counters.unknownChannels == 1)
        #expect(link.ingest(Self.acl(0b10, [1, 0, 4, 0, 0x13])) == [.attribute(handle: 0x0040, pdu: [0x13])])
    }

    @Test("a valid Connection Parameter Update Request is accepted and the controller asked to update")
    func parameterUpdateAccepted() {
        var link = Self.connected()
        // Code 0x12, identifier 7, length 8: interval 24...40, latency 0, timeout 400.
        let request: [UInt8] = [0x12, 0x07, 0x08, 0x00, 0x18, 0x00, 0x28, 0x00, 0x00, 0x00, 0x90, 0x01]
        let actions = link.ingest(Self.acl(0b10, [12, 0, 5, 0] + request))
        let update = ConnectionParameterRequest(
            minimumInterval: 0x18, maximumInterval: 0x28, latency: 0, supervisionTimeout: 0x190)
        #expect(
            actions == [
                .write([0x02, 0x40, 0x00, 10, 0, 6, 0, 5, 0, 0x13, 0x07, 0x02, 0x00, 0x00, 0x00]),
                .command(.leConnectionUpdate(handle: 0x0040, update)),
            ])
        #expect(
            HCICommand.leConnectionUpdate(handle: 0x0040, update).packet == [
                0x01, 0x13, 0x20, 14, 0x40, 0x00, 0x18, 0x00, 0x28, 0x00, 0x00, 0x00, 0x90, 0x01, 0, 0, 0, 0,
            ])
    }

    @Test("invalid parameters are refused with result 0x0001 and no update")
    func parameterUpdateRefused() {
        var link = Self.connected()
        // Timeout 100 ms is shorter than two intervals of 4 s.
        let request: [UInt8] = [0x12, 0x08, 0x08, 0x00, 0x80, 0x0C, 0x80, 0x0C, 0x00, 0x00, 0x0A, 0x00]
        let actions = link.ingest(Self.acl(0b10, [12, 0, 5, 0] + request))
        #expect(actions == [.write([0x02, 0x40, 0x00, 10, 0, 6, 0, 5, 0, 0x13, 0x08, 0x02, 0x00, 0x01, 0x00])])
    }

    @Test("other signalling requests get a Command Reject; rejects and responses are never answered")
    func commandReject() {
        var link = Self.connected()
        // LE Credit Based Connection Request (0x14), identifier 3.
        let credit: [UInt8] = [0x14, 0x03, 0x0A, 0x00, 0x80, 0, 0x40, 0, 0x17, 0, 0x17, 0, 0x05, 0]
        let rejected = link.ingest(Self.acl(0b10, [UInt8(credit.count), 0, 5, 0] + credit))
        #expect(rejected == [.write([0x02, 0x40, 0x00, 10, 0, 6, 0, 5, 0, 0x01, 0x03, 0x02, 0x00, 0x00, 0x00])])
        #expect(link.ingest(Self.acl(0b10, [6, 0, 5, 0, 0x01, 0x09, 0x02, 0x00, 0x00, 0x00])).isEmpty)
        #expect(link.ingest(Self.acl(0b10, [6, 0, 5, 0, 0x13, 0x09, 0x02, 0x00, 0x00, 0x00])).isEmpty)
        // A length that does not match is malformed, and still rejected by its identifier.
        let bad = link.ingest(Self.acl(0b10, [5, 0, 5, 0, 0x12, 0x04, 0x08, 0x00, 0x01]))
        #expect(bad == [.write([0x02, 0x40, 0x00, 10, 0, 6, 0, 5, 0, 0x01, 0x04, 0x02, 0x00, 0x00, 0x00])])
        #expect(link.counters.malformedSignaling == 1)
    }

    @Test("an LE Remote Connection Parameter Request is answered: valid values accepted, others refused (0x3B)")
    func remoteParameterRequest() {
        var link = Self.connected()
        // Subevent 0x06: handle 0x0040, interval 0x50...0x50, latency 2, timeout 0x1F4.
        let valid: [UInt8] = [0x04, 0x3E, 0x0B, 0x06, 0x40, 0x00, 0x50, 0x00, 0x50, 0x00, 0x02, 0x00, 0xF4, 0x01]
        let reply = ConnectionParameterRequest(
            minimumInterval: 0x50, maximumInterval: 0x50, latency: 2, supervisionTimeout: 0x1F4)
        #expect(link.ingest(valid) == [.command(.leRemoteParameterRequestReply(handle: 0x0040, reply))])
        let expected: [UInt8] = [0x01, 0x20, 0x20, 14, 0x40, 0x00, 0x50, 0x00, 0x50, 0x00, 0x02, 0x00, 0xF4, 0x01]
        #expect(HCICommand.leRemoteParameterRequestReply(handle: 0x0040, reply).packet == expected + [0, 0, 0, 0])
        var invalid = valid
        invalid[12] = 0x05  // timeout 50 ms: below the minimum
        invalid[13] = 0x00
        #expect(link.ingest(invalid) == [.command(.leRemoteParameterRequestNegativeReply(handle: 0x0040))])
        #expect(
            HCICommand.leRemoteParameterRequestNegativeReply(handle: 0x0040).packet == [
                0x01, 0x21, 0x20, 0x03, 0x40, 0x00, 0x3B,
            ])
        var unknown = valid
        unknown[4] = 0x41
        #expect(link.ingest(unknown).isEmpty, "not for a connection we know")
    }

    @Test("a peripheral rejects a parameter update request: only a central may accept one")
    func peripheralRejectsUpdate() {
        let request: [UInt8] = [0x12, 0x07, 0x08, 0x00, 0x18, 0x00, 0x28, 0x00, 0x00, 0x00, 0x90, 0x01]
        let answer = SignalingChannel.answer(request, role: .peripheral)
        #expect(answer.reply == [0x01, 0x07, 0x02, 0x00, 0x00, 0x00])
        #expect(answer.update == nil)
    }

    @Test("connection commands: LE Create Connection, its extended form, Disconnect, buffer sizes")
    func commands() throws {
        let peer = try #require(DeviceAddress("11:22:33:44:55:66"))
        let create = HCICommand.leCreateConnection(to: peer, type: .randomDevice, LinkTiming())
        #expect(create.opcode == 0x200D && create.parameters.count == 25)
        #expect(Array(create.parameters[4...12]) == [0x00, 0x01, 0x66, 0x55, 0x44, 0x33, 0x22, 0x11, 0x00])
        #expect(Array(create.parameters[13...20]) == [0x18, 0x00, 0x28, 0x00, 0x00, 0x00, 0x90, 0x01])
        let extended = HCICommand.leExtendedCreateConnection(to: peer, type: .publicDevice, LinkTiming())
        #expect(extended.opcode == 0x2043 && extended.parameters.count == 26)
        #expect(Array(extended.parameters[0...9]) == [0x00, 0x00, 0x00, 0x66, 0x55, 0x44, 0x33, 0x22, 0x11, 0x01])
        #expect(HCICommand.disconnect(handle: 0x0040).packet == [0x01, 0x06, 0x04, 0x03, 0x40, 0x00, 0x13])
        #expect(
            ACLBufferSize(leReturnParameters: [0x00, 0xC0, 0x00, 0x01])
                == ACLBufferSize(packetLength: 192, packetCount: 1))
        #expect(ACLBufferSize(leReturnParameters: [0x00, 0x00, 0x00, 0x00]) == nil, "0: use the shared buffers")
        #expect(
            ACLBufferSize(sharedReturnParameters: [0x00, 0xFD, 0x03, 0x40, 0x08, 0x00, 0x01, 0x00])
                == ACLBufferSize(packetLength: 1021, packetCount: 8))
    }

    @Test("seeded random packets never break the link layer's promises")
    func randomPackets() {
        var generator = SplitMix64(seed: 47)
        var link = Self.connected(buffers: ACLBufferSize(packetLength: 27, packetCount: 3))
        for _ in 0..<20_000 {
            var packet = (0..<Int(generator.next() % 40)).map { _ in UInt8(truncatingIfNeeded: generator.next()) }
            if !packet.isEmpty { packet[0] = [0x02, 0x04][Int(generator.next() % 2)] }
            if packet.count > 2, packet[0] == 0x02 { packet[1] = 0x40 }
            for action in link.ingest(packet) {
                if case .write(let bytes) = action { #expect(bytes.count <= 5 + 27) }
            }
            #expect(link.writer.credits >= 0 && link.writer.credits <= 3)
        }
    }
}
