import Testing
import WhereaboutsAdvertising

@Suite("What a controller says about itself")
struct ControllerIdentityTests {
    /// Command Complete events btvirt's controllers gave, captured over its socket (H4; return parameters from 6).
    static let versionEvent: [UInt8] = [
        0x04, 0x0E, 0x0C, 0x01, 0x01, 0x10, 0x00, 0x09, 0x00, 0x00, 0x09, 0xF1, 0x05, 0x00, 0x00,
    ]
    static let addressEvent: [UInt8] = [0x04, 0x0E, 0x0A, 0x01, 0x09, 0x10, 0x00, 0x42, 0x00, 0x00, 0x01, 0xAA, 0x00]
    static let leFeaturesEvent: [UInt8] = [
        0x04, 0x0E, 0x0C, 0x01, 0x03, 0x20, 0x00, 0x0B, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
    ]

    @Test("the commands are Read Local Version Information, Read BD_ADDR and LE Read Local Supported Features")
    func commands() {
        #expect(HCICommand.readLocalVersionInformation.packet == [0x01, 0x01, 0x10, 0x00])
        #expect(HCICommand.readBDAddress.packet == [0x01, 0x09, 0x10, 0x00])
        #expect(HCICommand.leReadLocalSupportedFeatures.packet == [0x01, 0x03, 0x20, 0x00])
    }

    @Test("btvirt's answers: Core 5.0, The Linux Foundation's identifier, its address, LE features 0x0b")
    func capturedAnswers() throws {
        let version = try #require(LocalVersion(returnParameters: Self.versionEvent[6...]))
        #expect(
            version
                == LocalVersion(hciVersion: 9, hciRevision: 0, lmpVersion: 9, lmpSubversion: 0, manufacturer: 0x05F1))
        let address = try #require(DeviceAddress(readBDAddressReturnParameters: Self.addressEvent[6...]))
        #expect(address.description == "00:AA:01:00:00:42")
        let features = try #require(LEFeatures(returnParameters: Self.leFeaturesEvent[6...]))
        #expect(features.bits == 0x0B)
        #expect(LEFeatures.Feature.allCases.allSatisfy { !features.has($0) })
    }

    @Test("the fields are little-endian and the feature bits are the specification's")
    func byteOrder() throws {
        let version = try #require(
            LocalVersion(returnParameters: [0x00, 0x0C, 0x3A, 0x01, 0x0C, 0x31, 0x01, 0x19, 0x61][...]))
        #expect(version.hciRevision == 0x013A && version.manufacturer == 0x0131 && version.lmpSubversion == 0x6119)
        let features = try #require(LEFeatures(returnParameters: [0x00, 0x40, 0x18, 0, 0, 0, 0, 0, 0x80][...]))
        #expect(features.bits == 0x8000_0000_0000_1840)
        #expect(features.has(.llPrivacy) && features.has(.codedPHY) && features.has(.extendedAdvertising))
    }

    @Test(
        "a refusal or a short answer gives nothing rather than garbage",
        arguments: [
            [UInt8](), [0x01], [0x01, 0x09, 0x00, 0x00, 0x09, 0xF1, 0x05, 0x00, 0x00], [0x00, 0x09, 0x00, 0x00],
        ])
    func refusedOrShort(parameters: [UInt8]) {
        #expect(LocalVersion(returnParameters: parameters[...]) == nil)
        #expect(DeviceAddress(readBDAddressReturnParameters: parameters[...]) == nil)
        #expect(LEFeatures(returnParameters: parameters[...]) == nil)
    }

    @Test("version numbers name Core specifications, up to 6.0")
    func coreNames() {
        #expect(LocalVersion.coreSpecification(0) == "1.0b")
        #expect(LocalVersion.coreSpecification(6) == "4.0")
        #expect(LocalVersion.coreSpecification(9) == "5.0")
        #expect(LocalVersion.coreSpecification(14) == "6.0")
        #expect(LocalVersion.coreSpecification(15) == nil)
    }
}
