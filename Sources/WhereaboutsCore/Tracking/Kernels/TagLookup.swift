extension TagTracker {
    /// Where each reading's tag is held and which of its links is the agent's, for readings to be taken in order
    /// (``take(_:tagIndex:link:agentIndex:)``); `places` gets one for each reading.
    ///
    /// As ``place(of:agentIndex:)`` finds them, but step by step for all the readings at once: first every tag's
    /// hash and first slot in the index table, then every tag's state, then every link. Each step's loads are
    /// independent of one another, and at 10,000 tags nearly each of them misses the cache. Taken a reading at a
    /// time, each miss waited for the one before: finding the tag and its link was about half of what a reading
    /// cost more at 10,000 tags than at 100 (`perf`, engine bench), and the cost per reading doubled. Taken
    /// together, the processor waits for a step's misses at once.
    ///
    /// The places stay right while readings are taken: tags and links are only appended then (links go only at an
    /// estimate, ``TagState/dropLinks(notHeardWithin:of:)``). A reading whose tag or link is taken before it, in the
    /// same batch, finds it again (``take(_:tagIndex:link:agentIndex:)``). An eviction moves tags: places found
    /// before one must be found again.
    func places(of readings: ArraySlice<Reading>, agentIndex: Int, into places: inout [TagPlace]) {
        places.removeAll(keepingCapacity: true)
        withUnsafeTemporaryAllocation(of: UInt64.self, capacity: readings.count) { fingerprints in
            // The hashes first: a loop of loads alone keeps many in flight, one with a hash between them does not.
            for (slot, reading) in zip(fingerprints.indices, readings) {
                fingerprints[slot] = TagIndexTable.fingerprint(of: reading.tag)
            }
            withUnsafeTemporaryAllocation(of: TagIndexTable.Probe.self, capacity: readings.count) { probes in
                for slot in probes.indices {
                    probes.initializeElement(at: slot, to: tagIndexes.firstProbe(fingerprint: fingerprints[slot]))
                }
                for (probe, reading) in zip(probes, readings) {
                    let index = tagIndexes.index(from: probe) { tags[$0].identity == reading.tag }
                    places.append(TagPlace(tagIndex: index, link: nil))
                }
                _ = probes.deinitialize()
            }
        }
        for slot in places.indices {
            guard let index = places[slot].tagIndex else { continue }
            places[slot].link = tags[index].link(of: agentIndex)
        }
    }
}
