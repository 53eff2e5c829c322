import TestFixtures
import Testing
import WhereaboutsCore
import WhereaboutsWire

/// Reliability plan S2: random identifiers never smuggle anything into a topic.
@Suite("Identifier injection", .ownThread)
struct IdentifierInjectionTests {
    /// Characters hostile identifiers are made of: the whitelist, MQTT and path syntax, controls, and Unicode
    /// look-alikes and combiners.
    static let pool: [String] = {
        var pieces = "abcXYZ019_-/+#$. ".map { String($0) } + ["..", "\u{0}", "\t", "\n", "\u{7F}"]
        pieces += ["é", "e\u{301}", "日", "🙂", "\u{202E}", "\u{200B}", "ｈ", "\u{FEFF}", "ß", "İ"]
        return pieces
    }()

    static func randomText(_ generator: inout SplitMix64) -> String {
        let length = Int.random(in: 1...300, using: &generator)
        // A quarter of the texts stay inside the whitelist so that acceptance is exercised too.
        let whitelistOnly = Int.random(in: 0..<4, using: &generator) == 0
        let alphabet = whitelistOnly ? "abcdefXYZ0123456789_-".map { String($0) } : pool
        var text = ""
        for _ in 0..<(whitelistOnly ? min(length, Int.random(in: 1...70, using: &generator)) : length) {
            text += (alphabet[Int.random(in: 0..<alphabet.count, using: &generator)])
        }
        return text
    }

    /// Near-miss tag texts: a real prefix followed by random text.
    static func randomTagText(_ generator: inout SplitMix64) -> String {
        let prefixes = [
            "ibeacon-", "altbeacon-", "eddystone-", "mac-", "ibeacon-e2c56db5-dffb-48d2-b060-d0f5a71096e0-",
        ]
        if Int.random(in: 0..<4, using: &generator) == 0 {
            // A valid identity, to exercise acceptance.
            return
                "\(prefixes[4])\(UInt16.random(in: 0...UInt16.max, using: &generator))-\(UInt16.random(in: 0...9, using: &generator))"
        }
        return prefixes[Int.random(in: 0..<prefixes.count, using: &generator)] + randomText(&generator)
    }

    func expectSafe(_ topic: Topic, levelCount: Int, sourceLocation: SourceLocation = #_sourceLocation) {
        let levels = topic.levels
        #expect(topic.name.hasPrefix(WireFixtures.topics.prefix + "/"), sourceLocation: sourceLocation)
        #expect(levels.count == levelCount, sourceLocation: sourceLocation)
        // Every level, fixed or variable, is whitelisted (the site UUID is hex and dashes).
        for level in levels {
            #expect(WireFixtures.isSafeLevel(level), "unsafe level \(level)", sourceLocation: sourceLocation)
        }
    }

    @Test("10,000 random identifiers are refused or yield whitelisted levels under the prefix")
    func randomIdentifiers() {
        let seed: UInt64 = 0x5EED_0002
        print("identifier injection seed: \(seed)")
        var generator = SplitMix64(seed: seed)
        let topics = WireFixtures.topics
        var accepted = (agents: 0, tags: 0, discovery: 0, zones: 0)
        for _ in 0..<10_000 {
            let text = Self.randomText(&generator)
            if let agent = AgentID(text) {
                accepted.agents += 1
                #expect(agent.rawValue == text)
                let readings = topics.readings(agent: agent)
                expectSafe(readings, levelCount: 6)
                expectSafe(topics.agentStatus(agent: agent), levelCount: 6)
                #expect(topics.parse(readings.name) == .readings(agent))
            } else {
                #expect(!WireFixtures.isSafeLevel(text))
            }
            let tagText = Int.random(in: 0..<2, using: &generator) == 0 ? text : Self.randomTagText(&generator)
            if let tag = TagIdentity(wire: tagText) {
                accepted.tags += 1
                expectSafe(topics.position(tag: tag), levelCount: 6)
            }
            if let id = DiscoveryID(text) {
                accepted.discovery += 1
                let topic = Topics.discovery(component: .sensor, node: id, object: id)
                #expect(topic.levels.count == 5)
                #expect(
                    topic.levels.allSatisfy {
                        !$0.isEmpty && $0.utf8.allSatisfy { $0 != 0x2F && $0 != 0x2B && $0 != 0x23 }
                    })
            }
            if let zone = UInt16(text) {
                accepted.zones += 1
                expectSafe(topics.occupancy(floor: zone, zone: zone), levelCount: 8)
            }
        }
        // The loop must exercise acceptance as well as refusal.
        #expect(accepted.agents > 500)
        #expect(accepted.discovery > 500)
        #expect(accepted.agents < 10_000)
        #expect(accepted.tags > 500)
    }

    @Test("random near-miss tag texts never crash the parser and round-trip when accepted")
    func nearMissTags() {
        let seed: UInt64 = 0x7A6_0003
        print("tag near-miss seed: \(seed)")
        var generator = SplitMix64(seed: seed)
        for _ in 0..<10_000 {
            let text = Self.randomTagText(&generator)
            if let tag = TagIdentity(wire: text) {
                #expect(TagIdentity(wire: tag.description) == tag)
                #expect(WireFixtures.isSafeLevel(tag.description))
            }
        }
    }
}
