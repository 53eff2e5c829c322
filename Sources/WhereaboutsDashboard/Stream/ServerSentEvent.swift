/// One event of a `text/event-stream` (the HTML Living Standard's Server-Sent Events), encoded so that no text it
/// carries can start another field or event.
public struct ServerSentEvent: Sendable, Equatable {
    /// The event's name (`event:`); nil for the default `message`. Only `[a-z0-9-]` survive.
    public var name: String?
    /// The id the browser sends back as `Last-Event-ID` when it reconnects; line breaks and NUL removed.
    public var id: String?
    /// The payload; each line becomes a `data:` line, so line breaks in it cannot end the event.
    public var data: String

    public init(name: String? = nil, id: String? = nil, data: String) {
        self.name = name
        self.id = id
        self.data = data
    }

    /// The event as the stream's bytes, ending with the blank line that dispatches it.
    public var encoded: String {
        var out = ""
        if let name {
            out += "event: " + String(name.unicodeScalars.filter { Self.nameCharacters.contains($0) }) + "\n"
        }
        if let id {
            out += "id: " + String(id.unicodeScalars.filter { $0 != "\n" && $0 != "\r" && $0 != "\0" }) + "\n"
        }
        // CR, LF and CRLF all end a line in the event-stream grammar.
        var line = ""
        var previousWasCR = false
        for scalar in data.unicodeScalars {
            if scalar == "\n" && previousWasCR {
                previousWasCR = false
                continue
            }
            previousWasCR = scalar == "\r"
            if scalar == "\n" || scalar == "\r" {
                out += "data: " + line + "\n"
                line = ""
            } else {
                line.unicodeScalars.append(scalar)
            }
        }
        out += "data: " + line + "\n\n"
        return out
    }

    /// How long the browser waits before reconnecting, as a stream field (milliseconds).
    public static func retry(milliseconds: Int) -> String { "retry: \(max(milliseconds, 0))\n\n" }

    /// A comment line that keeps an idle stream open through proxies and shows a dead reader sooner.
    public static let keepAlive = ": keep-alive\n\n"

    private static let nameCharacters = Set("abcdefghijklmnopqrstuvwxyz0123456789-".unicodeScalars)
}
