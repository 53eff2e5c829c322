import WhereaboutsCore

/// The name of one scanner agent: its MQTT username and one level of its topics.
///
/// Only `[A-Za-z0-9_-]`, 1 to 64 characters. Anything else (`/`, `+`, `#`, `$`, `..`, spaces, NUL, non-ASCII)
/// is refused here, so that no identifier from a configuration file or a payload can add, remove or wildcard
/// a topic level, nor defeat the broker's `%u` ACL patterns.
public struct AgentID: Sendable, Hashable, Comparable, CustomStringConvertible {
    /// The identifier text, known to satisfy the whitelist.
    public let rawValue: String

    /// The longest identifier accepted, in characters (all ASCII, so also bytes).
    public static let maximumLength = 64

    /// Makes an agent id, or nil when `text` is empty, longer than 64 characters or uses anything but
    /// `[A-Za-z0-9_-]`.
    public init?(_ text: String) {
        // The same rule the map loader applies to agent ids: one definition, in Core.
        guard AgentIdentifier.isValid(text) else { return nil }
        rawValue = text
    }

    public var description: String { rawValue }

    public static func < (lhs: AgentID, rhs: AgentID) -> Bool { lhs.rawValue < rhs.rawValue }
}

/// The character rules shared by every identifier that becomes a topic level or a Home Assistant id.
enum WireCharacters {
    /// Whether a UTF-8 byte is in `[A-Za-z0-9_-]`.
    static func isIdentifierByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
            UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "_"), UInt8(ascii: "-"):
            true
        default:
            false
        }
    }

    /// Whether `text` is 1...`maximumLength` bytes of `[A-Za-z0-9_-]`.
    static func isIdentifier(_ text: String, maximumLength: Int) -> Bool {
        let utf8 = text.utf8
        guard !utf8.isEmpty, utf8.count <= maximumLength else { return false }
        return utf8.allSatisfy(isIdentifierByte)
    }
}
