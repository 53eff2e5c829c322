import Testing
import WhereaboutsAdvertising
import WhereaboutsGATT

/// ``LinkEventKind`` is the one list of link events: the host routes by it and ``LinkEvent`` reads by it, so the two
/// must agree on every event code and subevent.
@Suite("Link event kinds: the one list the host routes by and the link layer reads")
struct LinkEventKindTests {
    /// An H4 event with a correct parameter length; for LE Meta, `subevent` leads the parameters.
    static func event(code: UInt8, subevent: UInt8?, parameters: Int) -> [UInt8] {
        let body = (subevent.map { [$0] } ?? []) + [UInt8](repeating: 0, count: parameters)
        return [0x04, code, UInt8(body.count)] + body
    }

    static func kind(of event: LinkEvent) -> LinkEventKind {
        switch event {
        case .connectionComplete(let complete): complete.enhanced ? .enhancedConnectionComplete : .connectionComplete
        case .disconnectionComplete: .disconnectionComplete
        case .completedPackets: .completedPackets
        case .connectionUpdateComplete: .connectionUpdateComplete
        case .remoteParameterRequest: .remoteParameterRequest
        }
    }

    @Test("the codes and LE subevents of the link events, and nothing else")
    func codes() {
        #expect(LinkEventKind(packet: [0x04, 0x05, 0x04, 0x00, 0x40, 0x00, 0x13]) == .disconnectionComplete)
        #expect(LinkEventKind(packet: [0x04, 0x13]) == .completedPackets, "the code is enough; lengths are not read")
        #expect(LinkEventKind(packet: [0x04, 0x3E, 0x01, 0x01]) == .connectionComplete)
        #expect(LinkEventKind(packet: [0x04, 0x3E, 0x01, 0x03]) == .connectionUpdateComplete)
        #expect(LinkEventKind(packet: [0x04, 0x3E, 0x01, 0x06]) == .remoteParameterRequest)
        #expect(LinkEventKind(packet: [0x04, 0x3E, 0x01, 0x0A]) == .enhancedConnectionComplete)
        #expect(LinkEventKind(packet: [0x04, 0x3E, 0x01, 0x02]) == nil, "an advertising report")
        #expect(LinkEventKind(packet: [0x04, 0x3E, 0x01, 0x0D]) == nil, "an extended advertising report")
        #expect(LinkEventKind(packet: [0x04, 0x3E, 0x00]) == nil, "no subevent")
        #expect(LinkEventKind(packet: [0x04, 0x0E, 0x04, 0x01, 0x03, 0x0C, 0x00]) == nil, "a Command Complete")
        #expect(LinkEventKind(packet: [0x02, 0x05, 0x00]) == nil, "ACL data, not an event")
        #expect(LinkEventKind(packet: [0x04]) == nil)
    }

    @Test("every event the link layer reads is of the kind the list gives it, and every kind is read")
    func agreesWithLinkEvent() {
        var read: Set<LinkEventKind> = []
        for code in UInt8.min...UInt8.max {
            let subevents: [UInt8?] = code == 0x3E ? (UInt8.min...UInt8.max).map(Optional.some) : [nil]
            for subevent in subevents {
                // Number of Completed Packets with no handles is one byte; the others' lengths are below 32.
                for parameters in 0..<32 {
                    let packet = Self.event(code: code, subevent: subevent, parameters: parameters)
                    guard let event = LinkEvent(packet: packet) else { continue }
                    #expect(LinkEventKind(packet: packet) == Self.kind(of: event), "\(packet)")
                    read.insert(Self.kind(of: event))
                }
            }
        }
        #expect(read == Set(LinkEventKind.allCases))
    }
}
