/// The rule for agent ids: 1 to 64 characters of `[A-Za-z0-9_-]`, so an id can stand as a topic level and a
/// broker user name.
public enum AgentIdentifier {
    /// Whether `text` is a valid agent id.
    public static func isValid(_ text: String) -> Bool {
        let utf8 = text.utf8
        guard !utf8.isEmpty, utf8.count <= 64 else { return false }
        return utf8.allSatisfy { byte in
            (byte >= UInt8(ascii: "a") && byte <= UInt8(ascii: "z"))
                || (byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z"))
                || (byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9")) || byte == UInt8(ascii: "_")
                || byte == UInt8(ascii: "-")
        }
    }
}
