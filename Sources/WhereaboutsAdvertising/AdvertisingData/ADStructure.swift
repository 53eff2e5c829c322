/// One AD structure of advertising data: a type byte and its data (Core Specification Supplement Part A).
public struct ADStructure: Sendable, Hashable {
    /// The AD type, for example 0xFF manufacturer-specific data or 0x16 16-bit service data.
    public var type: UInt8
    /// The bytes after the type. Shares storage with, and indexes into, the advertising data.
    public var data: ArraySlice<UInt8>

    /// Makes a structure from its parts.
    public init(type: UInt8, data: ArraySlice<UInt8>) {
        self.type = type
        self.data = data
    }

    /// Manufacturer-specific data.
    public static let manufacturerSpecificData: UInt8 = 0xFF
    /// Service data with a 16-bit service UUID.
    public static let serviceData16: UInt8 = 0x16
    /// Flags.
    public static let flags: UInt8 = 0x01

    /// Walks advertising data, checking every length against what remains.
    ///
    /// A zero length ends the significant part; only zero padding may follow it. Any structure that runs past
    /// the end, or non-zero bytes after a zero length, make the whole data malformed, and the reason is returned
    /// instead of structures. Duplicates are kept.
    public static func parse(_ data: ArraySlice<UInt8>) -> Result<[ADStructure], ADStructureError> {
        var structures: [ADStructure] = []
        let fault = walk(data) { structures.append(ADStructure(type: $0, data: $1)) }
        if let fault { return .failure(fault) }
        return .success(structures)
    }

    /// Calls `body` with each structure's type and data, in order, and returns the fault that stopped the walk.
    ///
    /// `body` may already have seen earlier structures when a fault is found; callers discard what they built.
    static func walk(
        _ data: ArraySlice<UInt8>,
        _ body: (UInt8, ArraySlice<UInt8>) -> Void
    ) -> ADStructureError? {
        var offset = data.startIndex
        let end = data.endIndex
        while offset < end {
            let length = Int(data[offset])
            if length == 0 {
                var padding = offset + 1
                while padding < end {
                    guard data[padding] == 0 else { return .nonZeroAfterTerminator(offset: offset - data.startIndex) }
                    padding += 1
                }
                return nil
            }
            guard end - offset - 1 >= length else { return .overrun(offset: offset - data.startIndex) }
            body(data[offset + 1], data[offset + 2..<offset + 1 + length])
            offset += 1 + length
        }
        return nil
    }
}

/// Why advertising data could not be walked.
public enum ADStructureError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The structure at this offset claims more bytes than remain.
    case overrun(offset: Int)
    /// A zero-length structure at this offset is followed by bytes that are not zero.
    case nonZeroAfterTerminator(offset: Int)

    /// The drop counter this fault is counted under.
    public var dropReason: DropReason {
        switch self {
        case .overrun: .adStructureOverrun
        case .nonZeroAfterTerminator: .adZeroLength
        }
    }

    public var description: String {
        switch self {
        case .overrun(let offset): "AD structure at byte \(offset) runs past the end of the data"
        case .nonZeroAfterTerminator(let offset): "non-zero bytes follow the zero-length AD structure at byte \(offset)"
        }
    }
}
