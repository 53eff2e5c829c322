/// An MQTT topic name that Whereabouts publishes to: built only by ``Topics``, from validated identifiers.
///
/// There is no public initializer from text. Every level is either a fixed word or an identifier that has
/// passed its whitelist, so a topic never contains `+`, `#`, an empty level, or a level chosen by input data.
public struct Topic: Sendable, Hashable, CustomStringConvertible {
    /// The full topic name, levels joined by `/`.
    public let name: String

    init(_ levels: [String]) {
        name = levels.joined(separator: "/")
    }

    /// A topic already joined (only from levels that are fixed words or validated identifiers).
    init(name: String) {
        self.name = name
    }

    /// The levels of the topic.
    public var levels: [Substring] { name.split(separator: "/", omittingEmptySubsequences: false) }

    public var description: String { name }
}

/// An MQTT subscription filter that Whereabouts subscribes to: built only by ``Topics``.
public struct TopicFilter: Sendable, Hashable, CustomStringConvertible {
    /// The filter text, with `+` in the levels that vary.
    public let filter: String

    init(_ levels: [String]) {
        filter = levels.joined(separator: "/")
    }

    /// The filter that matches exactly one of our topics (a locator subscribing agent by agent).
    public init(exactly topic: Topic) {
        filter = topic.name
    }

    public var description: String { filter }
}
