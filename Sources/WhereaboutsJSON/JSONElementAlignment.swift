/// Pairs an edited array's elements with the original's, so that an element inserted or deleted leaves the others
/// matched to themselves (and their text kept) rather than each to its neighbour.
///
/// Equal runs at both ends are paired first; between them, a longest common subsequence of equal elements, found by
/// dynamic programming on hashes when the middle parts hold at most ``cellLimit`` pairs (2,000 × 2,000 elements:
/// 8 MB of table), else by index. The unequal elements between two common ones are paired in order, so that an
/// element the editor changed is merged with its original (and keeps its unchanged parts); the rest of them are
/// insertions or deletions.
enum JSONElementAlignment {
    /// The largest middle part (original count × edited count) aligned by longest common subsequence.
    static let cellLimit = 4_000_000

    /// For each edited element, the index of the original element paired with it, or nil for a new one. Paired
    /// indices increase.
    static func origins(original: [JSONValue], edited: [JSONValue]) -> [Int?] {
        var origins = [Int?](repeating: nil, count: edited.count)
        var prefix = 0
        while prefix < original.count, prefix < edited.count, original[prefix] == edited[prefix] {
            origins[prefix] = prefix
            prefix += 1
        }
        var suffix = 0
        while suffix < original.count - prefix, suffix < edited.count - prefix,
            original[original.count - 1 - suffix] == edited[edited.count - 1 - suffix]
        {
            origins[edited.count - 1 - suffix] = original.count - 1 - suffix
            suffix += 1
        }
        let originalMiddle = prefix..<(original.count - suffix)
        let editedMiddle = prefix..<(edited.count - suffix)
        guard !originalMiddle.isEmpty, !editedMiddle.isEmpty else { return origins }
        var common: [(original: Int, edited: Int)] = []
        if originalMiddle.count * editedMiddle.count <= cellLimit {
            let left = originalMiddle.map { fingerprint(original[$0]) }
            let right = editedMiddle.map { fingerprint(edited[$0]) }
            common = commonSubsequence(left, right).map { (prefix + $0.0, prefix + $0.1) }
        }
        // Pair the runs between common elements (and the whole middle, by index, when it was too large) in order.
        var lastOriginal = prefix
        var lastEdited = prefix
        for match in common + [(originalMiddle.upperBound, editedMiddle.upperBound)] {
            for offset in 0..<min(match.0 - lastOriginal, match.1 - lastEdited) {
                origins[lastEdited + offset] = lastOriginal + offset
            }
            if match.1 < editedMiddle.upperBound { origins[match.1] = match.0 }
            lastOriginal = match.0 + 1
            lastEdited = match.1 + 1
        }
        return origins
    }

    /// The index pairs of a longest common subsequence of `left` and `right`, in order.
    static func commonSubsequence(_ left: [Int], _ right: [Int]) -> [(Int, Int)] {
        let rows = left.count + 1
        let columns = right.count + 1
        // lengths[i * columns + j]: the length of a longest common subsequence of left[i...] and right[j...]. The
        // cell limit keeps the shorter side under 2,000, so the lengths fit 16 bits.
        var lengths = [UInt16](repeating: 0, count: rows * columns)
        for i in stride(from: left.count - 1, through: 0, by: -1) {
            for j in stride(from: right.count - 1, through: 0, by: -1) {
                lengths[i * columns + j] =
                    left[i] == right[j]
                    ? lengths[(i + 1) * columns + j + 1] + 1
                    : max(lengths[(i + 1) * columns + j], lengths[i * columns + j + 1])
            }
        }
        var pairs: [(Int, Int)] = []
        var i = 0
        var j = 0
        while i < left.count, j < right.count {
            if left[i] == right[j] {
                pairs.append((i, j))
                i += 1
                j += 1
            } else if lengths[(i + 1) * columns + j] >= lengths[i * columns + j + 1] {
                i += 1
            } else {
                j += 1
            }
        }
        return pairs
    }

    /// A hash of a value that equal values share. Two unequal values may share one too: a pair found by it is merged
    /// like any other pair, which keeps only what is really equal.
    static func fingerprint(_ value: JSONValue) -> Int {
        var hasher = Hasher()
        feed(value, into: &hasher)
        return hasher.finalize()
    }

    private static func feed(_ value: JSONValue, into hasher: inout Hasher) {
        switch value {
        case .null: hasher.combine(0)
        case .bool(let flag):
            hasher.combine(1)
            hasher.combine(flag)
        case .number(let number):
            hasher.combine(2)
            hasher.combine(number)
        case .string(let text):
            hasher.combine(3)
            hasher.combine(text)
        case .array(let elements):
            hasher.combine(4)
            hasher.combine(elements.count)
            for element in elements { feed(element, into: &hasher) }
        case .object(let object):
            hasher.combine(5)
            hasher.combine(object.members.count)
            for member in object.members {
                hasher.combine(member.key)
                feed(member.value, into: &hasher)
            }
        }
    }
}
