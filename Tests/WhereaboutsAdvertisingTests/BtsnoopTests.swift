import Testing
import WhereaboutsAdvertising

@Suite("btsnoop files: reading, writing and broken files")
struct BtsnoopTests {
    /// The fixture's events without their H4 byte, one every 1.000123 s from 2024-01-01.
    static let packets: [BtsnoopPacket] = FixtureEvent.all.enumerated().map { index, event in
        BtsnoopPacket(
            time: Double(1_704_067_200_000_000 + index * 1_000_123) / 1_000_000, event: Array(event.bytes.dropFirst()))
    }

    @Test(
        "writing the fixture's events and reading them back gives the same events and times",
        arguments: BtsnoopDatalink.allCases)
    func roundTrip(datalink: BtsnoopDatalink) throws {
        let file = BtsnoopWriter(datalink: datalink).file(Self.packets)
        let read = try BtsnoopReader.events(in: file)
        #expect(read.count == 287)
        #expect(read == Self.packets)
        #expect(BtsnoopWriter(datalink: datalink).file(read) == file)
    }

    @Test("a file streamed in small chunks reads the same as whole", arguments: [1, 7, 24, 1000])
    func chunks(size: Int) throws {
        let file = BtsnoopWriter().file(Self.packets)
        var reader = BtsnoopReader()
        var read: [BtsnoopPacket] = []
        var offset = 0
        while offset < file.count {
            reader.append(file[offset..<min(offset + size, file.count)])
            offset += size
            while let packet = try reader.next() { read.append(packet) }
        }
        try reader.finish()
        #expect(reader.datalink == .monitor)
        #expect(read == Self.packets)
    }

    @Test("the header is what btmon writes: magic, version 1, link type 2001")
    func header() {
        #expect(BtsnoopWriter().header() == Array("btsnoop".utf8) + [0, 0, 0, 0, 1, 0, 0, 0x07, 0xD1])
    }

    @Test("timestamps count microseconds from 0 AD: the Unix epoch is 0x00DCDDB30F2F8000")
    func timestamp() throws {
        let record = BtsnoopWriter().record(BtsnoopPacket(time: 0, event: [0x3E, 0x00]))
        #expect(Array(record[16..<24]) == [0x00, 0xDC, 0xDD, 0xB3, 0x0F, 0x2F, 0x80, 0x00])
        // 2025-01-01T00:00:00Z, as btmon writes it: 0x00E3_084C_C93B_E000 (62,168,256,000 s + 1,735,689,600 s).
        var file = BtsnoopWriter().header()
        file += [0, 0, 0, 2, 0, 0, 0, 2, 0, 0, 0, 3, 0, 0, 0, 0, 0x00, 0xE3, 0x08, 0x4C, 0xC9, 0x3B, 0xE0, 0x00]
        file += [0x0E, 0x00]
        let events = try BtsnoopReader.events(in: file)
        #expect(events.map(\.time) == [1_735_689_600])
    }

    @Test("monitor records other than events, and H4 packets other than events, are skipped")
    func skipsOtherPackets() throws {
        var monitor = BtsnoopWriter().header()
        // Opcode 2 (command) for index 0, then an event for controller 1.
        monitor +=
            [0, 0, 0, 3, 0, 0, 0, 3, 0, 0, 0, 2, 0, 0, 0, 0] + Array(repeating: 0, count: 8) + [0x01, 0x0C, 0x00]
        monitor += BtsnoopWriter().record(BtsnoopPacket(time: 5, event: [0x0E, 0x00], controllerIndex: 1))
        let events = try BtsnoopReader.events(in: monitor)
        #expect(events.map(\.event) == [[0x0E, 0x00]])
        #expect(events.map(\.controllerIndex) == [1])
        var h4 = BtsnoopWriter(datalink: .hciUART).header()
        h4 += [0, 0, 0, 2, 0, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0, 0] + Array(repeating: 0, count: 8) + [0x02, 0x00]
        #expect(try BtsnoopReader.events(in: h4).isEmpty)
    }

    @Test("a file cut anywhere inside a record gives a clear error naming the record")
    func truncatedRecord() throws {
        let file = BtsnoopWriter().file(Array(Self.packets.prefix(3)))
        let secondRecord = 16 + 24 + Self.packets[0].event.count
        for cut in [secondRecord + 1, secondRecord + 23, secondRecord + 24, secondRecord + 30] {
            #expect(throws: BtsnoopError.truncatedRecord(offset: secondRecord)) {
                try BtsnoopReader.events(in: file.prefix(cut))
            }
        }
        #expect(
            BtsnoopError.truncatedRecord(offset: 56).description == "btsnoop file ends inside the record at byte 56")
    }

    @Test(
        "broken headers give clear errors",
        arguments: [
            ([], BtsnoopError.truncatedHeader(bytes: 0)),
            (Array("btsnoop".utf8), .truncatedHeader(bytes: 7)),
            (Array("btsnoo!".utf8), .notBtsnoop),
            (Array("btsnoop\0".utf8) + [0, 0, 0, 2, 0, 0, 3, 0xE9], .unsupportedVersion(2)),
            (Array("btsnoop\0".utf8) + [0, 0, 0, 1, 0, 0, 3, 0xEB], .unsupportedDatalink(1003)),
        ] as [([UInt8], BtsnoopError)])
    func brokenHeader(bytes: [UInt8], error: BtsnoopError) {
        #expect(throws: error) { try BtsnoopReader.events(in: bytes) }
    }

    @Test("lengths that lie give clear errors and the reader keeps failing")
    func lyingLengths() throws {
        var file = BtsnoopWriter().header()
        file += [0, 2, 0, 0, 0, 2, 0, 0] + Array(repeating: 0, count: 16)
        #expect(throws: BtsnoopError.recordTooLarge(offset: 16, length: 0x20000)) {
            try BtsnoopReader.events(in: file)
        }
        var inconsistent = BtsnoopWriter().header()
        inconsistent += [0, 0, 0, 1, 0, 0, 0, 2] + Array(repeating: 0, count: 16) + [0x3E, 0x00]
        var reader = BtsnoopReader()
        reader.append(inconsistent)
        #expect(throws: BtsnoopError.inconsistentLengths(offset: 16)) { try reader.next() }
        #expect(throws: BtsnoopError.inconsistentLengths(offset: 16)) { try reader.next() }
    }

    @Test("events read from a btsnoop file decode to the same sightings as the raw events")
    func decodesFromFile() throws {
        let events = try BtsnoopReader.events(in: BtsnoopWriter(datalink: .hciUART).file(Self.packets))
        var fromFile = SightingDecoder(filter: SightingFilter(constraints: [], selectsAllBeacons: true))
        var fromRaw = SightingDecoder(filter: SightingFilter(constraints: [], selectsAllBeacons: true))
        var count = 0
        for (packet, event) in zip(events, FixtureEvent.all) {
            let sightings = fromFile.sightings(in: packet.event, framing: .bare, time: packet.time)
            #expect(sightings.map(\.tag) == fromRaw.sightings(in: event.bytes, framing: .h4).map(\.tag))
            #expect(sightings.allSatisfy { $0.time == packet.time })
            count += sightings.count
        }
        // Four iBeacons and the AltBeacon arrive in events a controller can send (at most 31 bytes of data).
        #expect(count == 5)
        #expect(fromFile.counters == fromRaw.counters)
    }
}
