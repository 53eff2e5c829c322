public import WhereaboutsCore
public import WhereaboutsJSON

/// How a GATT job ended.
public enum GATTJobStatus: Sendable, Hashable {
    /// Done; the result carries the values.
    case ok
    /// The tag did not take a connection: the controller's status (0x3E: not established), or nil when the agent
    /// has not heard the tag lately and so has no address to connect to.
    case notConnectable(code: UInt8?)
    /// The job's deadline passed (no connection in time, or a tag that went silent mid-job).
    case timeout
    /// The tag answered with an ATT error about an attribute: the code, its handle, its UUID when known
    /// (`0x2a19`, or the 128-bit form).
    case attError(code: UInt8, handle: UInt16, uuid: String?)
    /// The link closed before the job ended.
    case linkLost
    /// The agent's queue was full; try later.
    case busy
    /// The request was not run: malformed, or a job id already waiting or running.
    case refused(reason: String)

    /// The name on the wire.
    public var name: String {
        switch self {
        case .ok: "ok"
        case .notConnectable: "notConnectable"
        case .timeout: "timeout"
        case .attError: "attError"
        case .linkLost: "linkLost"
        case .busy: "busy"
        case .refused: "refused"
        }
    }
}

/// What a finished job read: the members its operation fills.
public struct GATTJobValues: Sendable, Hashable {
    /// Battery level, percent.
    public var battery: Int?
    public var manufacturer: String?
    public var model: String?
    public var firmware: String?
    /// The configuration read back after a provisioning write.
    public var provisioned: BeaconProvisioning?

    public init(
        battery: Int? = nil, manufacturer: String? = nil, model: String? = nil, firmware: String? = nil,
        provisioned: BeaconProvisioning? = nil
    ) {
        self.battery = battery
        self.manufacturer = manufacturer
        self.model = model
        self.firmware = firmware
        self.provisioned = provisioned
    }

    /// The longest text value kept, bytes (Device Information strings are short).
    public static let maximumTextBytes = 128

    /// A Device Information value as text: UTF-8 (invalid bytes replaced), cut to ``maximumTextBytes`` at a
    /// character boundary, so that the result's decoder takes it.
    public static func text(_ bytes: [UInt8]) -> String {
        clipped(String(decoding: bytes, as: UTF8.self), toBytes: maximumTextBytes)
    }

    var json: JSONValue {
        var members: [(key: String, value: JSONValue)] = []
        if let battery { members.append(("battery", .number(Double(battery)))) }
        if let manufacturer { members.append(("manufacturer", .string(manufacturer))) }
        if let model { members.append(("model", .string(model))) }
        if let firmware { members.append(("firmware", .string(firmware))) }
        if let provisioned { members.append(("provisioned", provisioned.json)) }
        return .object(JSONObject(members))
    }

    init(_ reader: FieldReader) throws(FieldProblem) {
        try reader.onlyMembers(["battery", "manufacturer", "model", "firmware", "provisioned"])
        func text(_ key: String) throws(FieldProblem) -> String? {
            let value = try reader.optionalString(key)
            if let value, value.utf8.count > Self.maximumTextBytes { throw .invalid(key) }
            return value
        }
        self.init(
            battery: try reader.optionalInteger("battery", in: 0...100), manufacturer: try text("manufacturer"),
            model: try text("model"), firmware: try text("firmware"),
            provisioned: try reader.optionalValue("provisioned").map { _ throws(FieldProblem) in
                try BeaconProvisioning(reader.nested("provisioned"))
            })
    }
}

/// The answer to one GATT job, the payload of `…/agents/<agent>/gatt/results`:
///
/// ```json
/// {"id":"job-7","tag":"ibeacon-<uuid>-1-7","status":"ok","values":{"battery":87}}
/// {"id":"job-8","status":"attError","code":13,"handle":42,"uuid":"0x2a19"}
/// {"id":null,"status":"refused","reason":"missing field \"id\""}
/// ```
///
/// `id` is null only for a request so malformed that no job id could be read from it. `tag` is there when the
/// request named one. `values` comes with `ok`;
/// `code` with `notConnectable` (when the controller gave one) and `attError`; `handle` and `uuid` with `attError`;
/// `reason` with `refused`.
public struct GATTJobResult: JSONPayload, Hashable {
    public var id: GATTJobID?
    /// The tag the request named, echoed so that a listener (the locator) can file a battery level under its tag
    /// without having seen the request.
    public var tag: TagIdentity?
    public var status: GATTJobStatus
    public var values: GATTJobValues?

