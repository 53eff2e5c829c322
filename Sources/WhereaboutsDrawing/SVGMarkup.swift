import WhereaboutsCore

// The markup every drawing is made of: elements with escaped attributes, numbers to two decimals.
extension MapRenderer {
    func element(_ name: String, _ attributes: KeyValuePairs<String, String>, _ text: String? = nil) -> String {
        element(name, attributes.map { ($0.key, $0.value) }, text)
    }

    func element(_ name: String, _ attributes: [(String, String)], _ text: String? = nil) -> String {
        var out = "<\(name)"
        for (key, value) in attributes { out += " \(key)=\"\(escape(value))\"" }
        if let text {
            out += ">\(text)</\(name)>\n"
        } else {
            out += "/>\n"
        }
        return out
    }

    /// A coordinate or size: two decimals, whole numbers without a point, anything not finite as 0.
    func number(_ value: Double) -> String {
        let rounded = value.rounded(toDecimals: 2)
        guard rounded.isFinite else { return "0" }
        return rounded == rounded.rounded() && abs(rounded) < 1e15 ? String(Int(rounded)) : String(rounded)
    }

    /// Escapes text for XML and HTML content and attribute values (`&`, `<`, `>`, both quotes).
    public func escape(_ text: String) -> String {
        var out = ""
        out.reserveCapacity(text.utf8.count)
        for character in text {
            switch character {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            case "'": out += "&apos;"
            default: out.append(character)
            }
        }
        return out
    }
}
