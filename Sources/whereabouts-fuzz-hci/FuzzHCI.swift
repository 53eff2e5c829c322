// The libFuzzer target for everything that reads radio bytes: HCI events, AD structures, beacon frames, btsnoop
// files, and the connection side (ACL, L2CAP, signalling, ATT; FuzzLink.swift). scripts/fuzz-hci.sh builds it
// with -sanitize=fuzzer,address -DFUZZING and runs it. Built
// normally, it replays the inputs named on its command line, which makes a cheap regression run.
import CLibFuzzer
import Glibc
import WhereaboutsAdvertising
import WhereaboutsCore

/// libFuzzer's entry point; its own `main.o` references this symbol, so it must exist even though the driver
/// is handed `fuzzOne` directly.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOne(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    guard let data, size > 0 else {
        FuzzHCI.exercise([])
        return 0
    }
    FuzzHCI.exercise(Array(UnsafeBufferPointer(start: data, count: size)))
    return 0
}

@main
enum FuzzHCI {
    static func main() {
        let arguments = CommandLine.arguments
        if arguments.count == 4, arguments[1] == "--make-seed-corpus" {
            exit(makeSeedCorpus(fixture: arguments[2], directory: arguments[3]) ? 0 : 1)
        }
        #if FUZZING
            // SwiftPM's own `main` shadows libFuzzer's, so start the driver by hand.
            var argc = CommandLine.argc
            var argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>? = CommandLine.unsafeArgv
            exit(LLVMFuzzerRunDriver(&argc, &argv, fuzzOne))
        #else
            var replayed = 0
            for path in arguments.dropFirst() {
                guard let bytes = readFile(path) else {
                    print("cannot read \(path)")
                    exit(1)
                }
                exercise(bytes)
                replayed += 1
            }
            print("replayed \(replayed) inputs without a crash")
        #endif
    }

    /// Feeds one input to every decoder, and traps if any result breaks the decoders' promises.
    static func exercise(_ bytes: [UInt8]) {
        var decoder = SightingDecoder(
            filter: SightingFilter(constraints: [], addresses: addresses(in: bytes), selectsAllBeacons: true),
            telemetryCapacity: 8
        )
        for framing in [HCIFraming.automatic, .bare] {
            var counters = DropCounters()
            let reports = HCIEventParser().reports(in: bytes, framing: framing, counters: &counters)
            for report in reports {
                precondition(report.data.startIndex >= 0 && report.data.endIndex <= bytes.count)
                precondition(report.rssi <= 20 && report.data.count <= 229)
            }
            check(decoder.sightings(in: bytes, framing: framing, time: 1))
        }
        var counters = DropCounters()
        if let frames = BeaconFrame.frames(in: bytes, counters: &counters) {
            precondition(frames.count <= bytes.count / 3)
        }
        if case .success(let structures) = ADStructure.parse(bytes[...]) {
            precondition(structures.reduce(0) { $0 + $1.data.count + 2 } <= bytes.count)
        }
        // btsnoop, streamed in two chunks split where the first byte says.
        var reader = BtsnoopReader()
        let split = bytes.isEmpty ? 0 : min(Int(bytes[0]), bytes.count)
        reader.append(bytes[..<split])
        do {
            while let packet = try reader.next() { check(decoder.sightings(in: packet.event, framing: .bare)) }
            reader.append(bytes[split...])
            while let packet = try reader.next() { check(decoder.sightings(in: packet.event, framing: .bare)) }
            try reader.finish()
        } catch {
            precondition(!error.description.isEmpty)
        }
        precondition(decoder.telemetryCount <= 8)
        FuzzLink.exercise(bytes)
    }

    /// Configures the address the input would carry as a legacy report's, so the address path is reached too.
    static func addresses(in bytes: [UInt8]) -> Set<DeviceAddress> {
        guard bytes.count >= 12 else { return [] }
        var value: UInt64 = 0
        for index in (6..<12).reversed() { value = value << 8 | UInt64(bytes[index]) }
        return DeviceAddress(value: value).map { [$0] } ?? []
    }

    static func check(_ sightings: [BeaconSighting]) {
        for sighting in sightings {
            precondition((-128...20).contains(sighting.rssi))
            if let power = sighting.measuredPower { precondition((-100 ... -20).contains(power)) }
            if let battery = sighting.telemetry?.batteryMillivolts { precondition((1...65535).contains(battery)) }
            precondition(TagIdentity(sighting.tag.description) == sighting.tag)
        }
    }

    /// Writes each fixture event, its AD bytes, and btsnoop files of the first events, as seed inputs.
    static func makeSeedCorpus(fixture: String, directory: String) -> Bool {
        guard let text = readFile(fixture) else {
            print("cannot read \(fixture)")
            return false
        }
        mkdir(directory, 0o755)
        var events: [[UInt8]] = []
        var written = 0
        for line in text.split(separator: UInt8(ascii: "\n")) {
            let line = Array(line)
            guard let event = hexField("\"hex\": \"", in: line) else { continue }
            events.append(event)
            written += writeFile("\(directory)/event-\(events.count)", event) ? 1 : 0
            if let data = hexField("\"ad_hex\": \"", in: line) {
                written += writeFile("\(directory)/ad-\(events.count)", data) ? 1 : 0
            }
        }
        for datalink in BtsnoopDatalink.allCases {
            let packets = events.prefix(8).enumerated().map {
                BtsnoopPacket(time: 1_700_000_000 + Double($0.offset), event: Array($0.element.dropFirst()))
            }
            let file = BtsnoopWriter(datalink: datalink).file(packets)
            written += writeFile("\(directory)/btsnoop-\(datalink.rawValue)", file) ? 1 : 0
        }
        for (index, seed) in FuzzLink.seeds.enumerated() {
            written += writeFile("\(directory)/link-\(index)", seed) ? 1 : 0
        }
        print("wrote \(written) seed inputs from \(events.count) events to \(directory)")
        return !events.isEmpty
    }

    /// The bytes of a hex string that follows `key` in a JSON line.
    static func hexField(_ key: String, in line: [UInt8]) -> [UInt8]? {
        let key = Array(key.utf8)
        guard line.count >= key.count,
            let start = (0...line.count - key.count).first(where: { line[$0..<$0 + key.count].elementsEqual(key) })
        else { return nil }
        let digits = Array(line[(start + key.count)...].prefix { $0 != UInt8(ascii: "\"") })
        guard digits.count % 2 == 0 else { return nil }
        var bytes: [UInt8] = []
        for index in stride(from: 0, to: digits.count, by: 2) {
            guard let byte = UInt8(String(decoding: digits[index...index + 1], as: UTF8.self), radix: 16) else {
                return nil
            }
            bytes.append(byte)
        }
        return bytes
    }

    static func readFile(_ path: String) -> [UInt8]? {
        guard let file = fopen(path, "rb") else { return nil }
        defer { fclose(file) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65536)
        while true {
            let count = chunk.withUnsafeMutableBytes { fread($0.baseAddress, 1, $0.count, file) }
            if count == 0 { break }
            bytes += chunk[..<count]
        }
        return ferror(file) == 0 ? bytes : nil
    }

    static func writeFile(_ path: String, _ bytes: [UInt8]) -> Bool {
        guard let file = fopen(path, "wb") else { return false }
        defer { fclose(file) }
        return bytes.withUnsafeBytes { fwrite($0.baseAddress, 1, $0.count, file) } == bytes.count
    }
}
