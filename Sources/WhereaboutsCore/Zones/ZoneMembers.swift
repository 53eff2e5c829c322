/// The tags in one zone, sorted by identity: what the zone's ``Occupancy`` lists, kept in that order as tags come
/// and go.
///
/// An occupancy is made for every zone whose members changed, with every update. Made from a set of tags, the
/// list was sorted each time: at 10,000 tags, 200 to a zone, a cost per reading that grew with the tags. Kept
/// sorted, a tag that comes or goes costs a binary search and a move of the tags after it, and the list is shared
/// with the occupancy, not made.
struct ZoneMembers: Sendable {
    /// The tags, in ascending order.
    private(set) var tags: [TagIdentity] = []

    /// Adds a tag, if it is not there yet.
    mutating func insert(_ tag: TagIdentity) {
        let position = insertionPoint(of: tag)
        guard position == tags.count || tags[position] != tag else { return }
        tags.insert(tag, at: position)
    }

    /// Removes a tag, if it is there.
    mutating func remove(_ tag: TagIdentity) {
        let position = insertionPoint(of: tag)
        guard position < tags.count, tags[position] == tag else { return }
        tags.remove(at: position)
    }

    /// The first position whose tag is not before `tag`.
    private func insertionPoint(of tag: TagIdentity) -> Int {
        var low = 0
        var high = tags.count
        while low < high {
            let middle = (low + high) / 2
            if tags[middle] < tag { low = middle + 1 } else { high = middle }
        }
        return low
    }
}
