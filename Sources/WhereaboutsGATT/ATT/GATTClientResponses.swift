/// The GATT client's steps: each response (or error) read against the procedure that asked for it. Lengths are
/// checked before any field is read; handles must move forward, so a server cannot keep a discovery looping.
extension GATTClient {
    mutating func responded(_ pdu: [UInt8], now: Double) -> [Action] {
        guard let running else { return [] }
        switch running {
        case .exchangeMTU(let offered):
            guard pdu.count == 3 else { return malformed(0x02, "an MTU response of \(pdu.count) bytes") }
            // A server that offers less than 23 breaks the rule; 23 is what both sides can always do.
            mtu = max(23, min(Int(offered), Int(Bytes.uint16(pdu[...], 1))))
            return finish(.success(.mtu(mtu)))
        case .services(let found):
            return services(pdu, found: found, now: now)
        case .characteristics(let service, let found):
            return characteristics(pdu, service: service, found: found, now: now)
        case .read(let handle, let value):
            let part = pdu[1...]
            let whole = value + part
            guard whole.count <= Self.maximumValueLength else {
                return malformed(pdu[0] - 1, "a value longer than \(Self.maximumValueLength) bytes")
            }
            // A full response may mean more: read on with Read Blob from where this one ended.
            if part.count == mtu - 1, whole.count < Self.maximumValueLength {
                self.running = .read(handle, value: whole)
                return request([0x0C] + Bytes.le(handle) + Bytes.le(UInt16(whole.count)), handle: handle, now: now)
            }
            return finish(.success(.value(whole)))
        case .readByType:
            return readByTypeValues(pdu)
        case .write:
            guard pdu.count == 1 else { return malformed(0x12, "a write response of \(pdu.count) bytes") }
            return finish(.success(.written))
        case .findConfiguration(let characteristic, let indications):
            return configuration(pdu, characteristic: characteristic, indications: indications, now: now)
        case .writeConfiguration(_, let configuration):
            guard pdu.count == 1 else { return malformed(0x12, "a write response of \(pdu.count) bytes") }
            return finish(.success(.subscribed(configuration: configuration)))
        }
    }

    /// An Error Response to the outstanding request: the end of a discovery, of a long read, or a failure.
    mutating func failed(_ code: ATTErrorCode, handle: UInt16, now: Double) -> [Action] {
        guard let running else { return [] }
        switch (running, code) {
        case (.services(let found), .attributeNotFound):
            return finish(.success(.services(found)))
        case (.characteristics(let service, let found), .attributeNotFound):
            return finish(.success(.characteristics(Self.ended(found, service: service))))
        case (.read(_, let value), _) where !value.isEmpty && (code == .attributeNotLong || code == .invalidOffset):
            // The value was exactly as long as what was read so far.
            return finish(.success(.value(value)))
        case (.findConfiguration(let characteristic, _), .attributeNotFound):
            return finish(
                .failure(.noClientConfiguration(handle: characteristic.valueHandle, uuid: characteristic.uuid)))
        case (.readByType(let uuid), _):
            return finish(.failure(.attribute(code, request: 0x08, handle: handle, uuid: names[handle] ?? uuid)))
        case (.writeConfiguration, _):
            return finish(.failure(.attribute(code, request: 0x12, handle: handle, uuid: .clientConfiguration)))
        default:
            return finish(
                .failure(.attribute(code, request: Self.requestOpcode(running), handle: handle, uuid: names[handle])))
        }
    }

    static func requestOpcode(_ running: Running) -> UInt8 {
        switch running {
        case .exchangeMTU: 0x02
        case .services: 0x10
        case .characteristics, .readByType: 0x08
        case .read(_, let value): value.isEmpty ? 0x0A : 0x0C
        case .write, .writeConfiguration: 0x12
        case .findConfiguration: 0x04
        }
    }

    mutating func malformed(_ request: UInt8, _ why: String) -> [Action] {
        finish(.failure(.malformedResponse(request: request, why)))
    }

    /// Read By Group Type Response: element length, then (handle, end group handle, UUID) elements.
    mutating func services(_ pdu: [UInt8], found: [GATTService], now: Double) -> [Action] {
        guard pdu.count >= 2, pdu[1] == 6 || pdu[1] == 20, (pdu.count - 2) % Int(pdu[1]) == 0, pdu.count > 2 else {
            return malformed(
                0x10, "a service list of \(pdu.count) bytes with elements of \(pdu.count > 1 ? pdu[1] : 0)")
        }
        var found = found
        var next = (found.last?.end).map { Int($0) + 1 } ?? 1
        for at in stride(from: 2, to: pdu.count, by: Int(pdu[1])) {
            let (start, end) = (Bytes.uint16(pdu[...], at), Bytes.uint16(pdu[...], at + 2))
            guard Int(start) >= next, end >= start, let uuid = AttributeUUID(wire: pdu[(at + 4)..<(at + Int(pdu[1]))])
            else {
                return malformed(
                    0x10, "service handles out of order at 0x\(AttributeUUID.hex(UInt64(start), digits: 4))")
            }
            found.append(GATTService(start: start, end: end, uuid: uuid))
            name(start, uuid)
            next = Int(end) + 1
        }
        guard found.count <= Self.maximumResults else {
            return malformed(0x10, "more than \(Self.maximumResults) services")
        }
        guard next <= 0xFFFF else { return finish(.success(.services(found))) }
        running = .services(found: found)
        return readByGroupType(from: UInt16(next), now: now)
    }

