public import WhereaboutsCore
public import WhereaboutsJSON

/// The name an operator gives a GATT job, echoed in its result: `[A-Za-z0-9_-]`, 1 to 64 characters, like an agent id.
public struct GATTJobID: Sendable, Hashable, CustomStringConvertible {
    /// The identifier text, known to satisfy the whitelist.
    public let rawValue: String

    /// Nil for an empty, over-long or non-`[A-Za-z0-9_-]` text.
    public init?(_ text: String) {
        guard WireCharacters.isIdentifier(text, maximumLength: 64) else { return nil }
        rawValue = text
    }

    public var description: String { rawValue }
}

/// What a provisioning job writes into a beacon (and what it reads back): the iBeacon fields.
public struct BeaconProvisioning: Sendable, Hashable {
    /// The proximity UUID the beacon is to advertise.
    public var uuid: BeaconUUID
    public var major: UInt16
    public var minor: UInt16
    /// The measured power at 1 m, dBm.
    public var power: Int8

    public init(uuid: BeaconUUID, major: UInt16, minor: UInt16, power: Int8) {
        self.uuid = uuid
        self.major = major
        self.minor = minor
        self.power = power
    }

    /// The range accepted for `power`: what a beacon can report at 1 m.
    public static let powerRange = -127...20

    var json: JSONValue {
        .object(
            JSONObject([
                ("uuid", .string(uuid.description)), ("major", .number(Double(major))),
                ("minor", .number(Double(minor))), ("power", .number(Double(power))),
            ]))
    }

    init(_ reader: FieldReader) throws(FieldProblem) {
        try reader.onlyMembers(["uuid", "major", "minor", "power"])
        guard let uuid = BeaconUUID(try reader.string("uuid")) else { throw .invalid("uuid") }
        self.init(
            uuid: uuid, major: try reader.uint16("major"), minor: try reader.uint16("minor"),
            power: Int8(try reader.integer("power", in: Self.powerRange)))
    }
}

/// What a GATT job does on a tag.
public enum GATTOperation: Sendable, Hashable {
    /// Reads Battery Level (0x2A19 in service 0x180F).
    case battery
    /// Reads Device Information (0x180A): manufacturer, model, firmware.
    case info
    /// Writes the beacon configuration characteristic and reads it back.
    case provision(BeaconProvisioning)

    /// The name on the wire.
    public var name: String {
        switch self {
        case .battery: "battery"
        case .info: "info"
        case .provision: "provision"
        }
    }
}

/// The public or random address a job connects to.
public struct GATTJobAddress: Sendable, Hashable {
    /// The 48-bit address.
    public var address: UInt64
    /// Whether it is a random (static) address; tags mostly use one.
    public var isRandom: Bool

    public init(address: UInt64, isRandom: Bool) {
        self.address = address
        self.isRandom = isRandom
    }
}

/// One GATT job, the payload of `…/agents/<agent>/gatt/requests`:
///
/// ```json
/// {"id":"job-7","tag":"ibeacon-<uuid>-1-7","address":"mac-c01122334455","addressType":"random",
///  "operation":"provision","provision":{"uuid":"<uuid>","major":1,"minor":8,"power":-59},"deadline":20}
/// ```
///
/// `tag` (a tag identity as the locator names it) and `address` (`mac-<12 hex>`) say which tag; at least one is
/// given, and with only `tag` the agent connects to the address it last heard that tag from. `addressType` is
/// `random` (the default) or `public`, and only with `address`. `provision` is there exactly when the operation
/// is `provision`. `deadline` is the seconds the whole job may take, counted from when the agent receives it
/// (1 to 120, default 30): clocks of operator and agent need not agree. Any other member is refused.
public struct GATTJobRequest: Sendable, Hashable {
    public var id: GATTJobID
    public var tag: TagIdentity?
    public var address: GATTJobAddress?
    public var operation: GATTOperation
    /// Seconds, from reception.
    public var deadline: Double

    /// The deadlines accepted, seconds.
    public static let deadlineRange = 1.0...120.0
    /// The deadline when the request gives none.
    public static let defaultDeadline = 30.0
    /// The largest request payload read, bytes.
    public static let maximumBytes = 2048

    public init(
        id: GATTJobID, tag: TagIdentity?, address: GATTJobAddress?, operation: GATTOperation,
        deadline: Double = GATTJobRequest.defaultDeadline
    ) {
        self.id = id
        self.tag = tag
        self.address = address
        self.operation = operation
        self.deadline = deadline
    }

