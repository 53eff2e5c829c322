import Testing

@testable import WhereaboutsCore

@Suite("Tag index table")
struct TagIndexTableTests {
    /// Identities of every kind, many sharing a UUID and differing only in major or minor, as a site's tags do.
    static func identities(_ count: Int, seed: UInt64) -> [TagIdentity] {
        var random = SplitMix64(seed: seed)
        let sites = (0..<3).compactMap { _ in
            BeaconUUID(bytes: (0..<16).map { _ in UInt8.random(in: 0...255, using: &random) })
        }
        var seen = Set<TagIdentity>()
        var result: [TagIdentity] = []
        while result.count < count {
            let tag: TagIdentity
            switch random.next() % 10 {
            case 0: tag = .address(random.next() & 0xFFFF_FFFF_FFFF)
            case 1:
                guard
                    let id = EddystoneUID(
                        namespace: (0..<10).map { _ in UInt8.random(in: 0...3, using: &random) },
                        instance: (0..<6).map { _ in UInt8.random(in: 0...3, using: &random) })
                else { continue }
                tag = .eddystone(id)
            case 2: tag = .altBeacon(uuid: sites[0], major: UInt16.random(in: 0...3, using: &random), minor: 7)
            default:
                tag = .iBeacon(
                    uuid: sites[Int(random.next() % 3)], major: UInt16.random(in: 0...5, using: &random),
                    minor: UInt16.random(in: 0...UInt16.max, using: &random))
            }
            if seen.insert(tag).inserted { result.append(tag) }
        }
        return result
    }

    @Test("every tag added is found at its index, through growth, and no other tag is found")
    func lookups() {
        let all = Self.identities(60_000, seed: 11)
        let held = Array(all.prefix(40_000))
        var table = TagIndexTable()
        for (index, tag) in held.enumerated() {
            table.insert(tag, at: index)
            // Each added tag, and the first ones, are found as the table grows around them.
            #expect(table.index(of: tag) { held[$0] == tag } == index)
            if index % 997 == 0 {
                #expect(table.index(of: held[0]) { held[$0] == held[0] } == 0)
            }
        }
        #expect(table.count == held.count)
        var wrong = 0
        for (index, tag) in held.enumerated() where table.index(of: tag, confirming: { held[$0] == tag }) != index {
            wrong += 1
        }
        #expect(wrong == 0)
        var found = 0
        for tag in all.dropFirst(held.count) where table.index(of: tag, confirming: { held[$0] == tag }) != nil {
            found += 1
        }
        #expect(found == 0)
    }

    @Test("a slot whose hash bits match but whose tag is another is passed over")
    func confirmation() {
        let tags = Self.identities(1_000, seed: 12)
        let table = TagIndexTable(tags)
        // Told that index 500 holds some other tag, the lookup must not answer 500, and must not loop.
        #expect(table.index(of: tags[500]) { $0 != 500 && tags[$0] == tags[500] } == nil)
        // Told that every slot matches, it answers the first slot it meets with the same 32 bits: the tag's own.
        #expect(table.index(of: tags[500]) { _ in true } == 500)
    }

    @Test("a table built from a list equals one filled tag by tag")
    func rebuilt() {
        let tags = Self.identities(5_000, seed: 13)
        let built = TagIndexTable(tags)
        var filled = TagIndexTable(capacity: 3)
        for (index, tag) in tags.enumerated() { filled.insert(tag, at: index) }
        for (index, tag) in tags.enumerated() {
            #expect(built.index(of: tag) { tags[$0] == tag } == index)
            #expect(filled.index(of: tag) { tags[$0] == tag } == index)
        }
    }
}
