public import WhereaboutsCore

extension TagIdentity {
    /// The longest tag text looked at; every canonical form is shorter.
    static let maximumWireLength = 80

    /// Parses a tag identity that arrived from outside (a payload, a topic, a recording), checking it is short
    /// ASCII in `[A-Za-z0-9-]` before the canonical parser sees it.
    ///
    /// The pre-check keeps multi-byte and over-long text away from the canonical parser, which counts
    /// characters and bytes differently. Returns nil for anything that is not a tag identity.
    public init?(wire text: String) {
        let utf8 = text.utf8
        guard !utf8.isEmpty, utf8.count <= Self.maximumWireLength,
            utf8.allSatisfy({ WireCharacters.isIdentifierByte($0) && $0 != UInt8(ascii: "_") })
        else { return nil }
        guard let identity = TagIdentity(text) else { return nil }
        self = identity
    }
}
