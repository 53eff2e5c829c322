import Testing
import WhereaboutsCore
import WhereaboutsGATT

/// The ATT/GATT client on PDUs written from the specification (Core Vol 3 Part F §3.4, Part G §4).
@Suite("GATT client state machine")
struct GATTClientTests {
    /// The PDUs a step sends, and its result if it ended.
    static func sent(_ actions: [GATTClient.Action]) -> [[UInt8]] {
        actions.compactMap { if case .send(let pdu) = $0 { pdu } else { nil } }
    }

    static func result(_ actions: [GATTClient.Action]) -> Result<GATTResult, GATTError>? {
        actions.lazy.compactMap { if case .finished(let result) = $0 { result } else { nil } }.first
    }

    static let battery = GATTCharacteristic(
        declaration: 0x0010, valueHandle: 0x0011, properties: [.read, .notify], uuid: .batteryLevel, end: 0x0012)

    @Test("MTU exchange agrees on the smaller of the two offers")
    func exchangeMTU() {
        var client = GATTClient()
        #expect(Self.sent(client.start(.exchangeMTU(247), now: 0)) == [[0x02, 0xF7, 0x00]])
        #expect(Self.result(client.receive([0x03, 0x9E, 0x00], now: 0.1)) == .success(.mtu(158)))
        #expect(client.mtu == 158 && !client.isBusy)
    }

