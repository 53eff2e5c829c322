public import WhereaboutsJSON
public import WhereaboutsMapFile

/// Why a calibration cannot be made or written.
public enum CalibrationError: Error, Sendable, CustomStringConvertible {
    /// The map document does not load.
    case invalidMap(MapProblems)
    /// The map document is not valid JSON.
    case malformedMap(JSONParseError)
    /// The recording has nothing usable: no reading of a tag with truth at the time, on the agent's floor.
    case noSamples(String)
    /// No agent and no tag had enough data; the text names each agent and why.
    case nothingToFit([String])
    /// The edited map no longer loads (a bug if it happens; nothing is written).
    case editedMapInvalid(MapProblems)

    public var description: String {
        switch self {
        case .invalidMap(let problems):
            "the map is not valid:\n\(problems)"
        case .malformedMap(let error):
            "the map is not valid JSON: \(error)"
        case .noSamples(let why):
            "no usable samples: \(why)"
        case .nothingToFit(let reasons):
            "too little data to fit any agent:\n" + reasons.map { "  \($0)" }.joined(separator: "\n")
        case .editedMapInvalid(let problems):
            "the calibrated map would not load (nothing written):\n\(problems)"
        }
    }
}
