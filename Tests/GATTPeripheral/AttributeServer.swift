public import WhereaboutsGATT

/// A small ATT server (Bluetooth Core Vol 3 Part F §3.4) with a fixed database: Generic Access, Battery (with
/// notifications), Device Information and our beacon configuration. Test-only: it is the other side of the
/// central's tests, so it answers the way the specification says and no more (no long writes, no security).
///
/// Handles: 0x0001 GAP service, 0x0003 Device Name; 0x0010 Battery service, 0x0012 Battery Level (read, notify),
/// 0x0013 its CCCD; 0x0020 Device Information, 0x0022 manufacturer, 0x0024 model, 0x0026 firmware (read only);
/// 0x0030 configuration service, 0x0032 configuration (read, write; 21 bytes).
public struct AttributeServer: Sendable {
    struct Attribute: Sendable {
        var handle: UInt16
        var type: AttributeUUID
        var value: [UInt8]
        var writable = false
        var length: Int?
    }

    /// The largest ATT PDU this server takes.
    public static let serverMTU: UInt16 = 247
    public private(set) var mtu = 23
    private var attributes: [Attribute] = []

    public static let batteryLevelHandle: UInt16 = 0x0012
    public static let configurationHandle: UInt16 = 0x0032
    public static let manufacturerHandle: UInt16 = 0x0022

    public init(
        battery: UInt8, manufacturer: String, model: String, firmware: String, name: String,
        configuration: BeaconConfiguration, configurationLength: Int = BeaconConfiguration.length
    ) {
        service(0x0001, AttributeUUID(0x1800))
        characteristic(0x0002, properties: [.read], AttributeUUID(0x2A00), Array(name.utf8))
        service(0x0010, .batteryService)
        characteristic(0x0011, properties: [.read, .notify], .batteryLevel, [battery])
        attributes.append(
            Attribute(handle: 0x0013, type: .clientConfiguration, value: [0, 0], writable: true, length: 2))
        service(0x0020, .deviceInformation)
        characteristic(0x0021, properties: [.read], .manufacturerName, Array(manufacturer.utf8))
        characteristic(0x0023, properties: [.read], .modelNumber, Array(model.utf8))
        characteristic(0x0025, properties: [.read], .firmwareRevision, Array(firmware.utf8))
        service(0x0030, BeaconConfiguration.service)
        characteristic(0x0031, properties: [.read, .write], BeaconConfiguration.characteristic, configuration.value)
        attributes[attributes.count - 1].writable = true
        // Another length stands for a tag whose firmware has another layout: our 21-byte write gets 0x0D.
        attributes[attributes.count - 1].length = configurationLength
    }

    private mutating func service(_ handle: UInt16, _ uuid: AttributeUUID) {
        attributes.append(Attribute(handle: handle, type: .primaryService, value: uuid.wire))
    }

    private mutating func characteristic(
        _ handle: UInt16, properties: CharacteristicProperties, _ uuid: AttributeUUID, _ value: [UInt8]
    ) {
        let declaration = [properties.rawValue, UInt8((handle + 1) & 0xFF), UInt8((handle + 1) >> 8)] + uuid.wire
        attributes.append(Attribute(handle: handle, type: .characteristic, value: declaration))
        attributes.append(Attribute(handle: handle + 1, type: uuid, value: value))
    }

    /// The current value of an attribute.
    public func value(_ handle: UInt16) -> [UInt8]? { attributes.first { $0.handle == handle }?.value }

    /// Whether the client asked for Battery Level notifications.
    public var notifiesBattery: Bool { value(0x0013) == [0x01, 0x00] }

    /// Sets the battery level; returns the notification to send if the client subscribed.
    public mutating func setBattery(_ level: UInt8) -> [UInt8]? {
        guard let index = attributes.firstIndex(where: { $0.handle == Self.batteryLevelHandle }) else { return nil }
        attributes[index].value = [level]
        return notifiesBattery ? [0x1B] + le(Self.batteryLevelHandle) + [level] : nil
    }