    /// Read By Type Response for characteristic declarations: (declaration handle, properties, value handle, UUID).
    mutating func characteristics(
        _ pdu: [UInt8], service: GATTService, found: [GATTCharacteristic], now: Double
    ) -> [Action] {
        guard pdu.count > 2, pdu[1] == 7 || pdu[1] == 21, (pdu.count - 2) % Int(pdu[1]) == 0 else {
            return malformed(0x08, "a characteristic list of \(pdu.count) bytes")
        }
        var found = found
        var next = (found.last?.declaration).map { Int($0) + 1 } ?? Int(service.start)
        for at in stride(from: 2, to: pdu.count, by: Int(pdu[1])) {
            let declaration = Bytes.uint16(pdu[...], at)
            let valueHandle = Bytes.uint16(pdu[...], at + 3)
            guard Int(declaration) >= next, declaration <= service.end, valueHandle > declaration,
                valueHandle <= service.end, let uuid = AttributeUUID(wire: pdu[(at + 5)..<(at + Int(pdu[1]))])
            else { return malformed(0x08, "characteristic handles out of order or outside the service") }
            found.append(
                GATTCharacteristic(
                    declaration: declaration, valueHandle: valueHandle,
                    properties: CharacteristicProperties(rawValue: pdu[at + 2]), uuid: uuid, end: service.end))
            name(valueHandle, uuid)
            next = Int(declaration) + 1
        }
        guard found.count <= Self.maximumResults else {
            return malformed(0x08, "more than \(Self.maximumResults) characteristics")
        }
        guard next <= Int(service.end) else {
            return finish(.success(.characteristics(Self.ended(found, service: service))))
        }
        running = .characteristics(service, found: found)
        return readByType(.characteristic, from: UInt16(next), to: service.end, now: now)
    }

    /// Each characteristic ends where the next one is declared, the last where its service ends.
    static func ended(_ found: [GATTCharacteristic], service: GATTService) -> [GATTCharacteristic] {
        found.enumerated().map { index, characteristic in
            var characteristic = characteristic
            characteristic.end = index + 1 < found.count ? found[index + 1].declaration - 1 : service.end
            return characteristic
        }
    }

    /// Read By Type Response for a value read by UUID: (handle, value) elements.
    mutating func readByTypeValues(_ pdu: [UInt8]) -> [Action] {
        guard pdu.count > 2, pdu[1] >= 2, (pdu.count - 2) % Int(pdu[1]) == 0 else {
            return malformed(0x08, "a value list of \(pdu.count) bytes")
        }
        let values = stride(from: 2, to: pdu.count, by: Int(pdu[1])).map { at in
            AttributeValue(handle: Bytes.uint16(pdu[...], at), value: Array(pdu[(at + 2)..<(at + Int(pdu[1]))]))
        }
        return finish(.success(.values(values)))
    }

    /// Find Information Response: format (1: 16-bit UUIDs, 2: 128-bit), then (handle, UUID) pairs.
    mutating func configuration(
        _ pdu: [UInt8], characteristic: GATTCharacteristic, indications: Bool, now: Double
    ) -> [Action] {
        let element = pdu.count >= 2 && pdu[1] == 1 ? 4 : 18
        guard pdu.count > 2, pdu[1] == 1 || pdu[1] == 2, (pdu.count - 2) % element == 0 else {
            return malformed(0x04, "a descriptor list of \(pdu.count) bytes")
        }
        var last = characteristic.valueHandle
        for at in stride(from: 2, to: pdu.count, by: element) {
            let handle = Bytes.uint16(pdu[...], at)
            guard handle > last, handle <= characteristic.end else {
                return malformed(0x04, "descriptor handles out of order or outside the characteristic")
            }
            last = handle
            if AttributeUUID(wire: pdu[(at + 2)..<(at + element)]) == .clientConfiguration {
                running = .writeConfiguration(characteristic, configuration: handle)
                let value: UInt16 = indications ? 0x0002 : 0x0001
                return request([0x12] + Bytes.le(handle) + Bytes.le(value), handle: handle, now: now)
            }
        }
        guard last < characteristic.end else {
            return finish(
                .failure(.noClientConfiguration(handle: characteristic.valueHandle, uuid: characteristic.uuid)))
        }
        return findInformation(last + 1, characteristic.end, now: now)
    }
}
