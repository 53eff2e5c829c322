import WhereaboutsMapFile

/// An uploaded floor-plan picture: what kind it is, told by its first bytes (never by its name), and the name it
/// is stored under.
public enum UnderlayImage: String, Sendable, Equatable {
    case png
    case jpeg
    case svg

    /// The largest picture taken, bytes.
    public static let maximumBytes = 20 << 20

    /// The kind of picture `bytes` hold, or nil when they are not a PNG, a JPEG or an SVG document.
    public init?(_ bytes: [UInt8]) {
        if bytes.starts(with: [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]) {
            self = .png
        } else if bytes.starts(with: [0xFF, 0xD8, 0xFF]) {
            self = .jpeg
        } else if Self.isSVG(bytes) {
            self = .svg
        } else {
            return nil
        }
    }

    /// The content type it is served with.
    public var contentType: String {
        switch self {
        case .png: "image/png"
        case .jpeg: "image/jpeg"
        case .svg: "image/svg+xml"
        }
    }

    /// The file name extensions it may carry, the usual one first.
    var extensions: [String] {
        switch self {
        case .png: ["png"]
        case .jpeg: ["jpg", "jpeg"]
        case .svg: ["svg"]
        }
    }

    /// SVG text: UTF-8 that starts (after a byte-order mark and white space) with an XML declaration, a comment, a
    /// doctype or the `<svg` element itself, and has an `<svg` element within its first 4 KB.
    static func isSVG(_ bytes: [UInt8]) -> Bool {
        var start = bytes.starts(with: [0xEF, 0xBB, 0xBF]) ? 3 : 0
        while start < bytes.count, [0x20, 0x09, 0x0A, 0x0D].contains(bytes[start]) { start += 1 }
        let head = bytes[start..<min(bytes.count, start + 4096)]
        // The cut at 4 KB may split a character; the whole document's encoding is checked below.
        let text = String(decoding: head, as: UTF8.self)
        let opening = ["<?xml", "<!--", "<!doctype svg", "<svg"]
        guard opening.contains(where: { text.lowercased().hasPrefix($0) }), text.contains("<svg") else { return false }
        return String(validating: bytes, as: UTF8.self) != nil
    }

    /// The name a picture uploaded as `requested` is stored under, or nil when the request names a path rather than
    /// a file (a slash, a backslash, `..`, a control character): refused, not repaired.
    ///
    /// Otherwise every character outside `A-Z a-z 0-9 . _ -` becomes `-`, leading dots go, the stem is cut to fit
    /// 128 characters, and the extension is made the picture's own (`plan.PNG` stays, `plan.gif` holding a PNG
    /// becomes `plan.gif.png`), so the result passes ``FloorUnderlay/isSafeFileName(_:)``.
    public func storedName(for requested: String) -> String? {
        guard !requested.contains("/"), !requested.contains("\\"), !requested.contains(".."),
            !requested.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F })
        else { return nil }
        var cleaned = String(
            requested.unicodeScalars.map { scalar -> Character in
                switch scalar {
                case "A"..."Z", "a"..."z", "0"..."9", ".", "_", "-": Character(scalar)
                default: "-"
                }
            })
        while cleaned.hasPrefix(".") { cleaned.removeFirst() }
        var stem = cleaned
        var suffix = extensions[0]
        if let dot = cleaned.lastIndex(of: "."), extensions.contains(cleaned[cleaned.index(after: dot)...].lowercased())
        {
            stem = String(cleaned[..<dot])
            suffix = String(cleaned[cleaned.index(after: dot)...])
        }
        while stem.hasSuffix(".") { stem.removeLast() }
        if stem.isEmpty { stem = "underlay" }
        let result = String(stem.prefix(127 - suffix.count)) + "." + suffix
        return FloorUnderlay.isSafeFileName(result) ? result : nil
    }
}
