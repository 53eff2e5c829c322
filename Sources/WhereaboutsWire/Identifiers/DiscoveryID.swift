/// A Home Assistant discovery `node_id`, `object_id` or `unique_id`: `[a-zA-Z0-9_-]+`.
///
/// Home Assistant refuses discovery topics whose ids use anything else; we refuse them first, so that a zone
/// or tag name can never reach a discovery topic.
public struct DiscoveryID: Sendable, Hashable, CustomStringConvertible {
    /// The id text, known to satisfy the whitelist.
    public let rawValue: String

    /// The longest id accepted, in characters. Home Assistant sets no limit; topics and entity ids stay short.
    public static let maximumLength = 200

    /// Makes an id, or nil when `text` is empty, too long or uses anything but `[a-zA-Z0-9_-]`.
    public init?(_ text: String) {
        guard WireCharacters.isIdentifier(text, maximumLength: Self.maximumLength) else { return nil }
        rawValue = text
    }

    public var description: String { rawValue }
}

extension DiscoveryID {
    /// Wraps text built in this module only from whitelisted parts (fixed words, digits, hex, canonical tags).
    init(assembled text: String) {
        rawValue = text
    }
}
