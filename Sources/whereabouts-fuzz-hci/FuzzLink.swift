// The connection side's inputs for the fuzzer: ACL packets and link events through the link layer (credits,
// L2CAP reassembly, signalling), and ATT PDUs through the GATT client in each procedure.
import WhereaboutsGATT

enum FuzzLink {
    /// LE Connection Complete for handle 0x0040, central, so that ACL input reaches the reassembler.
    static let connection: [UInt8] = [
        0x04, 0x3E, 0x13, 0x01, 0x00, 0x40, 0x00, 0x00, 0x01, 0x66, 0x55, 0x44, 0x33, 0x22, 0x11, 0x28, 0x00, 0x00,
        0x00, 0x90, 0x01, 0x00,
    ]

    static let procedures: [GATTProcedure] = [
        .exchangeMTU(247), .discoverPrimaryServices,
        .discoverCharacteristics(GATTService(start: 1, end: 0xFFFF, uuid: .batteryService)), .read(3),
        .readByType(.batteryLevel, start: 1, end: 0xFFFF), .write(3, [1]),
        .subscribe(
            GATTCharacteristic(declaration: 2, valueHandle: 3, properties: [.notify], uuid: .batteryLevel, end: 9),
            indications: false),
    ]

    /// Cuts the input into packets (each led by a length byte), feeds them to a connected link layer, and the
    /// ATT PDUs that come out, and the input itself, to a GATT client in every procedure.
    static func exercise(_ bytes: [UInt8]) {
        var link = LinkLayer(buffers: ACLBufferSize(packetLength: 27, packetCount: 2), maximumPayloadLength: 600)
        _ = link.ingest(connection)
        var pdus: [[UInt8]] = [bytes]
        var index = 0
        while index < bytes.count {
            let length = Int(bytes[index] & 0x3F)
            var packet = Array(bytes[(index + 1)..<min(bytes.count, index + 1 + length)])
            index += 1 + length
            // The length byte's top bits choose ACL on our handle, an event, or the bytes as they are.
            if !packet.isEmpty, bytes[index - 1 - length] & 0x80 != 0 { packet[0] = 0x02 }
            if packet.count > 2, bytes[index - 1 - length] & 0x40 != 0 { packet[1] = 0x40 }
            for action in link.ingest(packet) {
                switch action {
                case .write(let written): precondition(written.count <= 5 + 27 && written[0] == 0x02)
                case .attribute(let handle, let pdu):
                    precondition(handle == 0x0040 && pdu.count <= 600)
                    pdus.append(pdu)
                default: break
                }
            }
            precondition(link.writer.credits >= 0 && link.writer.credits <= 2)
        }
        _ = SignalingChannel.answer(bytes, role: .central)
        for procedure in procedures {
            var client = GATTClient()
            _ = client.start(procedure, now: 0)
            for (step, pdu) in pdus.prefix(16).enumerated() {
                let actions = client.receive(pdu, now: Double(step))
                precondition(actions.filter { if case .finished = $0 { true } else { false } }.count <= 1)
                precondition((23...517).contains(client.mtu))
            }
            precondition(client.tick(now: 100).count <= 1 && !client.isBusy)
        }
    }

    /// Seeds: ATT answers split over ACL packets, a signalling request, completed packets and a disconnection.
    static let seeds: [[UInt8]] = [
        [0x89, 0x02, 0x40, 0x20, 0x04, 0x00, 0x02, 0x00, 0x04, 0x00, 0x87, 0x02, 0x40, 0x10, 0x02, 0x00, 0x0B, 0x57],
        [0x91, 0x02, 0x40, 0x20, 0x0C, 0x00, 0x08, 0x00, 0x04, 0x00, 0x11, 0x06, 0x01, 0x00, 0x07, 0x00, 0x00, 0x18],
        [
            0x95, 0x02, 0x40, 0x20, 0x10, 0x00, 0x0C, 0x00, 0x05, 0x00, 0x12, 0x07, 0x08, 0x00, 0x18, 0x00, 0x28, 0x00,
            0x00, 0x00, 0x90, 0x01,
        ],
        [0x08, 0x04, 0x13, 0x05, 0x01, 0x40, 0x00, 0x01, 0x00, 0x07, 0x04, 0x05, 0x04, 0x00, 0x40, 0x00, 0x13],
        [0x1D, 0x11, 0x00, 0x4F],
        [0x09, 0x07, 0x21, 0x00, 0x02, 0x22, 0x00, 0x29, 0x2A],
    ]
}
