/// An ATT error code from a server's Error Response (Bluetooth Core Vol 3 Part F §3.4.1.1, and the common profile
/// codes of the Core Specification Supplement Part B §1.2), each with its specification name.
public struct ATTErrorCode: RawRepresentable, Sendable, Hashable, CustomStringConvertible {
    public let rawValue: UInt8

    public init(rawValue: UInt8) { self.rawValue = rawValue }

    public static let invalidHandle = ATTErrorCode(rawValue: 0x01)
    public static let readNotPermitted = ATTErrorCode(rawValue: 0x02)
    public static let writeNotPermitted = ATTErrorCode(rawValue: 0x03)
    public static let invalidPDU = ATTErrorCode(rawValue: 0x04)
    public static let insufficientAuthentication = ATTErrorCode(rawValue: 0x05)
    public static let requestNotSupported = ATTErrorCode(rawValue: 0x06)
    public static let invalidOffset = ATTErrorCode(rawValue: 0x07)
    public static let insufficientAuthorization = ATTErrorCode(rawValue: 0x08)
    public static let prepareQueueFull = ATTErrorCode(rawValue: 0x09)
    public static let attributeNotFound = ATTErrorCode(rawValue: 0x0A)
    public static let attributeNotLong = ATTErrorCode(rawValue: 0x0B)
    public static let encryptionKeySizeTooShort = ATTErrorCode(rawValue: 0x0C)
    public static let invalidAttributeValueLength = ATTErrorCode(rawValue: 0x0D)
    public static let unlikelyError = ATTErrorCode(rawValue: 0x0E)
    public static let insufficientEncryption = ATTErrorCode(rawValue: 0x0F)
    public static let unsupportedGroupType = ATTErrorCode(rawValue: 0x10)
    public static let insufficientResources = ATTErrorCode(rawValue: 0x11)
    public static let databaseOutOfSync = ATTErrorCode(rawValue: 0x12)
    public static let valueNotAllowed = ATTErrorCode(rawValue: 0x13)
    public static let writeRequestRejected = ATTErrorCode(rawValue: 0xFC)
    public static let clientConfigurationImproperlyConfigured = ATTErrorCode(rawValue: 0xFD)
    public static let procedureAlreadyInProgress = ATTErrorCode(rawValue: 0xFE)
    public static let outOfRange = ATTErrorCode(rawValue: 0xFF)

    private static let names: [UInt8: String] = [
        0x01: "invalid handle", 0x02: "read not permitted", 0x03: "write not permitted", 0x04: "invalid PDU",
        0x05: "insufficient authentication", 0x06: "request not supported", 0x07: "invalid offset",
        0x08: "insufficient authorization", 0x09: "prepare queue full", 0x0A: "attribute not found",
        0x0B: "attribute not long", 0x0C: "encryption key size too short", 0x0D: "invalid attribute value length",
        0x0E: "unlikely error", 0x0F: "insufficient encryption", 0x10: "unsupported group type",
        0x11: "insufficient resources", 0x12: "database out of sync", 0x13: "value not allowed",
        0xFC: "write request rejected", 0xFD: "client characteristic configuration descriptor improperly configured",
        0xFE: "procedure already in progress", 0xFF: "out of range",
    ]

    /// The specification's name; application codes (0x80-0x9F) and reserved ones are named by range.
    public var name: String {
        if let name = Self.names[rawValue] { return name }
        switch rawValue {
        case 0x80...0x9F: return "application error"
        case 0xE0...0xFB: return "common profile error"
        default: return "reserved error"
        }
    }

    public var description: String { "\(name) (0x\(AttributeUUID.hex(UInt64(rawValue), digits: 2)))" }
}

/// Why a GATT procedure failed. Each case names what it was about.
public enum GATTError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The server answered with an ATT error about this attribute (handle, and its type when known).
    case attribute(ATTErrorCode, request: UInt8, handle: UInt16, uuid: AttributeUUID?)
    /// The server did not answer within the transaction timeout (30 s); the bearer is now unusable (Vol 3 Part F
    /// §3.3.3), so the link should be closed.
    case timedOut(request: UInt8)
    /// The server's answer did not add up (wrong length, handles going backwards, too many results).
    case malformedResponse(request: UInt8, String)
    /// A procedure was started while one was running.
    case busy
    /// A value to write is longer than the MTU lets one Write Request carry (MTU - 3 bytes).
    case valueTooLong(handle: UInt16, uuid: AttributeUUID?, length: Int, mtu: Int)
    /// The characteristic has no Client Characteristic Configuration descriptor to subscribe with.
    case noClientConfiguration(handle: UInt16, uuid: AttributeUUID?)
    /// The characteristic does not allow what was asked (notify, indicate).
    case notSupportedByCharacteristic(handle: UInt16, uuid: AttributeUUID?, String)
    /// The link closed (or timed out earlier) before the procedure ended.
    case linkLost

    public var description: String {
        switch self {
        case .attribute(let code, let request, let handle, let uuid):
            "ATT error \(code) for \(Self.attribute(handle, uuid)) (request 0x\(AttributeUUID.hex(UInt64(request), digits: 2)))"
        case .timedOut(let request):
            "no ATT response in 30 s to request 0x\(AttributeUUID.hex(UInt64(request), digits: 2))"
        case .malformedResponse(let request, let why):
            "malformed ATT response to request 0x\(AttributeUUID.hex(UInt64(request), digits: 2)): \(why)"
        case .busy: "a GATT procedure is already running on this link"
        case .valueTooLong(let handle, let uuid, let length, let mtu):
            "a value of \(length) bytes for \(Self.attribute(handle, uuid)) does not fit the MTU of \(mtu)"
        case .noClientConfiguration(let handle, let uuid):
            "\(Self.attribute(handle, uuid)) has no client characteristic configuration descriptor"
        case .notSupportedByCharacteristic(let handle, let uuid, let what):
            "\(Self.attribute(handle, uuid)) does not support \(what)"
        case .linkLost: "the link was lost"
        }
    }

    /// "attribute 0x0003 (0x2A19)".
    static func attribute(_ handle: UInt16, _ uuid: AttributeUUID?) -> String {
        "attribute 0x\(AttributeUUID.hex(UInt64(handle), digits: 4))" + (uuid.map { " (\($0))" } ?? "")
    }
}
