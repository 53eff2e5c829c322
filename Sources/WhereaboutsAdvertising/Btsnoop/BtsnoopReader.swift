/// Reads HCI events out of a btsnoop file handed over in chunks of any size.
///
/// `append` bytes as they arrive, take events with `next()` until it returns nil, and call `finish()` at the end
/// of the input: it throws if the file stopped inside a record. Only one record is buffered beyond what was
/// appended, so a large file streams in bounded memory. Records other than HCI events are skipped. After an
/// error the reader keeps throwing it.
public struct BtsnoopReader: Sendable {
    private var buffer: [UInt8] = []
    private var position = 0
    /// Bytes consumed before `buffer[0]`, for error offsets.
    private var consumed = 0
    private var failure: BtsnoopError?

    /// The file's link type, once the header has been read.
    public private(set) var datalink: BtsnoopDatalink?

    /// A reader waiting for the file's first bytes.
    public init() {}

    /// Hands over the next bytes of the file.
    public mutating func append(_ bytes: some Sequence<UInt8>) {
        // Drop what was read before growing, so the buffer holds about one chunk plus one record.
        if position > 0, position >= buffer.count / 2 {
            buffer.removeFirst(position)
            consumed += position
            position = 0
        }
        buffer.append(contentsOf: bytes)
    }

    /// The next HCI event, or nil when more bytes are needed.
    public mutating func next() throws(BtsnoopError) -> BtsnoopPacket? {
        if let failure { throw failure }
        do {
            return try readNext()
        } catch {
            failure = error
            throw error
        }
    }

    /// Declares the end of the input; throws if it ended inside the header or a record.
    public mutating func finish() throws(BtsnoopError) {
        if let failure { throw failure }
        let remaining = buffer.count - position
        if datalink == nil {
            failure = .truncatedHeader(bytes: remaining)
        } else if remaining > 0 {
            failure = .truncatedRecord(offset: consumed + position)
        }
        if let failure { throw failure }
    }

    /// Every HCI event in a whole file.
    public static func events(in file: some Sequence<UInt8>) throws(BtsnoopError) -> [BtsnoopPacket] {
        var reader = BtsnoopReader()
        reader.append(file)
        var packets: [BtsnoopPacket] = []
        while let packet = try reader.next() { packets.append(packet) }
        try reader.finish()
        return packets
    }

    private mutating func readNext() throws(BtsnoopError) -> BtsnoopPacket? {
        guard let datalink = try readHeaderIfNeeded() else { return nil }
        while buffer.count - position >= Btsnoop.recordHeaderSize {
            let start = position
            let offset = consumed + start
            let original = Int(bigEndian32(buffer, start))
            let included = Int(bigEndian32(buffer, start + 4))
            guard included <= Btsnoop.maximumRecordSize else {
                throw .recordTooLarge(offset: offset, length: included)
            }
            guard included <= original else { throw .inconsistentLengths(offset: offset) }
            guard buffer.count - start - Btsnoop.recordHeaderSize >= included else { return nil }
            let flags = bigEndian32(buffer, start + 8)
            let timestamp = UInt64(bigEndian32(buffer, start + 16)) << 32 | UInt64(bigEndian32(buffer, start + 20))
            let data = start + Btsnoop.recordHeaderSize
            position = data + included
            if let packet = Self.event(datalink, flags, buffer[data..<data + included], timestamp) {
                return packet
            }
        }
        return nil
    }

    /// The HCI event a record holds, normalised to start at the event code; nil for other packets.
    private static func event(
        _ datalink: BtsnoopDatalink,
        _ flags: UInt32,
        _ data: ArraySlice<UInt8>,
        _ timestamp: UInt64
    ) -> BtsnoopPacket? {
        let event: ArraySlice<UInt8>
        var index: UInt16 = 0
        switch datalink {
        case .hciUnencapsulated:
            // Bit 0: received; bit 1: command or event. Events are both.
            guard flags & 0b11 == 0b11 else { return nil }
            event = data
        case .hciUART:
            guard let type = data.first, type == Btsnoop.h4EventType else { return nil }
            event = data.dropFirst()
        case .monitor:
            guard flags & 0xFFFF == Btsnoop.monitorEventOpcode else { return nil }
            index = UInt16(truncatingIfNeeded: flags >> 16)
            event = data
        }
        guard !event.isEmpty else { return nil }
        return BtsnoopPacket(time: Btsnoop.unixSeconds(timestamp), event: Array(event), controllerIndex: index)
    }

    private mutating func readHeaderIfNeeded() throws(BtsnoopError) -> BtsnoopDatalink? {
        if let datalink { return datalink }
        let available = buffer.count - position
        // Reject a wrong magic as soon as its bytes are in, rather than at the end of a long non-btsnoop input.
        let checked = min(available, Btsnoop.magic.count)
        guard buffer[position..<position + checked].elementsEqual(Btsnoop.magic[0..<checked]) else {
            throw .notBtsnoop
        }
        guard available >= Btsnoop.headerSize else { return nil }
        let version = bigEndian32(buffer, position + 8)
        guard version == 1 else { throw .unsupportedVersion(version) }
        let link = bigEndian32(buffer, position + 12)
        guard let datalink = BtsnoopDatalink(rawValue: link) else { throw .unsupportedDatalink(link) }
        position += Btsnoop.headerSize
        self.datalink = datalink
        return datalink
    }
}