    /// The response to one PDU from the client; nil for commands and confirmations.
    public mutating func respond(to pdu: [UInt8]) -> [UInt8]? {
        guard let opcode = pdu.first else { return nil }
        switch opcode {
        case 0x02:
            guard pdu.count == 3 else { return error(opcode, 0, .invalidPDU) }
            mtu = max(23, min(Int(Self.serverMTU), Int(u16(pdu, 1))))
            return [0x03] + le(Self.serverMTU)
        case 0x04, 0x08, 0x10:
            guard pdu.count >= 5, u16(pdu, 1) >= 1, u16(pdu, 1) <= u16(pdu, 3) else {
                return error(opcode, pdu.count >= 3 ? u16(pdu, 1) : 0, pdu.count >= 5 ? .invalidHandle : .invalidPDU)
            }
            let range = u16(pdu, 1)...u16(pdu, 3)
            if opcode == 0x04 { return findInformation(range) }
            guard let type = AttributeUUID(wire: pdu[5...]) else { return error(opcode, range.lowerBound, .invalidPDU) }
            return opcode == 0x10 ? readByGroupType(range, type) : readByType(range, type)
        case 0x0A, 0x0C:
            guard pdu.count == (opcode == 0x0A ? 3 : 5) else { return error(opcode, 0, .invalidPDU) }
            return read(u16(pdu, 1), offset: opcode == 0x0A ? 0 : Int(u16(pdu, 3)), opcode: opcode)
        case 0x12:
            guard pdu.count >= 3 else { return error(opcode, 0, .invalidPDU) }
            return write(u16(pdu, 1), Array(pdu[3...]))
        case 0x1E, 0x52:
            return nil
        default:
            return opcode & 0x40 == 0 ? error(opcode, 0, .requestNotSupported) : nil
        }
    }

    private func readByGroupType(_ range: ClosedRange<UInt16>, _ type: AttributeUUID) -> [UInt8] {
        guard type == .primaryService else { return error(0x10, range.lowerBound, .unsupportedGroupType) }
        let services = attributes.filter { $0.type == .primaryService }
        var entries: [[UInt8]] = []
        for (index, service) in services.enumerated() where range.contains(service.handle) {
            let end = index + 1 < services.count ? services[index + 1].handle - 1 : 0xFFFF
            let entry = le(service.handle) + le(end) + service.value
            guard entries.isEmpty || entry.count == entries[0].count, 2 + (entries.count + 1) * entry.count <= mtu
            else { break }
            entries.append(entry)
        }
        guard let first = entries.first else { return error(0x10, range.lowerBound, .attributeNotFound) }
        return [0x11, UInt8(first.count)] + entries.flatMap { $0 }
    }

    private func readByType(_ range: ClosedRange<UInt16>, _ type: AttributeUUID) -> [UInt8] {
        var entries: [[UInt8]] = []
        for attribute in attributes where range.contains(attribute.handle) && attribute.type == type {
            let entry = le(attribute.handle) + attribute.value.prefix(min(253, mtu - 4))
            guard entries.isEmpty || entry.count == entries[0].count, 2 + (entries.count + 1) * entry.count <= mtu
            else { break }
            entries.append(entry)
        }
        guard let first = entries.first else { return error(0x08, range.lowerBound, .attributeNotFound) }
        return [0x09, UInt8(first.count)] + entries.flatMap { $0 }
    }

    private func findInformation(_ range: ClosedRange<UInt16>) -> [UInt8] {
        var entries: [[UInt8]] = []
        for attribute in attributes where range.contains(attribute.handle) {
            let entry = le(attribute.handle) + attribute.type.wire
            guard entries.isEmpty || entry.count == entries[0].count, 2 + (entries.count + 1) * entry.count <= mtu
            else { break }
            entries.append(entry)
        }
        guard let first = entries.first else { return error(0x04, range.lowerBound, .attributeNotFound) }
        return [0x05, first.count == 4 ? 0x01 : 0x02] + entries.flatMap { $0 }
    }

    private func read(_ handle: UInt16, offset: Int, opcode: UInt8) -> [UInt8] {
        guard let attribute = attributes.first(where: { $0.handle == handle }) else {
            return error(opcode, handle, .invalidHandle)
        }
        guard offset <= attribute.value.count else { return error(opcode, handle, .invalidOffset) }
        return [opcode + 1] + attribute.value[offset...].prefix(mtu - 1)
    }

    private mutating func write(_ handle: UInt16, _ value: [UInt8]) -> [UInt8] {
        guard let index = attributes.firstIndex(where: { $0.handle == handle }) else {
            return error(0x12, handle, .invalidHandle)
        }
        guard attributes[index].writable else { return error(0x12, handle, .writeNotPermitted) }
        if let length = attributes[index].length, value.count != length {
            return error(0x12, handle, .invalidAttributeValueLength)
        }
        attributes[index].value = value
        return [0x13]
    }

    private func error(_ opcode: UInt8, _ handle: UInt16, _ code: ATTErrorCode) -> [UInt8] {
        [0x01, opcode] + le(handle) + [code.rawValue]
    }

    private func u16(_ pdu: [UInt8], _ at: Int) -> UInt16 { UInt16(pdu[at]) | UInt16(pdu[at + 1]) << 8 }
    private func le(_ value: UInt16) -> [UInt8] { [UInt8(value & 0xFF), UInt8(value >> 8)] }
}
