import WhereaboutsCore
import WhereaboutsJSON
import WhereaboutsWire

/// A small seeded generator (SplitMix64), so that every random loop can be repeated from its printed seed.
struct SplitMix64: RandomNumberGenerator {
    private var state: UInt64

    init(seed: UInt64) {
        state = seed
    }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

/// Values shared by the suites.
enum WireFixtures {
    static let siteText = "e2c56db5-dffb-48d2-b060-d0f5a71096e0"
    static let siteHex = "e2c56db5dffb48d2b060d0f5a71096e0"

    static var site: BeaconUUID {
        guard let site = BeaconUUID(siteText) else { preconditionFailure("fixture UUID must parse") }
        return site
    }

    static var topics: Topics { Topics(site: site) }

    static var agent: AgentID { agentID("hall-1") }

    static var tag: TagIdentity { .iBeacon(uuid: site, major: 1, minor: 7) }

    static let tagText = "ibeacon-e2c56db5-dffb-48d2-b060-d0f5a71096e0-1-7"

    static var eddystone: TagIdentity {
        guard
            let id = EddystoneUID(
                namespace: [0x00, 0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77, 0x88, 0x99],
                instance: [0xAA, 0xBB, 0xCC, 0xDD, 0xEE, 0xFF])
        else { preconditionFailure("fixture Eddystone id must be 10 + 6 bytes") }
        return .eddystone(id)
    }

    /// The receive time the sample batch is fresh at.
    static let now = 1_764_475_201.0

    static func agentID(_ text: String) -> AgentID {
        guard let id = AgentID(text) else { preconditionFailure("fixture agent id must be valid: \(text)") }
        return id
    }

    /// The batch of the wire contract's example.
    static var sampleBatch: ReadingBatch {
        ReadingBatch(
            agent: agent, epoch: 1_764_475_200_123, seq: 42, sent: 1_764_475_201,
            readings: [
                .init(tag: tag, time: 1_764_475_200.5, rssi: -67.5, count: 9, variance: 4.2, power: -59),
                .init(tag: eddystone, time: 1_764_475_200.75, rssi: -80, batteryMillivolts: 2950, temperature: 21.5),
            ])
    }

    /// A decoder that knows only `hall-1`, decoding as if received on hall-1's topic at `now`.
    static func decode(_ payload: [UInt8], decoder: BatchDecoder = BatchDecoder()) -> BatchDecodeResult {
        decoder.decode(payload, topicAgent: agent, knownAgents: [agent], now: now)
    }

    static func decode(_ text: String, decoder: BatchDecoder = BatchDecoder()) -> BatchDecodeResult {
        decode(Array(text.utf8), decoder: decoder)
    }

    /// Whether a topic level is in `[A-Za-z0-9_-]{1,64}`.
    static func isSafeLevel(_ level: some StringProtocol) -> Bool {
        let utf8 = level.utf8
        guard (1...64).contains(utf8.count) else { return false }
        return utf8.allSatisfy { byte in
            (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A)
                || byte == 0x5F || byte == 0x2D
        }
    }
}
