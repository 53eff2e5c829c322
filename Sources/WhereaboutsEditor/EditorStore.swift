/// Where the editor's files live: the map file, its backup and the underlay pictures beside it.
///
/// The editor is pure; `whereabouts web --edit` implements this with real files (and tests with memory). Names
/// handed to it have passed ``FloorUnderlay/isSafeFileName(_:)``: a plain file name in the map's directory.
public protocol EditorStore: Sendable {
    /// The map file's bytes, or nil when there is no file yet.
    func readMap() throws(EditorStoreError) -> [UInt8]?
    /// Replaces the map file with `text`, after keeping `backup` (the file's previous bytes, nil when there was no
    /// file) as the map's `.bak`. A failure leaves the map file as it was.
    func writeMap(_ text: [UInt8], backup: [UInt8]?) throws(EditorStoreError)
    /// The underlay picture's bytes, or nil when there is no such file.
    func readUnderlay(named name: String) throws(EditorStoreError) -> [UInt8]?
    /// Stores an underlay picture beside the map, replacing a file of that name.
    func writeUnderlay(named name: String, bytes: [UInt8]) throws(EditorStoreError)
}

/// A file the store could not read or write, in words (the path and the system's reason).
public struct EditorStoreError: Error, Sendable, Equatable, CustomStringConvertible {
    public var message: String

    public init(_ message: String) {
        self.message = message
    }

    public var description: String { message }
}