    public init(id: GATTJobID?, tag: TagIdentity? = nil, status: GATTJobStatus, values: GATTJobValues? = nil) {
        self.id = id
        self.tag = tag
        self.status = status
        self.values = values
    }

    /// The result that answers a refused request.
    public init(_ refusal: GATTJobRefusal) {
        self.init(id: refusal.id, status: .refused(reason: refusal.reason))
    }

    /// The longest refusal reason kept, bytes.
    public static let maximumReasonBytes = 512

    public var json: JSONValue {
        var members: [(key: String, value: JSONValue)] = [
            ("id", .optionalString(id?.rawValue))
        ]
        if let tag { members.append(("tag", .string(tag.description))) }
        members.append(("status", .string(status.name)))
        switch status {
        case .ok, .timeout, .linkLost, .busy: break
        case .notConnectable(let code): if let code { members.append(("code", .number(Double(code)))) }
        case .attError(let code, let handle, let uuid):
            members += [("code", .number(Double(code))), ("handle", .number(Double(handle)))]
            if let uuid { members.append(("uuid", .string(uuid))) }
        case .refused(let reason):
            members.append(("reason", .string(clipped(reason, toBytes: Self.maximumReasonBytes))))
        }
        if let values { members.append(("values", values.json)) }
        return .object(JSONObject(members))
    }

    public init(json: JSONValue) throws(PayloadError) {
        let reader = try FieldReader(json: json)
        self = try decodingMembers { () throws(FieldProblem) -> GATTJobResult in
            try reader.onlyMembers(["id", "tag", "status", "code", "handle", "uuid", "reason", "values"])
            let id = try reader.optionalString("id").map { text throws(FieldProblem) -> GATTJobID in
                guard let id = GATTJobID(text) else { throw .invalid("id") }
                return id
            }
            let tag = try reader.optionalString("tag").map { text throws(FieldProblem) -> TagIdentity in
                guard let tag = TagIdentity(wire: text) else { throw .invalid("tag") }
                return tag
            }
            let status = try Self.status(reader)
            let values = try reader.optionalValue("values").map { _ throws(FieldProblem) in
                try GATTJobValues(reader.nested("values"))
            }
            return GATTJobResult(id: id, tag: tag, status: status, values: values)
        }
    }

    private static func status(_ reader: FieldReader) throws(FieldProblem) -> GATTJobStatus {
        let name = try reader.string("status")
        let allowed: Set<String> =
            switch name {
            case "notConnectable": ["code"]
            case "attError": ["code", "handle", "uuid"]
            case "refused": ["reason"]
            default: []
            }
        for key in ["code", "handle", "uuid", "reason"] where !allowed.contains(key) {
            if reader.optionalValue(key) != nil { throw .invalid(key) }
        }
        switch name {
        case "ok": return .ok
        case "timeout": return .timeout
        case "linkLost": return .linkLost
        case "busy": return .busy
        case "notConnectable":
            return .notConnectable(code: try reader.optionalInteger("code", in: 0...255).map(UInt8.init))
        case "attError":
            let uuid = try reader.optionalString("uuid")
            if let uuid, !Self.isAttributeUUID(uuid) { throw .invalid("uuid") }
            return .attError(
                code: UInt8(try reader.integer("code", in: 0...255)), handle: try reader.uint16("handle"), uuid: uuid)
        case "refused":
            let reason = try reader.string("reason")
            guard reason.utf8.count <= maximumReasonBytes else { throw .invalid("reason") }
            return .refused(reason: reason)
        default: throw .invalid("status")
        }
    }

    /// `0x2a19` or a 128-bit UUID's 36 characters: hex digits, `x` and `-` only.
    static func isAttributeUUID(_ text: String) -> Bool {
        (1...36).contains(text.utf8.count)
            && text.utf8.allSatisfy { $0 == UInt8(ascii: "x") || $0 == UInt8(ascii: "-") || $0.isHexDigit }
    }

}

/// `text` cut to at most `limit` UTF-8 bytes at a character boundary.
func clipped(_ text: String, toBytes limit: Int) -> String {
    var clipped = ""
    for character in text {
        guard clipped.utf8.count + character.utf8.count <= limit else { break }
        clipped.append(character)
    }
    return clipped
}

extension UInt8 {
    fileprivate var isHexDigit: Bool {
        (0x30...0x39).contains(self) || (0x41...0x46).contains(self) || (0x61...0x66).contains(self)
    }
}
