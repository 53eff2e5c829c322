/// A primary service found by discovery: its handle range and type.
public struct GATTService: Sendable, Hashable {
    public var start: UInt16
    public var end: UInt16
    public var uuid: AttributeUUID

    public init(start: UInt16, end: UInt16, uuid: AttributeUUID) {
        self.start = start
        self.end = end
        self.uuid = uuid
    }
}

/// What a characteristic allows (Bluetooth Core Vol 3 Part G §3.3.1.1).
public struct CharacteristicProperties: OptionSet, Sendable, Hashable {
    public let rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }

    public static let broadcast = CharacteristicProperties(rawValue: 0x01)
    public static let read = CharacteristicProperties(rawValue: 0x02)
    public static let writeWithoutResponse = CharacteristicProperties(rawValue: 0x04)
    public static let write = CharacteristicProperties(rawValue: 0x08)
    public static let notify = CharacteristicProperties(rawValue: 0x10)
    public static let indicate = CharacteristicProperties(rawValue: 0x20)
}

/// A characteristic found by discovery: its declaration, value handle, properties and type, and the last handle
/// that belongs to it (its descriptors lie between the value and that).
public struct GATTCharacteristic: Sendable, Hashable {
    public var declaration: UInt16
    public var valueHandle: UInt16
    public var properties: CharacteristicProperties
    public var uuid: AttributeUUID
    public var end: UInt16

    public init(
        declaration: UInt16, valueHandle: UInt16, properties: CharacteristicProperties, uuid: AttributeUUID,
        end: UInt16
    ) {
        self.declaration = declaration
        self.valueHandle = valueHandle
        self.properties = properties
        self.uuid = uuid
        self.end = end
    }
}

/// An attribute's handle and value, as Read Using Characteristic UUID returns them.
public struct AttributeValue: Sendable, Hashable {
    public var handle: UInt16
    public var value: [UInt8]

    public init(handle: UInt16, value: [UInt8]) {
        self.handle = handle
        self.value = value
    }
}

/// One GATT procedure (Bluetooth Core Vol 3 Part G §4): what ``GATTClient`` runs, one at a time.
public enum GATTProcedure: Sendable, Hashable {
    /// Exchange MTU, offering the largest ATT PDU this client takes (23...517).
    case exchangeMTU(UInt16)
    /// Discover All Primary Services.
    case discoverPrimaryServices
    /// Discover All Characteristics of a Service.
    case discoverCharacteristics(GATTService)
    /// Read Characteristic Value by handle (long values follow with Read Blob, up to 512 bytes).
    case read(UInt16)
    /// Read Using Characteristic UUID within a handle range (one request: the values that fit one response).
    case readByType(AttributeUUID, start: UInt16, end: UInt16)
    /// Write Characteristic Value, with a response.
    case write(UInt16, [UInt8])
    /// Finds the characteristic's Client Characteristic Configuration descriptor and writes it: notifications, or
    /// indications when `indications` is set.
    case subscribe(GATTCharacteristic, indications: Bool)
}

/// What a procedure returned.
public enum GATTResult: Sendable, Hashable {
    /// The MTU now in use.
    case mtu(Int)
    case services([GATTService])
    case characteristics([GATTCharacteristic])
    case value([UInt8])
    case values([AttributeValue])
    case written
    /// Subscribed through the descriptor at this handle.
    case subscribed(configuration: UInt16)
}
