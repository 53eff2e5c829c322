/// One thing wrong with a map, and where: a JSON path such as `$.zones[3].polygon[2]`.
public struct MapProblem: Sendable, Hashable, CustomStringConvertible {
    /// Where in the document, as a JSON path from the root `$`.
    public var path: String
    /// What is wrong, in words.
    public var message: String

    public init(path: String, message: String) {
        self.path = path
        self.message = message
    }

    public var description: String { "\(path): \(message)" }
}

/// Every problem found in a map; a map with any problem is never used.
public struct MapProblems: Error, Sendable, CustomStringConvertible {
    /// The problems, in document order as far as possible.
    public var problems: [MapProblem]

    public var description: String { problems.map(\.description).joined(separator: "\n") }
}
