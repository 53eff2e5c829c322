public import WhereaboutsCore
public import WhereaboutsJSON

/// A floor's plan picture, drawn under the map in the editor: `"underlay": {"file": "plan.png", "origin": [x, y],
/// "scale": s, "rotation": r}` in a floor of the map file (docs/map.md).
///
/// The picture's pixel (u, v), v counted down from its top edge, lies on the plan at
/// `origin + R(rotation) · (u · scale, −v · scale)`: `origin` is where its top-left corner lies, `scale` is metres per
/// pixel, `rotation` turns it counter-clockwise about that corner, in degrees. Only the editor reads it; the engine's
/// `Floor` knows nothing of it, so it lives here, beside the loader that validates it.
public struct FloorUnderlay: Sendable, Equatable {
    /// The picture's file name, in the map file's directory.
    public var file: String
    /// Where the picture's top-left corner lies on the plan, metres.
    public var origin: Point
    /// Metres per picture pixel.
    public var scale: Double
    /// Degrees counter-clockwise about `origin`.
    public var rotation: Double

    public init(file: String, origin: Point, scale: Double, rotation: Double = 0) {
        self.file = file
        self.origin = origin
        self.scale = scale
        self.rotation = rotation
    }

    /// The file name extensions an underlay may have (PNG, JPEG or SVG), in lower case.
    public static let extensions = ["png", "jpg", "jpeg", "svg"]

    /// Whether `name` is a file name an underlay may have: 1 to 128 of `A-Z a-z 0-9 . _ -`, not starting with a dot,
    /// no `..`, ending in `.png`, `.jpg`, `.jpeg` or `.svg`. So it names a file beside the map and nothing else: no
    /// directory, no hidden file, never the map or its backup.
    public static func isSafeFileName(_ name: String) -> Bool {
        let bytes = Array(name.utf8)
        guard (1...128).contains(bytes.count), bytes.first != UInt8(ascii: "."), !name.contains("..") else {
            return false
        }
        let safe = bytes.allSatisfy { byte in
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
                UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "-"):
                true
            default: false
            }
        }
        guard safe, let dot = name.lastIndex(of: ".") else { return false }
        return extensions.contains(name[name.index(after: dot)...].lowercased())
    }

    /// The underlays of a document's floors, by major: those that load; a floor without one, or with a bad one, is
    /// left out (``FloorMap/parse(_:)`` reports what is wrong with it).
    public static func underlays(in document: JSONValue) -> [UInt16: FloorUnderlay] {
        var result: [UInt16: FloorUnderlay] = [:]
        for (index, floor) in (document.object?["floors"]?.array ?? []).enumerated() {
            guard let object = floor.object, let value = object["underlay"] else { continue }
            var reader = MapReader()
            guard let major = reader.identifierNumber(object["major"], "$"),
                let underlay = reader.readUnderlay(value, "$.floors[\(index)].underlay"), reader.problems.isEmpty
            else { continue }
            result[major] = underlay
        }
        return result
    }
}

extension MapReader {
    /// A floor's `underlay`, with a problem for each thing wrong.
    mutating func readUnderlay(_ value: JSONValue, _ path: String) -> FloorUnderlay? {
        guard let object = object(value, path, allowed: ["file", "origin", "scale", "rotation"]) else { return nil }
        var file = string(object["file"], "\(path).file")
        if let name = file, !FloorUnderlay.isSafeFileName(name) {
            problem(
                "\(path).file",
                "an underlay is a .png, .jpg, .jpeg or .svg file beside the map: 1 to 128 of A-Z a-z 0-9 . _ -, "
                    + "not starting with a dot, no \"..\", no directory; not \"\(name)\"")
            file = nil
        }
        let origin = point(object["origin"], "\(path).origin")
        var scale = number(object["scale"], "\(path).scale", in: 0...1000)
        if scale == 0 {
            problem("\(path).scale", "must be above 0 (metres per pixel of the picture)")
            scale = nil
        }
        let rotation = number(object["rotation"], "\(path).rotation", in: -360...360, required: false) ?? 0
        guard let file, let origin, let scale else { return nil }
        return FloorUnderlay(file: file, origin: origin, scale: scale, rotation: rotation)
    }
}
