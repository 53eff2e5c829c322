public import Foundation

/// The data files that more than one test target reads, each kept once in `Fixtures/` with its licence or credit
/// beside it:
///
/// - `kolakowski/`: the Kolakowski flat recordings, real readings and LiDAR truth (CC BY 4.0, see `CREDIT.md`);
/// - `scenarios/`: the simulator's scenario maps;
/// - `hci-events/`: real HCI LE advertising events (MIT, see `LICENSE` and `SOURCE.md`).
///
/// ```swift
/// let text = try TestFixtures.text("kolakowski/robot-truth.jsonl")
/// let map = try FloorMap.parse(TestFixtures.bytes("scenarios/open-office.json")).get()
/// ```
///
/// The files are read from the copy SwiftPM puts in the test bundle. A missing file throws
/// ``TestFixtureError/missing(_:)`` naming it, so a test fails rather than running on nothing.
public enum TestFixtures {
    /// The copy of `Fixtures/` in the test bundle.
    public static var directory: URL {
        (Bundle.module.resourceURL ?? Bundle.module.bundleURL).appendingPathComponent("Fixtures", isDirectory: true)
    }

    /// The path of a fixture, given relative to `Fixtures/` (`scenarios/open-office.json`).
    public static func path(_ relativePath: String) throws(TestFixtureError) -> String {
        let path = directory.appendingPathComponent(relativePath).path
        guard FileManager.default.fileExists(atPath: path) else { throw .missing(relativePath) }
        return path
    }

    /// A fixture's bytes.
    public static func bytes(_ relativePath: String) throws(TestFixtureError) -> [UInt8] {
        let path = try path(relativePath)
        guard let data = FileManager.default.contents(atPath: path) else { throw .unreadable(relativePath) }
        return Array(data)
    }

    /// A fixture's text, decoded as UTF-8.
    public static func text(_ relativePath: String) throws(TestFixtureError) -> String {
        String(decoding: try bytes(relativePath), as: UTF8.self)
    }
}

/// Why a fixture could not be read.
public enum TestFixtureError: Error, Sendable, Hashable, CustomStringConvertible {
    /// No such file under `Fixtures/`.
    case missing(String)
    /// The file exists but could not be read.
    case unreadable(String)

    public var description: String {
        switch self {
        case .missing(let path): "missing test fixture \(path) (looked in \(TestFixtures.directory.path))"
        case .unreadable(let path): "cannot read test fixture \(path)"
        }
    }
}