    /// The payload as a JSON value.
    public var json: JSONValue {
        var members: [(key: String, value: JSONValue)] = [("id", .string(id.rawValue))]
        if let tag { members.append(("tag", .string(tag.description))) }
        if let address {
            members.append(("address", .string(TagIdentity.address(address.address).description)))
            members.append(("addressType", .string(address.isRandom ? "random" : "public")))
        }
        members.append(("operation", .string(operation.name)))
        if case .provision(let values) = operation { members.append(("provision", values.json)) }
        members.append(("deadline", .number(deadline)))
        return .object(JSONObject(members))
    }

    /// Compact JSON text.
    public var payload: String { JSONWriter().string(json) }

    /// Reads a received request, or says why it is refused (with the job id when that much could be read), so that
    /// the agent can answer every request, malformed ones included.
    public static func decode(_ bytes: [UInt8]) -> Result<GATTJobRequest, GATTJobRefusal> {
        guard bytes.count <= maximumBytes else {
            return .failure(GATTJobRefusal(id: nil, reason: "request longer than \(maximumBytes) bytes"))
        }
        guard let text = String(validating: bytes, as: UTF8.self) else {
            return .failure(GATTJobRefusal(id: nil, reason: "request is not UTF-8"))
        }
        let reader: FieldReader
        do {
            reader = try FieldReader.parseObject(text, parser: JSONParser(maximumBytes: maximumBytes, maximumDepth: 4))
        } catch {
            return .failure(GATTJobRefusal(id: nil, reason: "\(error)"))
        }
        let id = (try? reader.string("id")).flatMap(GATTJobID.init)
        do {
            return .success(try decodingMembers { () throws(FieldProblem) in try GATTJobRequest(reader) })
        } catch {
            return .failure(GATTJobRefusal(id: id, reason: "\(error)"))
        }
    }

    private init(_ reader: FieldReader) throws(FieldProblem) {
        try reader.onlyMembers(["id", "tag", "address", "addressType", "operation", "provision", "deadline"])
        guard let id = GATTJobID(try reader.string("id")) else { throw .invalid("id") }
        let tag = try reader.optionalString("tag").map { text throws(FieldProblem) -> TagIdentity in
            guard let tag = TagIdentity(wire: text) else { throw .invalid("tag") }
            return tag
        }
        let address = try Self.address(reader)
        guard tag != nil || address != nil else { throw .missing("tag") }
        let operation: GATTOperation
        switch try reader.string("operation") {
        case "battery": operation = .battery
        case "info": operation = .info
        case "provision": operation = .provision(try BeaconProvisioning(reader.nested("provision")))
        default: throw .invalid("operation")
        }
        if operation.name != "provision", reader.optionalValue("provision") != nil { throw .invalid("provision") }
        let deadline = try reader.optionalNumber("deadline") ?? Self.defaultDeadline
        guard Self.deadlineRange.contains(deadline) else { throw .invalid("deadline") }
        self.init(id: id, tag: tag, address: address, operation: operation, deadline: deadline)
    }

    private static func address(_ reader: FieldReader) throws(FieldProblem) -> GATTJobAddress? {
        guard let text = try reader.optionalString("address") else {
            if reader.optionalValue("addressType") != nil { throw .invalid("addressType") }
            return nil
        }
        guard case .address(let address)? = TagIdentity(wire: text) else { throw .invalid("address") }
        switch try reader.optionalString("addressType") ?? "random" {
        case "random": return GATTJobAddress(address: address, isRandom: true)
        case "public": return GATTJobAddress(address: address, isRandom: false)
        default: throw .invalid("addressType")
        }
    }
}

/// Why a request was refused before it ran: the job id, when it could be read, and the reason in words.
public struct GATTJobRefusal: Error, Sendable, Hashable {
    public var id: GATTJobID?
    public var reason: String

    public init(id: GATTJobID?, reason: String) {
        self.id = id
        self.reason = reason
    }
}

extension FieldReader {
    /// Refuses an object with a member not in `known` (a misspelt member would otherwise be ignored silently).
    func onlyMembers(_ known: Set<String>) throws(FieldProblem) {
        if let unknown = object.keys.first(where: { !known.contains($0) }) { throw .invalid(unknown) }
    }
}