    @Test("primary service discovery reads on from the last end handle until Attribute Not Found")
    func discoverServices() {
        var client = GATTClient()
        #expect(
            Self.sent(client.start(.discoverPrimaryServices, now: 0)) == [[0x10, 0x01, 0x00, 0xFF, 0xFF, 0x00, 0x28]])
        // Two 16-bit services: 0x0001-0x0007 Generic Access, 0x0010-0x0012 Battery.
        let first: [UInt8] = [0x11, 0x06, 0x01, 0x00, 0x07, 0x00, 0x00, 0x18, 0x10, 0x00, 0x12, 0x00, 0x0F, 0x18]
        #expect(Self.sent(client.receive(first, now: 1)) == [[0x10, 0x13, 0x00, 0xFF, 0xFF, 0x00, 0x28]])
        let done = client.receive([0x01, 0x10, 0x13, 0x00, 0x0A], now: 2)
        #expect(
            Self.result(done)
                == .success(
                    .services([
                        GATTService(start: 1, end: 7, uuid: AttributeUUID(0x1800)),
                        GATTService(start: 0x10, end: 0x12, uuid: .batteryService),
                    ])))
    }

    @Test("characteristic discovery gives each characteristic the handles up to the next declaration")
    func discoverCharacteristics() {
        var client = GATTClient()
        let service = GATTService(start: 0x0020, end: 0x0028, uuid: .deviceInformation)
        #expect(
            Self.sent(client.start(.discoverCharacteristics(service), now: 0)) == [
                [0x08, 0x20, 0x00, 0x28, 0x00, 0x03, 0x28]
            ])
        let list: [UInt8] = [
            0x09, 0x07, 0x21, 0x00, 0x02, 0x22, 0x00, 0x29, 0x2A, 0x23, 0x00, 0x02, 0x24, 0x00, 0x24, 0x2A,
        ]
        #expect(Self.sent(client.receive(list, now: 1)) == [[0x08, 0x24, 0x00, 0x28, 0x00, 0x03, 0x28]])
        guard
            case .success(.characteristics(let found)) = Self.result(
                client.receive([0x01, 0x08, 0x24, 0x00, 0x0A], now: 2))
        else {
            Issue.record("discovery did not end")
            return
        }
        #expect(found.map(\.valueHandle) == [0x22, 0x24])
        #expect(found.map(\.end) == [0x22, 0x28])
        #expect(found.map(\.uuid) == [.manufacturerName, .modelNumber])
    }

    @Test("a value as long as the MTU allows is read on with Read Blob until a shorter part")
    func readLong() {
        var client = GATTClient()
        #expect(Self.sent(client.start(.read(0x0022), now: 0)) == [[0x0A, 0x22, 0x00]])
        let first = [UInt8](repeating: 0x41, count: 22)
        #expect(Self.sent(client.receive([0x0B] + first, now: 1)) == [[0x0C, 0x22, 0x00, 22, 0x00]])
        #expect(Self.result(client.receive([0x0D, 0x42, 0x43], now: 2)) == .success(.value(first + [0x42, 0x43])))
        // Exactly 22 bytes long: the blob read answers Attribute Not Long, and the value is what was read.
        _ = client.start(.read(0x0022), now: 3)
        _ = client.receive([0x0B] + first, now: 3)
        #expect(Self.result(client.receive([0x01, 0x0C, 0x22, 0x00, 0x0B], now: 4)) == .success(.value(first)))
    }

    @Test("read by UUID returns the handles and values of one response")
    func readByUUID() {
        var client = GATTClient()
        let sent = Self.sent(client.start(.readByType(.batteryLevel, start: 1, end: 0xFFFF), now: 0))
        #expect(sent == [[0x08, 0x01, 0x00, 0xFF, 0xFF, 0x19, 0x2A]])
        #expect(
            Self.result(client.receive([0x09, 0x03, 0x11, 0x00, 0x57], now: 1))
                == .success(.values([AttributeValue(handle: 0x11, value: [0x57])])))
    }

    @Test("write with response; ATT errors name the attribute's handle and the type discovery saw")
    func writeAndErrors() {
        var client = GATTClient()
        client.name(0x0031, AttributeUUID(0x2A19))
        #expect(Self.sent(client.start(.write(0x0031, [1, 2]), now: 0)) == [[0x12, 0x31, 0x00, 1, 2]])
        let wrongLength = Self.result(client.receive([0x01, 0x12, 0x31, 0x00, 0x0D], now: 1))
        #expect(
            wrongLength
                == .failure(.attribute(.invalidAttributeValueLength, request: 0x12, handle: 0x31, uuid: .batteryLevel)))
        if case .failure(let error) = wrongLength {
            #expect("\(error)".contains("invalid attribute value length (0x0D) for attribute 0x0031 (0x2A19)"))
        }
        _ = client.start(.write(0x0040, [1]), now: 2)
        #expect(
            Self.result(client.receive([0x01, 0x12, 0x40, 0x00, 0x03], now: 3))
                == .failure(.attribute(.writeNotPermitted, request: 0x12, handle: 0x40, uuid: nil)))
        // 21 bytes (a beacon's configuration) do not fit one Write Request at the default MTU: exchange first.
        #expect(
            Self.result(client.start(.write(0x0031, [UInt8](repeating: 0, count: 21)), now: 4))
                == .failure(.valueTooLong(handle: 0x31, uuid: .batteryLevel, length: 21, mtu: 23)))
        #expect(!client.isBusy)
        _ = client.start(.write(0x0040, [1]), now: 4)
        #expect(Self.result(client.receive([0x13], now: 5)) == .success(.written))
    }

    @Test(
        "every ATT error code becomes a typed error with its specification name",
        arguments: Array(0x01...0x13) + [0xFC, 0xFD, 0xFE, 0xFF])
    func errorNames(code: Int) {
        var client = GATTClient()
        _ = client.start(.read(0x0005), now: 0)
        let result = Self.result(client.receive([0x01, 0x0A, 0x05, 0x00, UInt8(code)], now: 1))
        guard case .failure(.attribute(let error, 0x0A, 0x0005, nil)) = result else {
            Issue.record("\(String(describing: result))")
            return
        }
        #expect(error.rawValue == UInt8(code))
        #expect(!error.name.contains("reserved") && !error.name.contains("application"))
    }

    @Test("while waiting: notifications passed on, indications confirmed, the server's requests refused")
    func unsolicitedPDUs() {
        var client = GATTClient()
        _ = client.start(.read(0x0011), now: 0)
        #expect(client.receive([0x1B, 0x11, 0x00, 0x50], now: 1) == [.notification(handle: 0x11, value: [0x50])])
        #expect(
            client.receive([0x1D, 0x11, 0x00, 0x4F], now: 1) == [
                .send([0x1E]), .indication(handle: 0x11, value: [0x4F]),
            ])
        #expect(client.receive([0x0A, 0x03, 0x00], now: 1) == [.send([0x01, 0x0A, 0x00, 0x00, 0x06])])
        #expect(client.receive([0x02, 0x00, 0x02], now: 1) == [.send([0x01, 0x02, 0x00, 0x00, 0x06])])
        #expect(client.receive([0x52, 0x03, 0x00, 0x01], now: 1).isEmpty, "a command gets no answer")
        #expect(client.receive([0x13], now: 1).isEmpty, "a response to nothing we asked is dropped")
        #expect(client.unexpectedPDUs == 1)
        #expect(client.isBusy)
        #expect(Self.result(client.receive([0x0B, 0x50], now: 2)) == .success(.value([0x50])))
    }

    @Test("a request unanswered for 30 s fails the procedure and closes the bearer")
    func transactionTimeout() {
        var client = GATTClient()
        _ = client.start(.read(0x0011), now: 100)
        #expect(client.deadline == 130)
        #expect(client.tick(now: 129.9).isEmpty)
        #expect(Self.result(client.tick(now: 130)) == .failure(.timedOut(request: 0x0A)))
        #expect(client.isClosed && !client.isBusy)
        #expect(Self.result(client.start(.read(0x0011), now: 131)) == .failure(.linkLost))
        #expect(client.receive([0x0B, 0x50], now: 131).isEmpty, "a late answer on a closed bearer is ignored")
    }

    @Test("one procedure at a time; a lost link fails the running one")
    func busyAndLinkLost() {
        var client = GATTClient()
        _ = client.start(.read(0x0011), now: 0)
        #expect(Self.result(client.start(.read(0x0012), now: 0)) == .failure(.busy))
        #expect(Self.result(client.linkLost()) == .failure(.linkLost))
    }

    @Test("subscribing finds the CCCD after the value and writes 0x0001 (notifications) or 0x0002 (indications)")
    func subscribe() {
        var client = GATTClient()
        #expect(
            Self.sent(client.start(.subscribe(Self.battery, indications: false), now: 0)) == [
                [0x04, 0x12, 0x00, 0x12, 0x00]
            ])
        #expect(
            Self.sent(client.receive([0x05, 0x01, 0x12, 0x00, 0x02, 0x29], now: 1)) == [[0x12, 0x12, 0x00, 0x01, 0x00]])
        #expect(Self.result(client.receive([0x13], now: 2)) == .success(.subscribed(configuration: 0x12)))
        var indicating = Self.battery
        indicating.properties = [.read]
        #expect(
            Self.result(client.start(.subscribe(indicating, indications: true), now: 3))
                == .failure(.notSupportedByCharacteristic(handle: 0x11, uuid: .batteryLevel, "indications")))
        _ = client.start(.subscribe(Self.battery, indications: false), now: 4)
        #expect(
            Self.result(client.receive([0x01, 0x04, 0x12, 0x00, 0x0A], now: 5))
                == .failure(.noClientConfiguration(handle: 0x11, uuid: .batteryLevel)))
    }

    @Test("answers that do not add up end the procedure as malformed, never loop")
    func malformedAnswers() {
        var client = GATTClient()
        _ = client.start(.discoverPrimaryServices, now: 0)
        _ = client.receive([0x11, 0x06, 0x10, 0x00, 0x12, 0x00, 0x0F, 0x18], now: 0)
        // A second answer starting before where the first ended would have us ask again forever.
        let backwards = Self.result(client.receive([0x11, 0x06, 0x05, 0x00, 0x12, 0x00, 0x0F, 0x18], now: 0))
        guard case .failure(.malformedResponse(0x10, _)) = backwards else {
            Issue.record("\(String(describing: backwards))")
            return
        }
        _ = client.start(.exchangeMTU(100), now: 1)
        guard case .failure(.malformedResponse) = Self.result(client.receive([0x03, 0x64], now: 1)) else {
            Issue.record("a short MTU response was taken")
            return
        }
        _ = client.start(.discoverPrimaryServices, now: 2)
        guard
            case .failure(.malformedResponse) = Self.result(client.receive([0x11, 0x07, 1, 0, 2, 0, 3, 4, 5], now: 2))
        else {
            Issue.record("an element length of 7 was taken")
            return
        }
    }

    @Test("seeded random answers to every procedure end it or keep one request outstanding, never more")
    func randomAnswers() {
        var generator = SplitMix64(seed: 0x47)
        let procedures: [GATTProcedure] = [
            .exchangeMTU(247), .discoverPrimaryServices,
            .discoverCharacteristics(GATTService(start: 1, end: 0xFFFF, uuid: .batteryService)), .read(3),
            .readByType(.batteryLevel, start: 1, end: 0xFFFF), .write(3, [1]),
            .subscribe(Self.battery, indications: false),
        ]
        for round in 0..<5_000 {
            var client = GATTClient()
            _ = client.start(procedures[round % procedures.count], now: 0)
            for step in 0..<8 {
                var pdu = (0..<Int(generator.next() % 30)).map { _ in UInt8(truncatingIfNeeded: generator.next()) }
                if !pdu.isEmpty, generator.next() % 2 == 0 {
                    pdu[0] = [0x01, 0x03, 0x05, 0x09, 0x0B, 0x0D, 0x11, 0x13][step]
                }
                let actions = client.receive(pdu, now: Double(step))
                #expect(actions.filter { if case .finished = $0 { true } else { false } }.count <= 1)
                // One request outstanding at most: an answer sends at most one PDU (the next request, a confirmation).
                #expect(Self.sent(actions).count <= 1)
                #expect(client.mtu >= 23 && client.mtu <= 517)
            }
        }
    }
}
