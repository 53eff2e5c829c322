import Testing
import WhereaboutsAdvertising
import WhereaboutsCore

@Suite("HCI commands and the iBeacon transmitter's bytes")
struct TransmitterTests {
    @Test("the iBeacon advertising data is the flags plus the 26-byte iBeacon structure, and decodes back")
    func iBeaconData() throws {
        let uuid = try #require(BeaconUUID("e2c56db5-dffb-48d2-b060-d0f5a71096e0"))
        let advert = IBeaconAdvertisement(uuid: uuid, major: 100, minor: 0, measuredPower: -59)
        #expect(advert.advertisingData == hex("020106") + EventBuilder.iBeacon)
        var counters = DropCounters()
        let frames = BeaconFrame.frames(in: advert.advertisingData, counters: &counters)
        #expect(frames == [.iBeacon(uuid: uuid, major: 100, minor: 0, measuredPower: -59)])
        #expect(frames?.first?.tag == advert.tag)
    }

    @Test("LE Set Advertising Data pads to 31 bytes after the length and refuses more than 31")
    func advertisingData() throws {
        let uuid = try #require(BeaconUUID("e2c56db5-dffb-48d2-b060-d0f5a71096e0"))
        let data = IBeaconAdvertisement(uuid: uuid, major: 0xABCD, minor: 0x0102).advertisingData
        let command = try #require(HCICommand.leSetAdvertisingData(data))
        #expect(command.opcode == 0x2008)
        #expect(command.parameters.count == 32)
        #expect(command.parameters.first == 30)
        #expect(Array(command.parameters[1...30]) == data)
        #expect(command.parameters[31] == 0)
        #expect(HCICommand.leSetAdvertisingData(Array(repeating: 0, count: 32)) == nil)
    }

    @Test("scan parameters encode type, interval and window in 0.625 ms units, little-endian")
    func scanParameters() throws {
        let passive = try #require(LEScanParameters())
        #expect(HCICommand.leSetScanParameters(passive).packet == hex("01 0b20 07 00 a000 a000 00 00"))
        let active = try #require(LEScanParameters(active: true, intervalMilliseconds: 1000, windowMilliseconds: 30))
        #expect(HCICommand.leSetScanParameters(active).parameters == hex("01 4006 3000 00 00"))
        #expect(LEScanParameters(intervalMilliseconds: 50, windowMilliseconds: 60) == nil)
        #expect(LEScanParameters(intervalMilliseconds: 1) == nil)
        #expect(LEScanParameters(intervalMilliseconds: .nan) == nil)
        #expect(LEScanParameters(intervalMilliseconds: 20_000) == nil)
    }

    @Test("scanning is enabled without duplicate filtering; advertising commands carry their opcodes")
    func enableCommands() throws {
        #expect(HCICommand.leSetScanEnable(true).packet == hex("01 0c20 02 01 00"))
        #expect(HCICommand.leSetScanEnable(false).packet == hex("01 0c20 02 00 00"))
        #expect(HCICommand.leSetAdvertisingEnable(true).packet == hex("01 0a20 01 01"))
        let parameters = try #require(LEAdvertisingParameters(intervalMilliseconds: 100))
        #expect(
            HCICommand.leSetAdvertisingParameters(parameters).packet
                == hex("01 0620 0f a000 a000 03 00 00 000000000000 07 00")
        )
        #expect(LEAdvertisingParameters(intervalMilliseconds: 10) == nil)
    }
}
